package sqlstore

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/zuno-run/zuno/adapters/sqldb"
)

// notifyChannel carries "new events committed" to listening processes. The append function
// (migrations/postgres/eventlog) takes the append advisory lock, migrations.AppendLock.
const notifyChannel = "zuno_events"

// OpenPostgres opens the event log in the PostgreSQL database at dsn and listens for commits
// of other processes.
func OpenPostgres(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	db, err := sqldb.OpenPostgres(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := sqldb.Migrate(ctx, db, sqldb.Postgres, sqldb.EventLog); err != nil {
		db.Close()
		return nil, err
	}
	s := newStore(sqldb.Postgres, db, db, opts)
	s.commitBatch = s.commitPostgres
	s.start()
	listener := pq.NewListener(dsn, 10*time.Millisecond, time.Second, nil)
	if err := listener.Listen(notifyChannel); err != nil {
		s.Close()
		db.Close()
		listener.Close()
		return nil, err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			select {
			case <-listener.Notify: // nil after a reconnect: re-read too, something may be new
				s.changed.broadcast()
			case <-s.stop:
				return
			}
		}
	}()
	s.closers = append(s.closers, listener.Close, db.Close)
	return s, nil
}
