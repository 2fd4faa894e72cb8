package turn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/adapters/provider/scripted"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/gate"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// stepClock records when each provider request starts, so the cost of one step (request,
// tool call, results, the next prompt) is the gap between consecutive starts.
type stepClock struct {
	turn.NopObserver
	starts []time.Time
	cpu    []time.Duration
}

func (c *stepClock) Recorded(_ events.Recorded, p events.Payload) {
	if r, ok := p.(events.ProviderRequest); ok && r.Status == events.RequestStarted {
		c.starts = append(c.starts, time.Now())
		c.cpu = append(c.cpu, processCPU())
	}
}

// processCPU is the CPU time this process has used (user and system, every thread), which
// counts the runtime's own work and not the time it waits for the disk to sync.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStepOverhead runs one session of 1,000 tool steps with the scripted provider on a
// real SQLite store and reports the median wall time of the steps ending at 10, 100 and 1,000,
// and the process CPU time per step over the 50 steps ending at 100 and at 1,000 and over the
// ten steps 2..11 (getrusage counts microseconds, fine enough for ten steps of about a
// millisecond each). The baseline is the early step of the same run: the runtime must
// not reload or re-record the whole history per step, so step 1,000 should cost about what an
// early step does. Wall time is dominated by two fsyncs per step and varies with the disk;
// CPU time is the runtime's own work.
//
// The gated run puts every call through the permission gate (a layered policy with ordered
// shell rules, the agent's contract, the risk gate reading the command's syntax tree, the
// standing approvals); the ungated run, in the same process, is its baseline.
//
// The openai run speaks Chat Completions through the real OpenAI adapter to a local server
// (chatServer) that numbers every response's call call_0, so the HTTP, SSE and JSON cost of a
// step — the whole conversation encoded and sent each step — and the runtime's call ids are
// in its figure; the scripted ungated run is its baseline. The server runs in this process,
// so the CPU figures include its share (reading the request, writing the stream).
func BenchmarkStepOverhead(b *testing.B) {
	b.Run("ungated", func(b *testing.B) { stepOverhead(b, false, scriptedSteps) })
	b.Run("gated", func(b *testing.B) { stepOverhead(b, true, scriptedSteps) })
	b.Run("openai", func(b *testing.B) { stepOverhead(b, false, chatServerSteps) })
}

const benchSteps = 1000

func scriptedSteps(b *testing.B) model.Provider {
	var turns []scripted.Turn
	for i := range benchSteps {
		turns = append(turns, scripted.Turn{Text: "step", ToolCalls: []scripted.ToolCall{{ID: fmt.Sprintf("call_%04d", i), Name: "look",
			Arguments: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))}}})
	}
	turns = append(turns, scripted.Turn{Text: "done"})
	p, err := scripted.New(scripted.Script{Turns: turns})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// chatServerSteps is the OpenAI adapter on a local Chat Completions server answering
// benchSteps tool calls, then "done".
func chatServerSteps(b *testing.B) model.Provider {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		i := n.Add(1) - 1
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(choice string) {
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"bench\",\"choices\":[%s]}\n\n", i, choice)
		}
		chunk(`{"index":0,"delta":{"role":"assistant","content":"step"},"finish_reason":null}`)
		if i < benchSteps {
			chunk(fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"look","arguments":"{\"n\":%d}"}}]},"finish_reason":null}`, i))
			chunk(`{"index":0,"delta":{},"finish_reason":"tool_calls"}`)
		} else {
			chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`)
		}
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"bench\",\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":5,\"total_tokens\":105}}\n\ndata: [DONE]\n\n", i)
	}))
	b.Cleanup(srv.Close)
	return openai.New(openai.Options{Name: "bench", BaseURL: srv.URL + "/v1", APIKey: "none", IgnoreEnv: true})
}

// commandTool is the probe tool telling the gate it runs a shell command.
type commandTool struct{ *probeTool }

func (commandTool) Subjects(tools.Parsed) ([]tools.Subject, error) {
	return []tools.Subject{{Command: "git diff --stat -- src/ | tail -n 5"}}, nil
}

