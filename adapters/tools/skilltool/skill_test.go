package skilltool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/skilltool"
	"github.com/zuno-run/zuno/domain/skills"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

func skill(name, body string) skills.Skill {
	return skills.Skill{Name: name, Description: "d", Scope: skills.ScopeUser, Source: "/u/" + name + "/SKILL.md", SHA256: strings.Repeat("a", 64), Body: body}
}

func call(t *testing.T, tool *skilltool.Tool, args string) tools.Result {
	t.Helper()
	p, err := tool.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	return tool.Execute(context.Background(), tools.Invocation{SessionID: "s", CallID: "c", Parsed: p})
}

// Loaded bodies share the selected budget with the required ones and with what earlier turns
// of the session loaded (seeds 002 §5): a load that would pass it is refused, none is cut.
func TestSkillToolBudget(t *testing.T) {
	cat := skills.NewCatalog([]skills.Skill{skill("a", strings.Repeat("x", 400)), skill("b", strings.Repeat("y", 400)),
		skill("c", strings.Repeat("z", 400)), skill("req", strings.Repeat("r", 400))}, nil)
	// Each selected text is its ~40-token header and 100 tokens of body.
	tool := skilltool.New(cat, skills.Budgets{Selected: 430, Catalog: 4000}, []string{"req"}, nil)
	r := call(t, tool, `{"name": "a"}`)
	if r.Outcome != tools.OutcomeCompleted || !strings.Contains(r.Output, strings.Repeat("x", 400)) {
		t.Fatalf("a: %+v", r)
	}
	var d skilltool.Details
	if err := json.Unmarshal(r.Metadata.Details, &d); err != nil || d.Source != "/u/a/SKILL.md" || len(d.SHA256) != 64 || d.Tokens == 0 {
		t.Fatalf("details %s", r.Metadata.Details)
	}
	if r := call(t, tool, `{"name": "req"}`); r.Outcome != tools.OutcomeCompleted || !strings.Contains(r.Output, "already selected") {
		t.Fatalf("a required skill is not loaded twice: %+v", r)
	}
	if r := call(t, tool, `{"name": "a"}`); r.Outcome != tools.OutcomeCompleted {
		t.Fatalf("loading a loaded skill again costs nothing more: %+v", r)
	}
	// req + a + b fit; c then does not.
	if r := call(t, tool, `{"name": "b"}`); r.Outcome != tools.OutcomeCompleted {
		t.Fatalf("b: %+v", r)
	}
	if r := call(t, tool, `{"name": "c"}`); r.ErrorCode != skills.CodeSkillBudget {
		t.Fatalf("c over the budget: %+v", r)
	}
	// A new turn's tool restores what the session loaded.
	next := skilltool.New(cat, skills.Budgets{Selected: 430, Catalog: 4000}, []string{"req"}, nil)
	next.Restore(events.ToolSettled{Tool: tools.NameSkill, Outcome: string(tools.OutcomeCompleted), Metadata: events.ToolMetadata{Details: json.RawMessage(`{"name":"a","source":"/u/a/SKILL.md","tokens":140}`)}})
	next.Restore(events.ToolSettled{Tool: tools.NameSkill, Outcome: string(tools.OutcomeCompleted), Metadata: events.ToolMetadata{Details: json.RawMessage(`{"name":"b","source":"/u/b/SKILL.md","tokens":140}`)}})
	if r := call(t, next, `{"name": "c"}`); r.ErrorCode != skills.CodeSkillBudget {
		t.Fatalf("restored loads count: %+v", r)
	}
	for _, bad := range []string{`{}`, `{"name": ""}`, `{"name": "a", "extra": 1}`, `{"name": 1}`} {
		if _, err := tool.Validate(json.RawMessage(bad)); err == nil {
			t.Errorf("%s validated", bad)
		}
	}
}

// "New loads or restored history over the budget fail before the provider request": a session
// whose earlier loads no longer fit today's budget is refused when its results are restored.
func TestSkillToolRestoredOverBudget(t *testing.T) {
	cat := skills.NewCatalog([]skills.Skill{skill("a", strings.Repeat("x", 400)), skill("req", strings.Repeat("r", 400))}, nil)
	restored := events.ToolSettled{Tool: tools.NameSkill, Outcome: string(tools.OutcomeCompleted),
		Metadata: events.ToolMetadata{Details: json.RawMessage(`{"name":"a","source":"/u/a/SKILL.md","tokens":140}`)}}
	fits := skilltool.New(cat, skills.Budgets{Selected: 280, Catalog: 4000}, []string{"req"}, nil)
	fits.Restore(restored)
	if err := fits.CheckRestored(); err != nil {
		t.Fatalf("at the budget: %v", err)
	}
	over := skilltool.New(cat, skills.Budgets{Selected: 279, Catalog: 4000}, []string{"req"}, nil)
	over.Restore(restored)
	if err := over.CheckRestored(); err == nil || !strings.Contains(err.Error(), skills.CodeSkillBudget) {
		t.Fatalf("a token over: %v", err)
	}
}
