package gate_test

import (
	"testing"

	"github.com/zuno-run/zuno/commands/gate"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/tools"
)

// classTool is a tool of one side-effect class.
type classTool struct {
	countTool
	class tools.SideEffect
}

func (c *classTool) Declaration() tools.Declaration {
	return tools.Declaration{Name: c.name, Policy: tools.Policy{SideEffect: c.class}}
}

// Strict mode asks before each call of a class that changes the world or delegates, and not
// before one that observes or that a human answers by design (seeds 000, "副作用分类").
func TestStrictModeAsksByClass(t *testing.T) {
	p, err := permission.Resolve(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p = p.WithMode(permission.Strict, "test")
	for _, tc := range []struct {
		class tools.SideEffect
		asks  bool
	}{
		{tools.ReadOnly, false}, {tools.UserMediated, false}, {tools.Delegating, true}, {tools.SideEffecting, true},
	} {
		tl := &classTool{countTool: countTool{name: "probe"}, class: tc.class}
		g := gate.New(gate.Config{Policy: p, Tools: []tools.Tool{tl}, Workspace: "/ws", Home: "/home/u", Interactive: true})
		v := g.Check(tools.Call{Call: model.ToolCall{ID: "c1", Name: "probe"}, Decl: tl.Declaration(),
			Parsed: tools.Parsed{Args: ""}, Policy: tl.Declaration().Policy})
		if (v.Ask != nil) != tc.asks || v.Block != nil {
			t.Errorf("%s in strict mode: ask %v block %v, want ask %v", tc.class, v.Ask != nil, v.Block, tc.asks)
		}
	}
}
