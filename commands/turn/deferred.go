package turn

import (
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// deferral is which offered tools defer their schema and which a tool_search result has
// activated (seeds 000, tool_search; docs/mcp.md). The activations are read from the session's
// recorded tool_search results, so every later step, a later turn and a replay carry the same
// schemas.
type deferral struct {
	deferred  map[string]bool
	activated map[string]bool
}

// observe folds one event: a completed tool_search result activates the tools it names.
func (d *deferral) observe(p events.Payload) {
	s, ok := p.(events.ToolSettled)
	if !ok {
		return
	}
	for _, name := range tools.Activated(s) {
		if d.activated == nil {
			d.activated = map[string]bool{}
		}
		d.activated[name] = true
	}
}

// offer marks the deferred tools among the offered ones and, when there is one, offers
// tool_search beside them (from the runtime's tools, whatever the allowlist says: it is the
// only way to reach them) and tells it which tools it may find. It returns the offered tools
// with tool_search added. With tool_search disabled by the tools config, or absent, nothing is
// deferred: every offered schema is sent, as before tool_search existed.
func (d *deferral) offer(offered, runtime []Tool, config map[string]bool) []Tool {
	d.deferred = map[string]bool{}
	var names []string
	var search Tool
	for _, t := range offered {
		name := t.Declaration().Name
		if name == tools.NameToolSearch {
			search = t
		}
		if tools.IsDeferred(t) {
			d.deferred[name] = true
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return offered
	}
	if on, set := config[tools.NameToolSearch]; search == nil && (on || !set) {
		for _, t := range runtime {
			if t.Declaration().Name == tools.NameToolSearch {
				search = t
				offered = append(offered, t)
			}
		}
	}
	s, ok := search.(tools.Searcher)
	if !ok {
		d.deferred = map[string]bool{}
		return offered
	}
	s.Offer(names)
	return offered
}

// visible is the declarations a request carries: every offered tool's but a deferred one's
// that no tool_search result has activated yet.
func (d *deferral) visible(decls []prompt.ToolDecl) []prompt.ToolDecl {
	if len(d.deferred) == 0 {
		return decls
	}
	out := make([]prompt.ToolDecl, 0, len(decls))
	for _, t := range decls {
		if !d.deferred[t.Tool.Name] || d.activated[t.Tool.Name] {
			out = append(out, t)
		}
	}
	return out
}
