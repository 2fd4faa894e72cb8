package turn_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
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
	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// stepClock samples what the process has used when each provider request starts, so a step
// (request, tool call, results, the next prompt) costs the difference between the samples
// at its start and at the next step's. between, when set, runs something between two steps
// (it is given the number of the request about to start) and reports whether it did; the
// step after it starts when it is done.
type stepClock struct {
	// starts[s-1] is taken when step s starts; ends[s] when it ends (the same sample unless
	// something ran between the two steps). ends[0] is not used.
	starts, ends []usage
	// edges are the requests at whose start allocations are read: exact counts stop the world
	// (runtime.ReadMemStats), so they are read only at the edges of what is measured, and
	// outside its steps. Elsewhere a sample's allocations are zero.
	edges   map[int]bool
	between func(request int) bool
	mem     runtime.MemStats
}

// usage is what the process has used so far: wall time, CPU time (user and system, every
// thread, so the runtime's own work and not the time it waits for the disk to sync), and
// heap allocations (bytes and objects).
type usage struct {
	wall           time.Time
	cpu            time.Duration
	bytes, objects uint64
}

// clocked is a provider whose every request first samples the clock: the turn calls the
// provider right after it has recorded the request's start, on the turn's own goroutine, so
// the sample is taken where a step ends and the next begins (an observer is told later, on a
// goroutine of its own: docs/turns.md, "Observers").
type clocked struct {
	model.Provider
	clock *stepClock
}

func (p clocked) Stream(ctx context.Context, req model.Request) model.Stream {
	p.clock.sample()
	return p.Provider.Stream(ctx, req)
}

// describedClocked keeps the wrapped provider's description (an HTTP adapter's wire).
type describedClocked struct {
	clocked
	d model.Described
}

func (p describedClocked) Describe() model.Description { return p.d.Describe() }

func (c *stepClock) provider(p model.Provider) model.Provider {
	if d, ok := p.(model.Described); ok {
		return describedClocked{clocked{p, c}, d}
	}
	return clocked{p, c}
}

func (c *stepClock) sample() {
	request := len(c.ends) + 1
	end := usage{wall: time.Now(), cpu: processCPU()}
	if c.edges[request] {
		end.bytes, end.objects = c.allocs()
	}
	c.ends = append(c.ends, end)
	start := end
	if c.between != nil && c.between(request) {
		start.bytes, start.objects = c.allocs()
	}
	start.wall, start.cpu = time.Now(), processCPU() // the edge's reading is no step's
	c.starts = append(c.starts, start)
}

func (c *stepClock) allocs() (bytes, objects uint64) {
	runtime.ReadMemStats(&c.mem)
	return c.mem.TotalAlloc, c.mem.Mallocs
}

// cost is the wall time and CPU time step s took.
func (c *stepClock) cost(s int) (time.Duration, time.Duration) {
	return c.ends[s].wall.Sub(c.starts[s-1].wall), c.ends[s].cpu - c.starts[s-1].cpu
}

