package migrations

import (
	"fmt"
	"strconv"
	"strings"
)

// PostgreSQL advisory-lock keys (pg_advisory_xact_lock), each named once here. Go code takes
// one with XactLock; a migration names one as a placeholder, {{AppendLock}}, which Expand
// replaces with the number when the migration runs.
const (
	// MigrationLock serialises migrators: adapters/sqldb.Migrate holds it for each migration.
	MigrationLock int64 = 7365120001
	// AppendLock is held by every appending transaction until it commits (the zuno_append
	// function), so event positions are commit-ordered.
	AppendLock int64 = 7365120002
	// ReadModelLock serialises read-model writers across processes (projections), as
	// SQLite's write lock does.
	ReadModelLock int64 = 7365120003
)

// placeholders are the names a migration may use for the keys.
var placeholders = strings.NewReplacer(
	"{{MigrationLock}}", strconv.FormatInt(MigrationLock, 10),
	"{{AppendLock}}", strconv.FormatInt(AppendLock, 10),
	"{{ReadModelLock}}", strconv.FormatInt(ReadModelLock, 10),
)

// XactLock is the statement that takes key's advisory lock until the transaction ends.
func XactLock(key int64) string {
	return "SELECT pg_advisory_xact_lock(" + strconv.FormatInt(key, 10) + ")"
}

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
