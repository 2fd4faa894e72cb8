package sqlstore

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/zuno-run/zuno/adapters/eventstore/storetest"
	"github.com/zuno-run/zuno/adapters/pgtest"
)

var _ storetest.Store = (*Store)(nil)

// perTest returns an opener that opens the same database every time it is called within one
// test, and a new one for each test.
func perTest(newDB func(t *testing.T) string, open func(t *testing.T, db string) *Store) storetest.Opener {
	var mu sync.Mutex
	dbs := map[*testing.T]string{}
	return func(t *testing.T) storetest.Store {
		db := func() string {
			mu.Lock()
			defer mu.Unlock() // newDB may t.Skip, which unwinds through here
			db, ok := dbs[t]
			if !ok {
				db = newDB(t)
				dbs[t] = db
			}
			return db
		}()
		s := open(t, db)
		t.Cleanup(func() { s.Close() })
		return s
	}
}

func sqliteFile(t *testing.T) string { return filepath.Join(t.TempDir(), "events.db") }

func openSQLite(t *testing.T, path string) *Store {
	s, err := OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func openPostgres(t *testing.T, url string) *Store {
	s, err := OpenPostgres(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSQLiteConformance(t *testing.T) {
	storetest.Run(t, perTest(sqliteFile, openSQLite))
}

func TestPostgresConformance(t *testing.T) {
	storetest.Run(t, perTest(func(t *testing.T) string { return pgtest.NewDatabase(t) }, openPostgres))
}
