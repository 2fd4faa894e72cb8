package projections

import "strings"

// SessionFilter narrows the audit console's session list (docs/console.md): an exact status
// ("" for every live session, "all" for every session, the pruned included), an exact agent,
// and text the title contains (case-insensitive, taken literally: % and _ match themselves).
type SessionFilter struct {
	Status, Agent, Title string
	// Offset and Limit page the list, newest first.
	Offset, Limit int
}

// SessionPageQuery is SessionsQuery with the console's filters and an offset. Every value is
// a '?' parameter; the LIKE pattern escapes its wildcards with '\'.
func SessionPageQuery(f SessionFilter) (string, []any) {
	var where []string
	var args []any
	switch f.Status {
	case "all":
	case "":
		where, args = append(where, "status NOT IN (?, ?)"), append(args, StatusArchived, StatusDeleted)
	default:
		where, args = append(where, "status = ?"), append(args, f.Status)
	}
	if f.Agent != "" {
		where, args = append(where, "agent = ?"), append(args, f.Agent)
	}
	if f.Title != "" {
		where = append(where, `LOWER(title) LIKE ? ESCAPE '\'`)
		args = append(args, "%"+likeEscaper.Replace(strings.ToLower(f.Title))+"%")
	}
	q := `SELECT id, title, agent, status, parent_session_id, message_count, time_created, time_updated FROM session`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	return q + " ORDER BY time_created DESC, id DESC LIMIT ? OFFSET ?", append(args, f.Limit, f.Offset)
}

// likeEscaper makes text a literal inside a LIKE pattern whose escape character is '\'.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
