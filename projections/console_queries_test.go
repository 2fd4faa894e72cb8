package projections_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zuno-run/zuno/projections"
)

// The console's filters come from a browser's query string: whatever they hold, the SQL text
// is one of a few fixed shapes with one '?' per argument, and the title's LIKE pattern
// matches the text literally (its %, _ and \ escaped).
func FuzzSessionPageQuery(f *testing.F) {
	for _, s := range []string{"", "plain", "50%_off", `C:\path`, "'; DROP TABLE session; --", "all", "<script>"} {
		f.Add(s, s, s, 0, 50)
	}
	f.Fuzz(func(t *testing.T, status, agent, title string, offset, limit int) {
		q, args := projections.SessionPageQuery(projections.SessionFilter{Status: status, Agent: agent, Title: title, Offset: offset, Limit: limit})
		if n := strings.Count(q, "?"); n != len(args) {
			t.Fatalf("%d placeholders, %d args: %s", n, len(args), q)
		}
		for _, v := range []string{status, agent, title} {
			if v != "" && v != "all" && strings.Contains(q, v) && !strings.Contains(sessionPageShape, v) {
				t.Fatalf("a filter value is in the SQL text: %q in %s", v, q)
			}
		}
		if title == "" {
			return
		}
		pattern := args[len(args)-3].(string)
		if !strings.HasPrefix(pattern, "%") || !strings.HasSuffix(pattern, "%") {
			t.Fatalf("pattern %q", pattern)
		}
		if got := unescapeLike(pattern[1 : len(pattern)-1]); got != strings.ToLower(title) && utf8.ValidString(title) {
			t.Fatalf("pattern %q matches %q, not %q", pattern, got, strings.ToLower(title))
		}
	})
}

// sessionPageShape is every word the query's text is made of.
const sessionPageShape = `SELECT id, title, agent, status, parent_session_id, message_count, time_created, time_updated FROM session
	WHERE status NOT IN (?, ?) AND status = ? AND agent = ? AND LOWER(title) LIKE ? ESCAPE '\' ORDER BY time_created DESC, id DESC LIMIT ? OFFSET ?`

// unescapeLike reads a LIKE pattern whose escape is '\' back into its literal text; an
// unescaped wildcard comes back as "\x00".
func unescapeLike(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteByte(p[i])
		case c == '%' || c == '_' || c == '\\':
			b.WriteByte(0)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
