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

// BenchmarkCheck is the gate's cost for one shell call: the risk gate reading the command's
// syntax tree, the layered rules, the contract and the standing approvals. The baseline, in
// the same run, is the policy's decision alone (no syntax tree).
func BenchmarkCheck(b *testing.B) {
	policy, err := permission.Resolve([]settings.Raw{{Layer: settings.Global, Source: "bench",
		JSON: json.RawMessage(`{"rules": {"read": "allow", "edit": "ask", "shell": {"*": "ask", "git *": "allow", "git push*": "deny", "rm -rf*": "deny"}}}`)}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	policy = policy.WithContract(permission.NewContract("build", []string{"shell"}))
	const command = "git diff --stat -- src/ | tail -n 5 && go test ./... 2>&1 | grep -v '^ok'"
	tool := &countTool{name: "shell"}
	g := gate.New(gate.Config{Policy: policy, Tools: []tools.Tool{tool}, Workspace: "/ws", Home: "/home/u"})
	call := tools.Call{Call: model.ToolCall{ID: "c1", Name: "shell"}, Decl: tool.Declaration(),
		Parsed: tools.Parsed{Args: command}, Policy: tool.Declaration().Policy}
	b.Run("baseline-policy", func(b *testing.B) {
		for b.Loop() {
			policy.Decide(permission.Request{Tool: "shell", Resource: command, SideEffect: true, Workspace: "/ws"})
		}
	})
	b.Run("gate", func(b *testing.B) {
		for b.Loop() {
			if v := g.Check(call); v.Block != nil {
				b.Fatal(v.Block.Message)
			}
		}
	})
}