func benchGate(b *testing.B, tool turn.Tool) turn.Gate {
	policy, err := permission.Resolve([]settings.Raw{{Layer: settings.Global, Source: "bench",
		JSON: json.RawMessage(`{"rules": {"read": "allow", "edit": "ask", "look": {"*": "ask", "git *": "allow", "git push*": "deny", "rm -rf*": "deny"}}}`)}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	policy = policy.WithContract(permission.NewContract("build", []string{"look"}))
	return gate.New(gate.Config{Policy: policy, Standing: &permission.Standing{}, Tools: []tools.Tool{tool}, Workspace: "/ws", Home: "/home/u"})
}

func stepOverhead(b *testing.B, gated bool, provider func(*testing.B) model.Provider) {
	const steps = benchSteps
	at := map[int][]float64{10: nil, 100: nil, 1000: nil}
	cpu := map[int]float64{}
	for b.Loop() {
		b.StopTimer()
		ctx := context.Background()
		store, err := sqlstore.OpenSQLite(ctx, filepath.Join(b.TempDir(), "events.db"))
		if err != nil {
			b.Fatal(err)
		}
		reg := events.NewRegistry(events.AllPayloads()...)
		handlers := commands.NewHandlers(store, reg, commands.SystemClock{}, nil)
		if _, err := handlers.CreateSession(ctx, &commands.CreateSession{Meta: commands.Meta{CommandID: "c", Actor: "user"},
			Create: sessionCreate("ses_bench")}); err != nil {
			b.Fatal(err)
		}
		p := provider(b)
		var look turn.Tool = &probeTool{name: "look", policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}}
		var g turn.Gate
		if gated {
			look = commandTool{look.(*probeTool)}
			g = benchGate(b, look)
		}
		clock := &stepClock{}
		d := &turn.Driver{Store: store, Registry: reg, Clock: commands.SystemClock{}}
		b.StartTimer()
		out, err := d.Run(ctx, turn.Request{Meta: turnMeta(), SessionID: "ses_bench", Text: "loop", Agent: buildAgent("look"), Provider: p,
			ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: []turn.Tool{look}, Observer: clock, Gate: g})
		b.StopTimer()
		if err != nil || out.Steps != steps+1 {
			b.Fatalf("outcome %+v %v", out, err)
		}
		for k := range at {
			// step k spans starts[k-1] → starts[k]; take the ten steps ending at k.
			for i := k - 9; i <= k; i++ {
				at[k] = append(at[k], float64(clock.starts[i].Sub(clock.starts[i-1]).Nanoseconds()))
			}
			// CPU over a wider window, where the GC's share of the steps evens out: 50 steps
			// ending at k; at 10, the ten steps 2..11 (step 1 also opens the turn).
			if k >= 100 {
				cpu[k] += float64(clock.cpu[k]-clock.cpu[k-50]) / 50
			} else {
				cpu[k] += float64(clock.cpu[k+1]-clock.cpu[k-9]) / 10
			}
		}
		store.Close()
		b.StartTimer()
	}
	med := func(xs []float64) float64 { sort.Float64s(xs); return xs[len(xs)/2] }
	m10, m100, m1000 := med(at[10]), med(at[100]), med(at[1000])
	b.ReportMetric(m10/1e3, "µs/step@10")
	b.ReportMetric(m100/1e3, "µs/step@100")
	b.ReportMetric(m1000/1e3, "µs/step@1000")
	b.ReportMetric(m1000/m10, "wall-ratio@1000/10")
	n := float64(b.N)
	b.ReportMetric(cpu[10]/n/1e3, "cpu-µs/step@10")
	b.ReportMetric(cpu[100]/n/1e3, "cpu-µs/step@100")
	b.ReportMetric(cpu[1000]/n/1e3, "cpu-µs/step@1000")
	b.ReportMetric(cpu[1000]/cpu[100], "cpu-ratio@1000/100")
	b.ReportMetric(cpu[1000]/cpu[10], "cpu-ratio@1000/10")
}

// waitTool is a read-only, parallel-safe tool whose call waits for the milliseconds it is
// given, as a call waiting on I/O does.
type waitTool struct{}

func (waitTool) Declaration() tools.Declaration {
	return tools.Declaration{Name: "wait", Policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}}
}
func (waitTool) Spec() tools.Spec      { return tools.Spec{Name: "wait", Description: "waits"} }
func (waitTool) WritesWorkspace() bool { return false }
func (waitTool) Validate(args json.RawMessage) (tools.Parsed, error) {
	var v struct{ Ms int }
	err := json.Unmarshal(args, &v)
	return tools.Parsed{Args: v.Ms}, err
}
func (waitTool) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	ms := inv.Args.(int)
	select {
	case <-time.After(time.Duration(ms) * time.Millisecond):
	case <-ctx.Done():
	}
	return tools.Result{Outcome: tools.OutcomeCompleted, Output: "waited"}
}

// BenchmarkParallelReadOnly runs one model turn that asks for 8 read-only calls waiting 10,
// 20, ... 80 ms (sum 360 ms, slowest 80 ms), with concurrency.tool_calls 8 and, as the
// baseline in the same run, 1. With 8 the step should take about the slowest call, not the sum.
func BenchmarkParallelReadOnly(b *testing.B) {
	var calls []scripted.ToolCall
	for i := range 8 {
		calls = append(calls, scripted.ToolCall{ID: fmt.Sprintf("w%d", i), Name: "wait", Arguments: json.RawMessage(fmt.Sprintf(`{"ms":%d}`, 10*(i+1)))})
	}
	for _, limit := range []int{8, 1} {
		b.Run(fmt.Sprintf("tool_calls=%d", limit), func(b *testing.B) {
			ctx := context.Background()
			store, err := sqlstore.OpenSQLite(ctx, filepath.Join(b.TempDir(), "events.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			reg := events.NewRegistry(events.AllPayloads()...)
			handlers := commands.NewHandlers(store, reg, commands.SystemClock{}, nil)
			d := &turn.Driver{Store: store, Registry: reg, Clock: commands.SystemClock{}}
			n := 0
			for b.Loop() {
				b.StopTimer()
				n++
				sid := fmt.Sprintf("ses_%d", n)
				if _, err := handlers.CreateSession(ctx, &commands.CreateSession{Meta: commands.Meta{CommandID: sid, Actor: "user"},
					Create: sessionCreate(sid)}); err != nil {
					b.Fatal(err)
				}
				p, err := scripted.New(scripted.Script{Turns: []scripted.Turn{{ToolCalls: calls}, {Text: "done"}}})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				out, err := d.Run(ctx, turn.Request{Meta: turnMeta(), SessionID: sid, Text: "wait", Agent: buildAgent("wait"), Provider: p,
					ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: []turn.Tool{waitTool{}}, ToolCalls: limit})
				if err != nil || out.Reason != events.FinishCompleted {
					b.Fatalf("outcome %+v %v", out, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/turn")
		})
	}
}
