package projections

import (
	"fmt"

	"github.com/zuno-run/zuno/events"
)

// The application's own queries of the read models live here, beside the tables they read,
// so a schema change and the queries it breaks are one change. Each takes its values as
// parameters ('?' placeholders, rebound per dialect by the read-model adapter): no id or
// directory is ever spliced into SQL text.

// SessionsQuery lists sessions newest first (zuno session list), without the pruned ones
// unless pruned is set (docs/server.md, "Pruning a session").
func SessionsQuery(limit int, pruned bool) (string, []any) {
	if pruned {
		return `SELECT id, title, agent, status, parent_session_id, message_count, time_created, time_updated
		FROM session ORDER BY time_created DESC, id DESC LIMIT ?`, []any{limit}
	}
	return `SELECT id, title, agent, status, parent_session_id, message_count, time_created, time_updated
		FROM session WHERE status NOT IN (?, ?) ORDER BY time_created DESC, id DESC LIMIT ?`, []any{StatusArchived, StatusDeleted, limit}
}

// WorkspacesQuery lists every directory a session works in.
func WorkspacesQuery() string {
	return `SELECT DISTINCT directory FROM session WHERE directory IS NOT NULL AND directory <> '' ORDER BY directory`
}

// LatestSessionQuery finds the most recently active session, of those working in dir when dir
// is not "" (zuno run --continue, --session last).
func LatestSessionQuery(dir string) (string, []any) {
	if dir == "" {
		return `SELECT id FROM session WHERE status NOT IN (?, ?) ORDER BY time_updated DESC, id DESC LIMIT 1`,
			[]any{StatusArchived, StatusDeleted}
	}
	return `SELECT id FROM session WHERE directory = ? AND status NOT IN (?, ?) ORDER BY time_updated DESC, id DESC LIMIT 1`,
		[]any{dir, StatusArchived, StatusDeleted}
}

// SessionsWithStatusQuery lists the sessions whose status is its parameter: the reaction
// runner's sweep reads the open ones (running, or left by a process that stopped) and the
// suspended ones.
const SessionsWithStatusQuery = `SELECT id FROM session WHERE status = ? ORDER BY id`

// LatestReceiptSessionQuery finds the session of the newest prompt receipt.
var LatestReceiptSessionQuery = fmt.Sprintf(
	`SELECT aggregate_id FROM event WHERE type = '%s' ORDER BY position DESC LIMIT 1`, events.TypePromptAssembled)

// jobColumns are the agent_job columns a job is read with.
const jobColumns = `id, parent_session_id, child_session_id, agent, status, background, report_delivery,
	report_input_id, logical_key, contract, result, error, time_created`

// JobsQuery lists the jobs a parent session delegated in admission order, or every session's
// jobs when sessionID is "" (zuno job list).
func JobsQuery(sessionID string) (string, []any) {
	if sessionID == "" {
		return `SELECT ` + jobColumns + ` FROM agent_job ORDER BY time_created, id`, nil
	}
	return `SELECT ` + jobColumns + ` FROM agent_job WHERE parent_session_id = ? ORDER BY time_created, id`, []any{sessionID}
}

// JobQuery reads one job by id, its one parameter (zuno job show).
const JobQuery = `SELECT ` + jobColumns + ` FROM agent_job WHERE id = ?`

// InboxQuery lists a session's inbox, its one parameter, in the order the inputs arrived.
const InboxQuery = `SELECT input_id, session_id, job_id, status, report, replaces, message_id, time_created, time_consumed
	FROM inbox WHERE session_id = ? ORDER BY time_created, input_id`
