package projections

import (
	"fmt"

	"github.com/zuno-run/zuno/events"
)

// The application's own queries of the read models live here, beside the tables they read,
// so a schema change and the queries it breaks are one change. Each takes its values as
// parameters ('?' placeholders, rebound per dialect by the read-model adapter): no id or
// directory is ever spliced into SQL text.

// SessionsQuery lists sessions newest first (zuno session list).
func SessionsQuery(limit int) (string, []any) {
	return `SELECT id, title, agent, status, parent_session_id, message_count, time_created, time_updated
		FROM session ORDER BY time_created DESC, id DESC LIMIT ?`, []any{limit}
}

// WorkspacesQuery lists every directory a session works in.
func WorkspacesQuery() string {
	return `SELECT DISTINCT directory FROM session WHERE directory IS NOT NULL AND directory <> '' ORDER BY directory`
}

// LatestSessionQuery finds the most recently active session, of those working in dir when dir
// is not "" (zuno run --continue, --session last).
func LatestSessionQuery(dir string) (string, []any) {
	if dir == "" {
		return `SELECT id FROM session ORDER BY time_updated DESC, id DESC LIMIT 1`, nil
	}
	return `SELECT id FROM session WHERE directory = ? ORDER BY time_updated DESC, id DESC LIMIT 1`, []any{dir}
}

// SessionsWithStatusQuery lists the sessions whose status is its parameter: the reaction
// runner's sweep reads the open ones (running, or left by a process that stopped) and the
// suspended ones.
const SessionsWithStatusQuery = `SELECT id FROM session WHERE status = ? ORDER BY id`

// LatestReceiptSessionQuery finds the session of the newest prompt receipt.
var LatestReceiptSessionQuery = fmt.Sprintf(
	`SELECT aggregate_id FROM event WHERE type = '%s' ORDER BY position DESC LIMIT 1`, events.TypePromptAssembled)
