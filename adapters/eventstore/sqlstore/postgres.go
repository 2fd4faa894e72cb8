package sqlstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/zuno-run/zuno/adapters/sqldb"
)

// notifyChannel carries "new events committed" to listening processes. The appending process
// sends it after its commit, not zuno_append inside the transaction: a transaction that
// notifies holds a database-wide lock through its commit, one such commit at a time.
const notifyChannel = "zuno_events"

// notifyEvery bounds how often an appending process notifies the others: each NOTIFY is a
// transaction of its own, and at 2 ms a lone writer sent one for every second append (a
// round trip and a commit beside each append's). Another process's subscriber is woken at most
// this much later than the commit, small beside its poll interval.
const notifyEvery = 10 * time.Millisecond

// pgCommitters is how many lanes commit at once on Postgres: enough that the server's WAL
// flushes overlap (each carries every commit record written before it), few enough to leave
// the pool's connections to readers.
const pgCommitters = 4

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
	stmts, err := prepareAll(ctx, db, appendSQL, linkedSQL, headsSQL)
	if err != nil {
		db.Close()
		return nil, err
	}
	s := newStore(sqldb.Postgres, db, db, opts)
	s.appendStmt, s.linkedStmt, s.headsStmt = stmts[0], stmts[1], stmts[2]
	s.notifyToken = rand.Text()
	s.commitBatch = s.commitPostgres
	s.concurrentCommits = true
	s.committers = pgCommitters
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
			case n := <-listener.Notify: // nil after a reconnect: re-read too, something may be new
				if n != nil && n.Extra == s.notifyToken {
					continue // this process's own commit: its subscribers were woken by it
				}
				s.changed.broadcast()
			case <-s.stop:
				return
			}
		}
	}()
	s.notify = make(chan struct{}, 1)
	s.wg.Add(1)
	go s.notifyLoop()
	s.closers = append(s.closers, listener.Close)
	for _, st := range stmts {
		s.closers = append(s.closers, st.Close)
	}
	s.closers = append(s.closers, db.Close)
	return s, nil
}

// prepareAll prepares each query, or none.
func prepareAll(ctx context.Context, db *sqlx.DB, queries ...string) ([]*sql.Stmt, error) {
	stmts := make([]*sql.Stmt, 0, len(queries))
	for _, q := range queries {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			for _, done := range stmts {
				done.Close()
			}
			return nil, err
		}
		stmts = append(stmts, st)
	}
	return stmts, nil
}

// notifyLoop tells other processes about commits: at most one NOTIFY per notifyEvery, the
// commits in between sharing the next one (a NOTIFY costs a transaction and wakes every
// listener). A notification lost to a crash or a failed statement costs a subscriber at most
// its poll interval.
func (s *Store) notifyLoop() {
	defer s.wg.Done()
	for {
		select {
		case <-s.notify:
		case <-s.stop:
			return
		}
		// NOTIFY gives its transaction an id and so a commit record; it need not wait for that
		// record's flush (the events it announces are durable already), so it adds no WAL
		// flush of its own for the appends to wait behind.
		// No parameters: one round trip (the token is base32, safe to quote).
		_, _ = s.writer.Exec(`SELECT set_config('synchronous_commit', 'off', true), pg_notify('` + notifyChannel +
			`', '` + s.notifyToken + `')`)
		select {
		case <-time.After(notifyEvery):
		case <-s.stop:
			return
		}
	}
}
