package tools

import (
	"encoding/json"

	"github.com/zuno-run/zuno/events"
)

// NameToolSearch searches the deferred tools' compact metadata (seeds 000, tool_search;
// docs/mcp.md). It is offered exactly when the agent is offered a deferred tool.
const NameToolSearch = "tool_search"

// Deferred is a tool whose full schema is not sent with every request (an MCP tool): it is
// offered and callable, but a request carries its schema only once a tool_search result
// activated it, from the step after that result (docs/mcp.md, "tool_search").
type Deferred interface {
	Deferred() bool
}

// IsDeferred reports whether t defers its schema.
func IsDeferred(t Tool) bool {
	d, ok := t.(Deferred)
	return ok && d.Deferred()
}

// Searcher is tool_search: the turn tells it which deferred tools the agent is offered, the
// only ones a search may find.
type Searcher interface {
	Offer(names []string)
}

// SearchDetails is a tool_search result's metadata.details: what was asked and the tools it
// activated. The turn reads Activated from the recorded result, so a later step, a later turn
// and a replay all see the same tools.
type SearchDetails struct {
	Query     string   `json:"query"`
	Activated []string `json:"activated"`
}

// Activated is the tools a settled call activated: a completed tool_search's
// details.activated; nothing for any other call.
func Activated(s events.ToolSettled) []string {
	if s.Tool != NameToolSearch || s.Outcome != string(OutcomeCompleted) || len(s.Metadata.Details) == 0 {
		return nil
	}
	var d SearchDetails
	if json.Unmarshal(s.Metadata.Details, &d) != nil {
		return nil
	}
	return d.Activated
}
