package sqlstore

import (
	"context"
	"time"

	"github.com/zuno-run/zuno/adapters/sqldb"
)

// sqliteRejoinWait is how long a SQLite batch waits for the appenders the last commit answered
// (lane.fill), while the writer writes those that have come. One writer commits at a time
// and every commit waits for its fsync (2-6 ms with 16-64 writers on the benchmark machine),
// so an append left out of a commit waits for a whole one more; answered appenders came back
// within 0.2-1.6 ms there (2 shared cores, 64 writers).
const sqliteRejoinWait = time.Millisecond

// OpenSQLite opens (creating when needed) the event log in the SQLite file at path.
func OpenSQLite(ctx context.Context, path string, opts ...Option) (*Store, error) {
	writer, err := sqldb.OpenSQLite(ctx, path, sqldb.Writer)
	if err != nil {
		return nil, err
	}
	if err := sqldb.Migrate(ctx, writer, sqldb.SQLite, sqldb.EventLog); err != nil {
		writer.Close()
		return nil, err
	}
	reader, err := sqldb.OpenSQLite(ctx, path, sqldb.ReadWrite)
	if err != nil {
		writer.Close()
		return nil, err
	}
	batcher, err := newSQLiteBatcher(ctx, writer)
	if err != nil {
		reader.Close()
		writer.Close()
		return nil, err
	}
	s := newStore(sqldb.SQLite, writer, reader, opts)
	s.commitBatch = s.commitSQLite(batcher)
	s.writeEarly = func(part []*appendRequest) { batcher.write(context.Background(), writer, part) }
	s.rejoinWait = sqliteRejoinWait
	s.closers = append(s.closers, batcher.close, reader.Close, writer.Close)
	s.start()
	return s, nil
}