// allocated is what steps first..last allocated; no step between them may have run
// anything before it, and requests first and last+1 must be edges.
func (c *stepClock) allocated(first, last int) (bytes, objects uint64) {
	from, to := c.starts[first-1], c.ends[last]
	return to.bytes - from.bytes, to.objects - from.objects
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

// BenchmarkStepOverhead runs one session of 1,000 tool steps on a real SQLite store and
// reports, at steps 10, 100 and 1,000, the median wall time of a step, and its mean CPU time
// and heap allocations (bytes and objects). The baseline is the early steps of the same run:
// the runtime must not reload, re-record or re-encode the whole history per step, so step
// 1,000 should cost about what step 10 does (issue 13: within 1.2×).
//
// A step takes a few milliseconds, so each figure pools many: step 1,000 is the 100 steps
// 901..1,000, step 100 the 50 steps 51..100, and step 10 the ten steps 2..11 (step 1 also
// opens the turn and the connection) of ten short sessions, each run in the same process
// just before one of the ten ten-step stretches of 901..1,000 (the long session waits). Step 10 and
// step 1,000 are so measured side by side, and a change in the machine's load (other
// processes share its cores) moves both; they also share one heap, so a collection's work is
// charged to whichever steps allocate while it runs. A short session, run before the timed
// ones, pays what a process does once (the SDK's and the JSON encoder's first use, compiled
// patterns), which no step of a session should be charged with. CPU time is getrusage's
// (user and system, every thread: the runtime's own work, not the time it waits for the disk
// to sync); wall time is dominated by two fsyncs per step and varies with the disk;
// allocations do not depend on the load, so they show growth with history even while other
// processes share the cores.
//
// The gated run puts every call through the permission gate (a layered policy with ordered
// shell rules, the agent's contract, the risk gate reading the command's syntax tree, the
// standing approvals); the ungated run, in the same process, is its baseline.
//
// The openai run speaks Chat Completions through the real OpenAI adapter to a local server
// (chatServer) that numbers every response's call call_0, so the HTTP, SSE and JSON cost of a
// step — the whole conversation encoded and sent each step — and the runtime's call ids are
// in its figure; the scripted ungated run is its baseline. The server runs in a process of
// its own, as a model server does, so the CPU and allocation figures are the runtime's alone
// (sending the whole conversation is in them; the server reading it is not).
func BenchmarkStepOverhead(b *testing.B) {
	b.Run("ungated", func(b *testing.B) { stepOverhead(b, false, scriptedSteps, false) })
	b.Run("gated", func(b *testing.B) { stepOverhead(b, true, scriptedSteps, false) })
	b.Run("openai", func(b *testing.B) { stepOverhead(b, false, chatServerSteps, false) })
	// A session with a Goal, a Plan and Todos: runtime.work_state is rendered and the work
	// stream read again before every request (docs/goals.md).
	b.Run("work", func(b *testing.B) { stepOverhead(b, false, scriptedSteps, true) })
}

const benchSteps = 1000

func scriptedSteps(b *testing.B, steps int) model.Provider {
	var turns []scripted.Turn
	for i := range steps {
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

// chatServerSteps is the OpenAI adapter on a local Chat Completions server answering steps
// tool calls, then "done". The server runs in a process of its own (TestChatServerHelper), as
// a model server does, so the figures are the runtime's alone: reading a request of the whole
// conversation is the server's work, not a step's.
func chatServerSteps(b *testing.B, steps int) model.Provider {
	cmd := exec.Command(os.Args[0], "-test.run=^TestChatServerHelper$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", chatServerEnv, steps))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("chat server: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return openai.New(openai.Options{Name: "bench", BaseURL: strings.TrimSpace(url) + "/v1", APIKey: "none", IgnoreEnv: true})
}

const chatServerEnv = "ZUNO_BENCH_CHAT_SERVER_STEPS"

// TestChatServerHelper is BenchmarkStepOverhead's Chat Completions server: it prints its URL,
// then serves until its standard input closes.
func TestChatServerHelper(t *testing.T) {
	steps, err := strconv.Atoi(os.Getenv(chatServerEnv))
	if err != nil {
		t.Skip("helper process of BenchmarkStepOverhead")
	}
	srv := httptest.NewServer(chatHandler(int64(steps)))
	defer srv.Close()
	fmt.Println(srv.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// chatHandler streams, for request i, a tool call numbered call_0 while i < steps, then "done".
func chatHandler(steps int64) http.HandlerFunc {
	var n atomic.Int64
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		i := n.Add(1) - 1
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(choice string) {
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"bench\",\"choices\":[%s]}\n\n", i, choice)
		}
		chunk(`{"index":0,"delta":{"role":"assistant","content":"step"},"finish_reason":null}`)
		if i < steps {
			chunk(fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"look","arguments":"{\"n\":%d}"}}]},"finish_reason":null}`, i))
			chunk(`{"index":0,"delta":{},"finish_reason":"tool_calls"}`)
		} else {
			chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`)
		}
		fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"bench\",\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":5,\"total_tokens\":105}}\n\ndata: [DONE]\n\n", i)
	}
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
	return gate.New(gate.Config{Policy: policy, Tools: []tools.Tool{tool}, Workspace: "/ws", Home: "/home/u"})
}

