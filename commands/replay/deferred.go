package replay

import "github.com/zuno-run/zuno/domain/tools"

// Deferred and Offer pass through too: the driver asks them which schemas a request carries
// and which tools tool_search may find (docs/mcp.md, "tool_search").
func (t recorded) Deferred() bool { return tools.IsDeferred(t.Tool) }

func (t recorded) Offer(names []string) {
	if s, ok := t.Tool.(tools.Searcher); ok {
		s.Offer(names)
	}
}
