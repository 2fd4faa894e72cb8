package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/storetest"
	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/events"
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

// TestCloseDuringLoneAppends: an appender alone on its lane writes its own append
// (commitAlone); Close must wait for that write, so every append either is stored or fails
// with ErrClosed, never with the database closed under it.
func TestCloseDuringLoneAppends(t *testing.T) {
	for _, d := range []struct {
		name  string
		newDB func(t *testing.T) string
		open  func(t *testing.T, db string) *Store
	}{
		{"sqlite", sqliteFile, openSQLite},
		{"postgres", func(t *testing.T) string { return pgtest.NewDatabase(t) }, openPostgres},
	} {
		t.Run(d.name, func(t *testing.T) {
			db := d.newDB(t)
			stream := "close-" + d.name
			stored := 0
			for round := range 20 {
				s := d.open(t, db)
				done := make(chan int)
				go func() {
					n := 0
					for i := 0; ; i++ {
						ev := events.Event{ID: events.DeriveID(fmt.Sprint(round, "/", i), 0), Type: "test.happened.1", Data: []byte(`{}`)}
						if _, err := s.Append(context.Background(), stream, events.Any, ev); err != nil {
							if !errors.Is(err, ErrClosed) {
								t.Errorf("round %d append %d: %v, want ErrClosed", round, i, err)
							}
							done <- n
							return
						}
						n++
					}
				}()
				time.Sleep(time.Duration(round%5) * time.Millisecond)
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
				select {
				case n := <-done:
					stored += n
				case <-time.After(30 * time.Second):
					t.Fatalf("round %d: an append made during Close never returned", round)
				}
			}
			s := d.open(t, db)
			defer s.Close()
			got, err := s.ReadStream(context.Background(), stream, 0, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != stored {
				t.Fatalf("%d events stored, %d appends succeeded", len(got), stored)
			}
		})
	}
}