// stepWindow is steps first..last (1-based) of a session, measured as one figure, in
// stretches of stretch steps (the whole window when 0) between which something else may run.
type stepWindow struct{ first, last, stretch int }

// edges are the requests starting and ending the window's stretches.
func (w stepWindow) edges(into map[int]bool) map[int]bool {
	for s := w.first; s <= w.last; s += w.length() {
		into[s] = true
	}
	into[w.last+1] = true
	return into
}

func (w stepWindow) length() int {
	if w.stretch == 0 {
		return w.last - w.first + 1
	}
	return w.stretch
}

var (
	// early is the window of each short session; the long session's step 1,000 is its
	// window late, cut into stretches as long as early with a short session run before each.
	early = stepWindow{first: 2, last: 11}
	at100 = stepWindow{first: 51, last: 100}
	late  = stepWindow{first: benchSteps - 99, last: benchSteps, stretch: early.length()}
)

// stepCosts pools what a window's steps cost over every session measured.
type stepCosts struct {
	wall                []float64 // each step's, ns
	cpu, bytes, objects float64   // sums over the steps
	steps               float64
}

func (c *stepCosts) add(clock *stepClock, w stepWindow) {
	for s := w.first; s <= w.last; s++ {
		wall, cpu := clock.cost(s)
		c.wall = append(c.wall, float64(wall.Nanoseconds()))
		c.cpu += float64(cpu)
		c.steps++
	}
	for s := w.first; s <= w.last; s += w.length() {
		bytes, objects := clock.allocated(s, min(s+w.length()-1, w.last))
		c.bytes += float64(bytes)
		c.objects += float64(objects)
	}
}

