package turn_test

import (
	"context"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// runWorkScript runs one turn of the build agent with the real plan and todo tools over the
// harness's store, the model's steps given as scripted turns.
func runWorkScript(t *testing.T, steps ...string) (turn.Outcome, int) {
	t.Helper()
	h := newHarness(t)
	p := script(t, `{"turns":[`+strings.Join(steps, ",")+`]}`)
	work := worktools.New(commands.NewHandlers(h.store, h.registry, commands.SystemClock{}, nil))
	out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "go",
		Agent:    buildAgent(tools.NamePlanGet, tools.NamePlanUpdate, tools.NameTodoGet, tools.NameTodoUpdate),
		Provider: p, ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: work})
	if err != nil {
		t.Fatal(err)
	}
	return out, p.Used()
}

func call(id, name, args string) string {
	return `{"toolCalls":[{"id":"` + id + `","name":"` + name + `","arguments":` + args + `}]}`
}

const answer = `{"text":"done"}`

// Three consecutive steps whose only call is plan_get over unchanged state end the turn with
// the typed stagnant_tool_loop: no fourth request is sent.
func TestStagnantToolLoopStopsTheTurn(t *testing.T) {
	out, used := runWorkScript(t, call("g1", "plan_get", `{}`), call("g2", "plan_get", `{}`), call("g3", "plan_get", `{}`),
		call("g4", "plan_get", `{}`), answer)
	if out.Reason != events.FinishFailed || out.Error == nil || out.Error.Code != turn.CodeStagnantToolLoop || out.Steps != 3 || used != 3 {
		t.Fatalf("outcome %+v (error %+v), %d requests", out, out.Error, used)
	}
}

// A real mutation changes the fingerprint and resets the count; so does a step that calls
// anything else; and two different read tools are two observations, not one loop.
func TestStagnantToolLoopResets(t *testing.T) {
	create := `{"action":"create","title":"T","steps":[{"title":"a"}]}`
	cases := map[string][]string{
		"a mutation between the reads": {call("g1", "plan_get", `{}`), call("g2", "plan_get", `{}`), call("u1", "plan_update", create),
			call("g3", "plan_get", `{}`), call("g4", "plan_get", `{}`), answer},
		"alternating read tools": {call("g1", "plan_get", `{}`), call("t1", "todo_get", `{}`), call("g2", "plan_get", `{}`),
			call("t2", "todo_get", `{}`), answer},
		"two calls in one step": {call("g1", "plan_get", `{}`), call("g2", "plan_get", `{}`),
			`{"toolCalls":[{"id":"g3","name":"plan_get","arguments":{}},{"id":"t3","name":"todo_get","arguments":{}}]}`,
			call("g4", "plan_get", `{}`), call("g5", "plan_get", `{}`), answer},
	}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) {
			out, used := runWorkScript(t, steps...)
			if out.Reason != events.FinishCompleted || used != len(steps) {
				t.Fatalf("outcome %+v (error %+v), %d of %d requests", out, out.Error, used, len(steps))
			}
		})
	}
}
