package sqlstore

import (
	"context"

	"github.com/zuno-run/zuno/adapters/sqldb"
)

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
	s.closers = append(s.closers, batcher.close, reader.Close, writer.Close)
	s.start()
	return s, nil
}
