package turn_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/google/uuid"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/memstore"
	"github.com/zuno-run/zuno/adapters/provider/scripted"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

// probeTool is a tool whose behaviour the test controls: it records how many calls overlap,
// and can block until released.
type probeTool struct {
	name     string
	policy   tools.Policy
	inFlight atomic.Int32
	maxSeen  atomic.Int32
	calls    atomic.Int32
	hold     time.Duration
}

func (p *probeTool) Declaration() tools.Declaration {
	return tools.Declaration{Name: p.name, Policy: p.policy}
}
func (p *probeTool) Spec() tools.Spec {
	return tools.Spec{Name: p.name, Description: "test tool", Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}`)}
}
func (p *probeTool) WritesWorkspace() bool { return p.policy.SideEffect == tools.SideEffecting }
func (p *probeTool) Validate(args json.RawMessage) (tools.Parsed, error) {
	var v struct {
		N *int `json:"n"`
	}
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil || v.N == nil {
		return tools.Parsed{}, domain.Invalid("n", "is missing or not an integer", `send {"n": 1}`)
	}
	return tools.Parsed{Args: args}, nil
}
func (p *probeTool) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	p.calls.Add(1)
	n := p.inFlight.Add(1)
	for {
		m := p.maxSeen.Load()
		if n <= m || p.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	defer p.inFlight.Add(-1)
	select {
	case <-time.After(p.hold):
	case <-ctx.Done():
		return tools.Result{Outcome: tools.OutcomeError, ErrorCode: "cancelled", Output: "cancelled"}
	}
	return tools.Result{Outcome: tools.OutcomeCompleted, Output: p.name + " ok " + string(inv.Args.(json.RawMessage))}
}

type harness struct {
	store    *memstore.Store
	log      *memstore.Log
	registry *events.Registry
	driver   *turn.Driver
	session  string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	ctx := context.Background()
	// The driver's unit tests run on the in-memory store; the CLI's testscripts run the same
	// turns on SQLite and Postgres files, across real process restarts.
	log := memstore.NewLog()
	store := memstore.Open(log)
	t.Cleanup(func() { store.Close() })
	reg := events.NewRegistry(events.AllPayloads()...)
	h := &harness{store: store, log: log, registry: reg, session: "ses_test",
		driver: &turn.Driver{Store: store, Registry: reg, Clock: commands.SystemClock{}}}
	handlers := commands.NewHandlers(store, reg, commands.SystemClock{}, nil)
	res, err := handlers.CreateSession(ctx, &commands.CreateSession{Meta: commands.Meta{CommandID: "create", Actor: "user"},
		Create: sessionCreate(h.session)})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (h *harness) events(t *testing.T) []events.Payload {
	t.Helper()
	recs, err := h.store.ReadStream(context.Background(), commands.SessionStream(h.session), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	var out []events.Payload
	for _, r := range recs {
		p, err := h.registry.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// turnMeta is a new turn command: each Run in these tests is a turn of its own.
func turnMeta() commands.Meta {
	return commands.Meta{CommandID: "cmd_" + uuid.NewString(), Actor: "user"}
}

func script(t *testing.T, js string) *scripted.Provider {
	t.Helper()
	p, err := scripted.Parse("test", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func buildAgent(toolNames ...string) agent.Agent {
	a, _ := agent.Resolve("build", nil, true)
	a.Tools = toolNames
	return a
}

func typesOf(ps []events.Payload) []string {
	var out []string
	for _, p := range ps {
		s := p.EventType()
		if r, ok := p.(events.ProviderRequest); ok {
			s += ":" + r.Status
		}
		out = append(out, s)
	}
	return out
}

func TestAtomicTurnMakesOneRequestAndNoToolCalls(t *testing.T) {
	h := newHarness(t)
	p := script(t, `{"turns":[{"text":"done","usage":{"inputTokens":10,"outputTokens":2}}]}`)
	out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "say done", Agent: buildAgent(),
		Provider: p, ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != events.FinishCompleted || out.Text != "done" || out.Steps != 1 || out.Usage.InputTokens != 10 {
		t.Fatalf("outcome %+v", out)
	}
	got := strings.Join(typesOf(h.events(t)), " ")
	want := "session.created.1 session.user_message.appended.1 session.turn.started.1 session.prompt.assembled.1 " +
		"session.provider.request.1:started session.provider.request.1:completed session.turn.finished.1"
	if got != want {
		t.Fatalf("events\n got %s\nwant %s", got, want)
	}
}

func TestParallelGroupOverlapsAndResultsKeepModelOrder(t *testing.T) {
	h := newHarness(t)
	ro := &probeTool{name: "look", policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}, hold: 50 * time.Millisecond}
	ex := &probeTool{name: "poke", hold: time.Millisecond}
	var calls []string
	for i := range 4 {
		calls = append(calls, fmt.Sprintf(`{"id":"c%d","name":"look","arguments":{"n":%d}}`, i, i))
	}
	calls = append(calls, `{"id":"bad","name":"look","arguments":{"x":1}}`, `{"id":"gone","name":"nope","arguments":{}}`,
		`{"id":"c9","name":"poke","arguments":{"n":9}}`)
	p := script(t, `{"turns":[{"toolCalls":[`+strings.Join(calls, ",")+`]},{"text":"all done"}]}`)
	a := buildAgent("look", "poke")
	out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "go", Agent: a,
		Provider: p, ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: []turn.Tool{ro, ex}, ToolCalls: 8})
	if err != nil || out.Reason != events.FinishCompleted || out.Steps != 2 {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	if ro.maxSeen.Load() < 2 {
		t.Errorf("read-only calls never overlapped (max in flight %d)", ro.maxSeen.Load())
	}
	var results []string
	blocked := map[string]string{}
	for _, ev := range h.events(t) {
		switch e := ev.(type) {
		case events.ToolSettled:
			results = append(results, e.CallID+"="+e.Outcome)
		case events.ToolBlocked:
			results = append(results, e.CallID+"=blocked")
			blocked[e.CallID] = e.Category
		}
	}
	if got := strings.Join(results, " "); got != "c0=completed c1=completed c2=completed c3=completed bad=blocked gone=blocked c9=completed" {
		t.Errorf("results in log order: %s", got)
	}
	if blocked["bad"] != "invalid_arguments" || blocked["gone"] != "unavailable" {
		t.Errorf("block categories %v", blocked)
	}
	// The second request's prompt carries every result, in model order, after the calls.
	last := h.lastReceipt(t)
	var roles []string
	for _, m := range last.Messages {
		if m.Kind == prompt.PartMessage {
			roles = append(roles, m.Role)
		}
	}
	if got := strings.Join(roles, ","); got != "user,assistant,tool,tool,tool,tool,tool,tool,tool" {
		t.Errorf("conversation roles %s", got)
	}
	// The second receipt leaves out the sections and tools the first recorded; expanded, it
	// has them.
	var stored []events.PromptAssembled
	for _, ev := range h.events(t) {
		if r, ok := ev.(events.PromptAssembled); ok {
			stored = append(stored, r)
		}
	}
	if len(stored) != 2 || stored[1].HeaderBase == nil || stored[1].HeaderBase.ReceiptID != stored[0].ReceiptID ||
		len(stored[1].Sections)+len(stored[1].Tools) != 0 || len(stored[0].Sections) == 0 {
		t.Fatalf("stored receipts: %d, the second's header base %+v", len(stored), stored[len(stored)-1].HeaderBase)
	}
	if len(last.Tools) != 2 || len(last.Sections) != len(stored[0].Sections) {
		t.Errorf("expanded receipt: %d tools, %d sections", len(last.Tools), len(last.Sections))
	}
}

func TestStepLimitFinalizationClosesToolsAndIsRecorded(t *testing.T) {
	h := newHarness(t)
	look := &probeTool{name: "look", policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}}
	p := script(t, `{"turns":[
		{"toolCalls":[{"id":"a","name":"look","arguments":{"n":1}}]},
		{"toolCalls":[{"id":"b","name":"look","arguments":{"n":2}}]},
		{"text":"summary: looked twice"}]}`)
	a := buildAgent("look")
	a.Steps = 2
	out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "loop", Agent: a,
		Provider: p, ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: []turn.Tool{look}})
	if err != nil || out.Reason != events.FinishStepLimit || out.Steps != 3 || out.Text != "summary: looked twice" {
		t.Fatalf("outcome %+v, %v", out, err)
	}
	var fin *events.ProviderRequest
	var lastReceipt *events.PromptAssembled
	for _, ev := range h.events(t) {
		switch e := ev.(type) {
		case events.ProviderRequest:
			if e.Status == events.RequestStarted && e.StepLimitFinalization != nil {
				fin = &e
			}
		case events.PromptAssembled:
			lastReceipt = &e
		}
	}
	if fin == nil || fin.Step != 3 || fin.StepLimitFinalization.Limit != 2 || fin.StepLimitFinalization.InstructionDigest == "" {
		t.Fatalf("finalization request %+v", fin)
	}
	if lastReceipt.ToolChoiceMode != string(model.ToolChoiceNone) {
		t.Errorf("finalization request has tool choice %q, want none", lastReceipt.ToolChoiceMode)
	}
	// The step's call and result are in the log as events of their own, so the receipt lists
	// only the message the turn added, the instruction, with its blob, and still proves its
	// prompt once the others are restored from the transcript (lastReceipt verifies).
	instruction, err := json.Marshal(model.Message{Role: model.RoleDeveloper, Text: turn.FinalizationInstruction})
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, b := range lastReceipt.Blobs {
		kept = append(kept, b)
	}
	if lastReceipt.LoggedParts != 2 || len(lastReceipt.Messages) != 1 || len(kept) != 1 || kept[0] != string(instruction) {
		t.Errorf("final receipt leaves out %d logged messages, lists %d and keeps the blobs %q, want 2, 1 and only the instruction",
			lastReceipt.LoggedParts, len(lastReceipt.Messages), kept)
	}
	h.lastReceipt(t)
	if look.calls.Load() != 2 {
		t.Errorf("tool ran %d times", look.calls.Load())
	}
}

func TestProviderErrorIsRecordedAndEndsTheTurn(t *testing.T) {
	h := newHarness(t)
	p := script(t, `{"turns":[{"error":{"code":"rate_limit","message":"slow down","retryAfterMs":1500}}]}`)
	out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "hi", Agent: buildAgent(),
		Provider: p, ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != events.FinishFailed || out.Error == nil || out.Error.Code != model.CodeRateLimit || out.Error.RetryAfterMs != 1500 {
		t.Fatalf("outcome %+v", out)
	}
	// The session continues afterwards: the next turn starts cleanly.
	p2 := script(t, `{"turns":[{"text":"ok now"}]}`)
	out, err = h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "again", Agent: buildAgent(),
		Provider: p2, ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}})
	if err != nil || out.Text != "ok now" {
		t.Fatalf("second turn %+v %v", out, err)
	}
}

func TestContextOverflowIsRefusedBeforeAnyRequest(t *testing.T) {
	h := newHarness(t)
	p := script(t, `{"turns":[{"text":"never"}]}`)
	out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: strings.Repeat("long input ", 200),
		Agent: buildAgent(), Provider: p, ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted", ContextWindow: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Error == nil || out.Error.Code != prompt.CodeContextOverflow || p.Used() != 0 {
		t.Fatalf("outcome %+v, provider used %d", out, p.Used())
	}
	for _, ev := range h.events(t) {
		if _, ok := ev.(events.ProviderRequest); ok {
			t.Fatal("a provider request was recorded")
		}
	}
}

func TestCancelledRunSettlesAndFinishesInterrupted(t *testing.T) {
	h := newHarness(t)
	slow := &probeTool{name: "poke", hold: time.Minute}
	p := script(t, `{"turns":[{"toolCalls":[{"id":"a","name":"poke","arguments":{"n":1}},{"id":"b","name":"poke","arguments":{"n":2}}]},{"text":"x"}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for slow.calls.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	out, err := h.driver.Run(ctx, turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "go", Agent: buildAgent("poke"),
		Provider: p, ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: []turn.Tool{slow}})
	if err != nil || out.Reason != events.FinishInterrupted {
		t.Fatalf("outcome %+v %v", out, err)
	}
	outcomes := map[string]string{}
	for _, ev := range h.events(t) {
		if e, ok := ev.(events.ToolSettled); ok {
			outcomes[e.CallID] = e.Outcome
		}
	}
	if outcomes["a"] != "error" || outcomes["b"] != "cancelled" || slow.calls.Load() != 1 {
		t.Fatalf("outcomes %v, calls %d", outcomes, slow.calls.Load())
	}
	// The outcome counts what the log holds: one provider request was made before the cancel.
	var finished events.TurnFinished
	for _, ev := range h.events(t) {
		if e, ok := ev.(events.TurnFinished); ok {
			finished = e
		}
	}
	if out.Steps != 1 || out.Steps != finished.Steps || out.Usage != finished.Usage {
		t.Fatalf("outcome counts %d steps (usage %+v), the log %d (usage %+v)", out.Steps, out.Usage, finished.Steps, finished.Usage)
	}
}

func sessionCreate(id string) session.Create {
	return session.Create{SessionID: id, Title: "test", Agent: "build"}
}

// lastReceipt returns the session's latest receipt expanded to its full conversation, and
// checks that it verifies.
func (h *harness) lastReceipt(t *testing.T) prompt.Receipt {
	t.Helper()
	receipts := map[string]prompt.Receipt{}
	pool := map[string]string{}
	var last string
	tr := transcript.New() // a receipt leaves out the messages the transcript holds
	for _, ev := range h.events(t) {
		if err := tr.Evolve(ev); err != nil {
			t.Fatal(err)
		}
		if r, ok := ev.(events.PromptAssembled); ok {
			receipts[r.ReceiptID] = r.PromptReceipt
			for d, b := range r.Blobs {
				pool[d] = b
			}
			last = r.ReceiptID
		}
	}
	logged, err := prompt.LoggedMessages(tr.Messages)
	if err != nil {
		t.Fatal(err)
	}
	for d, b := range logged.Blobs {
		pool[d] = b
	}
	full, err := prompt.ExpandLogged(receipts[last], func(id string) (prompt.Receipt, bool) { r, ok := receipts[id]; return r, ok },
		func(d string) (string, bool) { b, ok := pool[d]; return b, ok }, logged.Parts)
	if err != nil {
		t.Fatal(err)
	}
	if err := prompt.Verify(full); err != nil {
		t.Fatal(err)
	}
	return full
}

// A turn whose owner is alive is not recovered: the second run is refused and appends
// nothing; with ForceRecover, or once the owner is gone, the open turn is settled.
func TestLiveTurnIsNotRecovered(t *testing.T) {
	h := newHarness(t)
	owner := &events.TurnOwner{Host: "h", PID: 42}
	alive := true
	d := &turn.Driver{Store: h.store, Registry: h.registry, Clock: commands.SystemClock{}, Owner: owner,
		Alive: func(o events.TurnOwner) bool { return alive && o == *owner }}
	// Leave a turn open the way a killed process would: its call started, never settled.
	crash := &probeTool{name: "poke", hold: time.Minute}
	p := script(t, `{"turns":[{"toolCalls":[{"id":"a","name":"poke","arguments":{"n":1}}]}]}`)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx, turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "go", Agent: buildAgent("poke"), Provider: p,
			ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}, Tools: []turn.Tool{crash}})
	}()
	for crash.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	before := len(h.events(t))
	again := func(force bool) (turn.Outcome, error) {
		return d.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "next", Agent: buildAgent(), ForceRecover: force,
			Provider: script(t, `{"turns":[{"text":"ok"}]}`), ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}})
	}
	_, err := again(false)
	var de *domain.Error
	if !errors.As(err, &de) || de.Code() != turn.CodeSessionBusy {
		t.Fatalf("second run while the owner is alive: %v", err)
	}
	if n := len(h.events(t)); n != before {
		t.Fatalf("a refused run appended %d events", n-before)
	}
	// The owner is gone now (its run is stopped without recording, as a kill would).
	alive = false
	out, err := again(false)
	if err != nil || out.Text != "ok" {
		t.Fatalf("run after the owner died: %+v %v", out, err)
	}
	settled := map[string]string{}
	for _, ev := range h.events(t) {
		if e, ok := ev.(events.ToolSettled); ok && e.Recovered {
			settled[e.CallID] = e.Outcome
		}
	}
	if settled["a"] != "uncertain" {
		t.Fatalf("recovered outcomes %v", settled)
	}
	cancel()
	<-done
}