func (c *stepCosts) medianWall() float64 {
	xs := slices.Clone(c.wall)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

func (c *stepCosts) meanCPU() float64 { return c.cpu / c.steps }

func (c *stepCosts) report(b *testing.B, at int) {
	b.ReportMetric(c.medianWall()/1e3, fmt.Sprintf("µs/step@%d", at))
	b.ReportMetric(c.meanCPU()/1e3, fmt.Sprintf("cpu-µs/step@%d", at))
	b.ReportMetric(c.bytes/c.steps, fmt.Sprintf("B/step@%d", at))
	b.ReportMetric(c.objects/c.steps, fmt.Sprintf("allocs/step@%d", at))
}

func stepOverhead(b *testing.B, gated bool, provider func(*testing.B, int) model.Provider, work bool) {
	runSession(b, gated, provider, early.last, nil, work) // the process's one-off costs, measured nowhere
	c10, c100, c1000 := &stepCosts{}, &stepCosts{}, &stepCosts{}
	for b.Loop() {
		// Before each stretch of the late window, a short session measures step 10.
		between := func(request int) bool {
			if request < late.first || request > late.last || (request-late.first)%late.stretch != 0 {
				return false
			}
			b.StopTimer()
			c10.add(runSession(b, gated, provider, early.last, nil, work), early)
			b.StartTimer()
			return true
		}
		clock := runSession(b, gated, provider, benchSteps, between, work)
		c100.add(clock, at100)
		c1000.add(clock, late)
	}
	c10.report(b, 10)
	c100.report(b, 100)
	c1000.report(b, 1000)
	b.ReportMetric(c1000.medianWall()/c10.medianWall(), "wall-ratio@1000/10")
	b.ReportMetric(c1000.meanCPU()/c100.meanCPU(), "cpu-ratio@1000/100")
	b.ReportMetric(c1000.meanCPU()/c10.meanCPU(), "cpu-ratio@1000/10")
	b.ReportMetric((c1000.bytes/c1000.steps)/(c10.bytes/c10.steps), "B-ratio@1000/10")
}

// runSession runs one turn of steps tool steps (and a last answer) in a new session on a new
// SQLite store, with between (if not nil) run between steps, and returns its clock. With work
// the session has a Goal, a Plan and Todos before the turn starts (seedWork).
func runSession(b *testing.B, gated bool, provider func(*testing.B, int) model.Provider, steps int, between func(int) bool, work bool) *stepClock {
	ctx := context.Background()
	store, err := sqlstore.OpenSQLite(ctx, filepath.Join(b.TempDir(), "events.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	reg := events.NewRegistry(events.AllPayloads()...)
	handlers := commands.NewHandlers(store, reg, commands.SystemClock{}, nil)
	if _, err := handlers.CreateSession(ctx, &commands.CreateSession{Meta: commands.Meta{CommandID: "c", Actor: "user"},
		Create: sessionCreate("ses_bench")}); err != nil {
		b.Fatal(err)
	}
	if work {
		seedWork(b, handlers, "ses_bench")
	}
	p := provider(b, steps)
	var look turn.Tool = &probeTool{name: "look", policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}}
	var g turn.Gate
	if gated {
		look = commandTool{look.(*probeTool)}
		g = benchGate(b, look)
	}
	clock := &stepClock{between: between, edges: early.edges(map[int]bool{})}
	if steps == benchSteps {
		clock.edges = late.edges(at100.edges(map[int]bool{}))
	}
	d := &turn.Driver{Store: store, Registry: reg, Clock: commands.SystemClock{}}
	out, err := d.Run(ctx, turn.Request{Meta: turnMeta(), SessionID: "ses_bench", Text: "loop", Agent: buildAgent("look"), Provider: clock.provider(p),
		ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: []turn.Tool{look}, Gate: g})
	if err != nil || out.Steps != steps+1 {
		b.Fatalf("outcome %+v %v", out, err)
	}
	return clock
}

// seedWork gives a session a Goal of another cycle (it does not continue this turn), a Plan
// of 8 steps and 16 Todos.
func seedWork(b *testing.B, h *commands.Handlers, session string) {
	ctx := context.Background()
	var steps []work.StepInput
	for i := range 8 {
		steps = append(steps, work.StepInput{Title: fmt.Sprintf("stage %d of the migration", i)})
	}
	var items []work.TodoInput
	for i := range 16 {
		title := fmt.Sprintf("todo %d: change the call sites in package %d", i, i)
		items = append(items, work.TodoInput{ID: fmt.Sprintf("t%d", i), Title: &title})
	}
	obj := "Migrate the store to format 4"
	crit := []goal.CriterionInput{{ID: "tests", Text: "go test ./... passes", NeedsEvidence: true}, {ID: "docs", Text: "documented"}}
	meta := func(id string) commands.Meta { return commands.Meta{CommandID: id, Actor: "user"} }
	for _, send := range []func() (commands.Result, error){
		func() (commands.Result, error) {
			return h.UpdatePlan(ctx, &commands.UpdatePlan{Meta: meta("plan"), SessionID: session,
				Update: work.PlanUpdate{Action: work.ActionCreate, Title: "Migrate", Steps: steps}})
		},
		func() (commands.Result, error) {
			return h.UpdateTodos(ctx, &commands.UpdateTodos{Meta: meta("todo"), SessionID: session, Update: work.TodoUpdate{Items: items}})
		},
		func() (commands.Result, error) {
			return h.UpdateGoal(ctx, &commands.UpdateGoal{Meta: meta("goal"), SessionID: session,
				Update: goal.Update{TurnID: "turn_elsewhere", Objective: &obj, Criteria: &crit}})
		},
	} {
		res, err := send()
		if err == nil {
			err = res.Err()
		}
		if err != nil {
			b.Fatal(err)
		}
	}
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
