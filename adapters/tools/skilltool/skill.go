// Package skilltool is the skill tool (seeds 000: "discover and load reusable instructions";
// docs/skills.md): it loads one skill of the session's catalogue by name, and by source where
// a name is held twice, returning its body. Every body loaded in a session shares the
// selected-skill budget with the agent's requiredSkills (seeds 002 §5): a load that would pass
// it is refused, nothing truncated. A skill grants no tool and no permission.
package skilltool

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/skills"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// policy: a skill lookup inspects and may be retried (seeds 000, "Replay policy").
var policy = tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}

var argsSchema = schema.MustCompile(tools.NameSkill, schema.Compact(`{
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1, "description": "The skill's name, as the skills catalogue lists it."},
    "source": {"type": "string", "description": "Only where the catalogue lists a name twice: the scope it shows (user or project) or the SKILL.md path."}
  },
  "required": ["name"],
  "additionalProperties": false
}`), schema.Rules{Example: `{"name": "go-review"}`, StrictText: true, NullIsAbsent: true})

// Details are the facts a load records on its settled event (metadata.details): which file,
// its digest and what it cost, so the session's later turns and an auditor know what was
// loaded.
type Details struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	SHA256 string `json:"sha256"`
	Tokens int64  `json:"tokens"`
}

// Tool is the skill tool over one session's catalogue.
type Tool struct {
	catalog skills.Catalog
	budgets skills.Budgets
	// required are the agent's selected skills' sources and their tokens, already in the prompt.
	required map[string]int64

	// capped puts a result through the session's tool_output caps (toolset.Set.CapResult).
	capped Capper

	mu     sync.Mutex
	loaded map[string]int64 // source -> tokens, loaded by this tool in the session
}

// Capper puts a result through the session's output caps: over a cap, the output is stored
// as the call's artifact and the model gets the notice (docs/tools.md, "Output caps").
type Capper func(callID, tool string, r tools.Result) tools.Result

// New returns the tool: catalog is the session's, budgets the turn's, required the agent's
// requiredSkills (resolved against catalog; one that does not resolve was refused earlier).
func New(catalog skills.Catalog, budgets skills.Budgets, required []string, capped Capper) *Tool {
	if capped == nil {
		capped = func(_, _ string, r tools.Result) tools.Result { return r }
	}
	t := &Tool{catalog: catalog, budgets: budgets, required: map[string]int64{}, loaded: map[string]int64{}, capped: capped}
	for _, ref := range required {
		if s, err := catalog.Find(ref); err == nil {
			t.required[s.Source] = tokens(s)
		}
	}
	return t
}

func tokens(s skills.Skill) int64 {
	return int64(prompt.EstimateTokens(prompt.SelectedSkillText(prompt.SelectedSkill{Name: s.Name, Source: s.Source, Body: s.Body})))
}

func (t *Tool) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameSkill, Policy: policy}
}

func (t *Tool) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameSkill, Schema: argsSchema.Raw(), Description: "Load a skill's instructions by name, " +
		"from the skills catalogue of this prompt. Load one only when its description matches the task; loaded skills share " +
		"one token budget. A skill grants no tool and no permission."}
}

func (t *Tool) WritesWorkspace() bool { return false }

type args struct{ Name, Source string }

func (t *Tool) Validate(raw json.RawMessage) (tools.Parsed, error) {
	v, err := argsSchema.Validate(raw)
	if err != nil {
		return tools.Parsed{}, err
	}
	var a args
	a.Name, _ = v["name"].(string)
	a.Source, _ = v["source"].(string)
	return tools.Parsed{Args: a}, nil
}

// Restore counts the skills an earlier turn of the session loaded against the budget.
func (t *Tool) Restore(s events.ToolSettled) {
	if s.Tool != tools.NameSkill || s.Outcome != string(tools.OutcomeCompleted) {
		return
	}
	var d Details
	if json.Unmarshal(s.Metadata.Details, &d) == nil && d.Source != "" {
		t.mu.Lock()
		t.loaded[d.Source] = d.Tokens
		t.mu.Unlock()
	}
}

// CheckRestored refuses a turn whose session already loaded more than today's budget allows
// with the agent's required skills (a budget lowered since, say): seeds 002 §5 fails a
// restored selection over its budget before the request rather than dropping a skill.
func (t *Tool) CheckRestored() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	total := int64(0)
	for _, n := range t.required {
		total += n
	}
	for src, n := range t.loaded {
		if _, dup := t.required[src]; !dup {
			total += n
		}
	}
	return t.budgets.CheckSelected(total, "the skills this session loaded, with the required ones,")
}

func (t *Tool) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	return t.capped(inv.CallID, tools.NameSkill, t.execute(ctx, inv))
}

func (t *Tool) execute(ctx context.Context, inv tools.Invocation) tools.Result {
	a, ok := inv.Args.(args)
	if !ok {
		return tools.NotValidated(inv)
	}
	if err := ctx.Err(); err != nil {
		return tools.Result{Outcome: tools.OutcomeCancelled, ErrorCode: "cancelled", Output: "The call was cancelled before it started; nothing was loaded."}
	}
	ref := a.Name
	if a.Source != "" {
		ref += "@" + a.Source
	}
	s, err := t.catalog.Find(ref)
	if err != nil {
		return refusal(err)
	}
	cost := tokens(s)
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, in := t.required[s.Source]; in {
		return completed(s, cost, "Skill "+s.Name+" is already selected: its instructions are in this prompt (source "+s.Source+").")
	}
	if _, in := t.loaded[s.Source]; !in {
		total := cost
		for _, n := range t.required {
			total += n
		}
		for _, n := range t.loaded {
			total += n
		}
		if err := t.budgets.CheckSelected(total, fmt.Sprintf("with %s, the selected skills", s.Name)); err != nil {
			return refusal(err)
		}
		t.loaded[s.Source] = cost
	}
	return completed(s, cost, prompt.SelectedSkillText(prompt.SelectedSkill{Name: s.Name, Source: s.Source, Body: s.Body}))
}

func completed(s skills.Skill, cost int64, text string) tools.Result {
	d, _ := json.Marshal(Details{Name: s.Name, Source: s.Source, SHA256: s.SHA256, Tokens: cost})
	return tools.Result{Outcome: tools.OutcomeCompleted, Output: text, Metadata: tools.Metadata{Details: d}}
}

func refusal(err error) tools.Result {
	out := err.Error()
	if e, ok := err.(*domain.Error); ok && len(e.Valid) > 0 {
		out += "\nValid: " + fmt.Sprint(slices.Clone(e.Valid))
	}
	return tools.Result{Outcome: tools.OutcomeError, ErrorCode: domain.CodeOf(err), Output: out}
}
