package migrations

import (
	"fmt"
	"strconv"
	"strings"
)

// PostgreSQL advisory-lock keys (pg_advisory_xact_lock) that old migrations name, each named
// once here: a migration names one as a placeholder, {{AppendLock}}, which Expand replaces
// with the number when the migration runs.
//
// Any role may take any advisory key (where it may call the functions: the reader role of
// `zuno db` may not, migrations/postgres/readmodel/0015), so nothing Zuno waits for is an
// advisory key any more: appends and projections take table locks (issue 14), and migrators
// lock schema_migration (issue 30; adapters/sqldb.LockMigrations), which was key 7365120001.
const (
	// AppendLock was held by appending transactions until migration
	// postgres/eventlog/0003 replaced it with a table lock; 0002 still names it.
	AppendLock int64 = 7365120002
	// ReadModelLock was the projections' key before ReadModelWriteLock.
	ReadModelLock int64 = 7365120003
)

// ReadModelWriteLock serialises read-model writers across processes (projections), as
// SQLite's write lock does: a table lock the reader role holds no privilege for
// (postgres/readmodel/0006).
const ReadModelWriteLock = "LOCK TABLE read_model_write_lock IN EXCLUSIVE MODE"

// placeholders are the names a migration may use for the keys.
var placeholders = strings.NewReplacer(
	"{{AppendLock}}", strconv.FormatInt(AppendLock, 10),
	"{{ReadModelLock}}", strconv.FormatInt(ReadModelLock, 10),
)

// Expand returns a migration's SQL with its placeholders replaced. A "{{" left over is a
// placeholder this package does not know: an error, before any SQL runs.
func Expand(name, body string) (string, error) {
	out := placeholders.Replace(body)
	if i := strings.Index(out, "{{"); i >= 0 {
		end := min(len(out), i+40)
		return "", fmt.Errorf("migration %s: unknown placeholder at %q", name, out[i:end])
	}
	return out, nil
}
