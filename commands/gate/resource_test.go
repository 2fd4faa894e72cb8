package gate_test

import (
	"encoding/json"
	"testing"

	"github.com/zuno-run/zuno/commands/gate"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/domain/tools"
)

// resourceTool touches a resource that is neither a path nor a command (webfetch's URL).
type resourceTool struct{ countTool }

func (r *resourceTool) Subjects(p tools.Parsed) ([]tools.Subject, error) {
	u := p.Args.(string)
	return []tools.Subject{{Resource: u, Always: "https://docs.example/*"}}, nil
}

// A Subject's Resource is matched against the tool's own key's patterns as written, and an
// always answer to its ask saves the Subject's Always pattern.
func TestResourceSubjects(t *testing.T) {
	p, err := permission.Resolve([]settings.Raw{{Layer: settings.Global, Source: "test", JSON: json.RawMessage(
		`{"rules": {"webfetch": {"*": "ask", "https://docs.example/*": "allow", "https://docs.example/private/*": "deny"}}}`)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl := &resourceTool{countTool{name: "webfetch"}}
	g := gate.New(gate.Config{Policy: p, Tools: []tools.Tool{tl}, Workspace: "/ws", Home: "/home/u", Interactive: true})
	check := func(u string) (action, resource string, ask bool, grants int) {
		v := g.Check(tools.Call{Call: model.ToolCall{ID: "c1", Name: "webfetch"}, Decl: tl.Declaration(),
			Parsed: tools.Parsed{Args: u}, Policy: tools.Policy{SideEffect: tools.ReadOnly}})
		return v.Decision.Action, v.Decision.Resource, v.Ask != nil, len(v.Grants)
	}
	if a, r, _, _ := check("https://docs.example/guide"); a != "allow" || r != "https://docs.example/guide" {
		t.Fatalf("allowed URL: %s %s", a, r)
	}
	if a, _, _, _ := check("https://docs.example/private/keys"); a != "deny" {
		t.Fatalf("denied URL: %s", a)
	}
	a, _, ask, grants := check("https://other.example/")
	if a != "ask" || !ask || grants != 1 {
		t.Fatalf("other URL: %s ask %v grants %d", a, ask, grants)
	}
	v := g.Check(tools.Call{Call: model.ToolCall{ID: "c1", Name: "webfetch"}, Decl: tl.Declaration(),
		Parsed: tools.Parsed{Args: "https://other.example/"}, Policy: tools.Policy{SideEffect: tools.ReadOnly}})
	if v.Ask.Always != "https://docs.example/*" {
		t.Fatalf("always saves %q", v.Ask.Always)
	}
}
