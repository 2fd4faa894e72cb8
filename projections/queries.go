package projections

import (
	"fmt"

	"github.com/zuno-run/zuno/events"
)

// The application's own queries of the read models live here, beside the tables they read,
// so a schema change and the queries it breaks are one change.

// SessionsQuery lists sessions newest first (zuno session list).
func SessionsQuery(limit int) string {
	return fmt.Sprintf(`SELECT id, title, agent, parent_session_id, message_count, time_created, time_updated
		FROM session ORDER BY time_created DESC, id DESC LIMIT %d`, limit)
}

// LatestReceiptSessionQuery finds the session of the newest prompt receipt.
var LatestReceiptSessionQuery = fmt.Sprintf(
	`SELECT aggregate_id FROM event WHERE type = '%s' ORDER BY position DESC LIMIT 1`, events.TypePromptAssembled)
