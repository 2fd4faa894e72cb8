package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	dtools "github.com/zuno-run/zuno/domain/tools"
)

// Deferred: an MCP tool's schema is sent only once tool_search activated it (docs/mcp.md,
// "tool_search").
func (t *Tool) Deferred() bool { return true }

// MaxMatches is the most tools one search activates.
const MaxMatches = 10

var searchSchema = schema.MustCompile(dtools.NameToolSearch, schema.Compact(`{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Words naming what the tool does or its server"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 10, "description": "Most tools to activate (default 5)"}
  },
  "required": ["query"],
  "additionalProperties": false
}`), schema.Rules{})

// ToolSearch is tool_search over a pool's tools: it searches their compact metadata (name,
// server, the first line of the description) and activates the matches, whose schemas the
// requests carry from the next step (the turn reads the activation from the recorded result).
type ToolSearch struct {
	pool *Pool
	mu   sync.Mutex
	// offered are the deferred tools the agent is offered (the turn's Offer): the only ones a
	// search may find.
	offered map[string]bool
}

// NewToolSearch is tool_search over pool (nil: no server, nothing to find).
func NewToolSearch(pool *Pool) *ToolSearch { return &ToolSearch{pool: pool} }

func (s *ToolSearch) Declaration() dtools.Declaration {
	return dtools.Declaration{Name: dtools.NameToolSearch,
		Policy: dtools.Policy{SideEffect: dtools.ReadOnly, Replay: dtools.Safe, Concurrency: dtools.ParallelSafe}}
}

func (s *ToolSearch) Spec() dtools.Spec {
	return dtools.Spec{Name: dtools.NameToolSearch, Schema: searchSchema.Raw(),
		Description: "Find external (MCP) tools by what they do. Their schemas are not shown until found: the matches become callable tools from your next step."}
}

func (s *ToolSearch) WritesWorkspace() bool { return false }

// Offer sets the tools a search may find.
func (s *ToolSearch) Offer(names []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offered = map[string]bool{}
	for _, n := range names {
		s.offered[n] = true
	}
}

type searchArgs struct {
	Query string `json:"query"`
	Limit int    `json:"limit"`
}

func (s *ToolSearch) Validate(args json.RawMessage) (dtools.Parsed, error) {
	var a searchArgs
	if err := searchSchema.Decode(args, &a); err != nil {
		return dtools.Parsed{}, err
	}
	if a.Limit == 0 {
		a.Limit = 5
	}
	return dtools.Parsed{Args: a}, nil
}

// Execute ranks the offered tools by the query's words: a word in the tool's name counts two,
// in its description one; ties go by name. Only tools with a score are returned.
func (s *ToolSearch) Execute(_ context.Context, inv dtools.Invocation) dtools.Result {
	a, ok := inv.Args.(searchArgs)
	if !ok {
		return dtools.NotValidated(inv)
	}
	type hit struct {
		t     *Tool
		score int
	}
	var hits []hit
	words := strings.Fields(strings.ToLower(a.Query))
	s.mu.Lock()
	for _, tl := range s.pool.Tools() {
		t, ok := tl.(*Tool)
		if !ok || !s.offered[t.name] {
			continue
		}
		if n := score(t, words); n > 0 {
			hits = append(hits, hit{t, n})
		}
	}
	s.mu.Unlock()
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].t.name < hits[j].t.name
	})
	if len(hits) > a.Limit {
		hits = hits[:a.Limit]
	}
	d := dtools.SearchDetails{Query: a.Query, Activated: []string{}}
	var b strings.Builder
	if len(hits) == 0 {
		b.WriteString("No tool matches. Try other words: a tool's name, its server or what it does.")
	} else {
		fmt.Fprintf(&b, "%d tools found; call them from your next step:\n", len(hits))
	}
	for _, h := range hits {
		d.Activated = append(d.Activated, h.t.name)
		fmt.Fprintf(&b, "%s (server %s): %s\n", h.t.name, h.t.server, firstLine(h.t.description))
	}
	details, _ := json.Marshal(d)
	return dtools.Result{Outcome: dtools.OutcomeCompleted, Output: strings.TrimRight(b.String(), "\n"),
		Metadata: dtools.Metadata{Details: details}}
}

func score(t *Tool, words []string) int {
	name := strings.ToLower(t.name + " " + t.remote + " " + t.server)
	desc := strings.ToLower(firstLine(t.description))
	n := 0
	for _, w := range words {
		if strings.Contains(name, w) {
			n += 2
		} else if strings.Contains(desc, w) {
			n++
		}
	}
	return n
}

// firstLine is the compact metadata of a description: its first line, at most 200 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return clip(s, 200)
}
