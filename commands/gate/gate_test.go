package gate_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/zuno-run/zuno/adapters/eventstore/memstore"
	"github.com/zuno-run/zuno/adapters/provider/scripted"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/gate"
	"github.com/zuno-run/zuno/commands/live"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/answers"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// The gate in a real turn: the driver, the in-memory event store, the command handlers that
// record answers, and tools that count their runs. The CLI's testscripts run the same gate
// across real processes, on SQLite and Postgres, at a pseudo-terminal.

// countTool runs a command (its "cmd" argument), or touches nothing, and counts its runs.
type countTool struct {
	name string
	runs atomic.Int32
}

func (c *countTool) Declaration() tools.Declaration {
	return tools.Declaration{Name: c.name, Policy: tools.Policy{SideEffect: tools.SideEffecting}}
}
func (c *countTool) Spec() tools.Spec {
	return tools.Spec{Name: c.name, Description: "test", Schema: json.RawMessage(`{"type":"object"}`)}
}
func (c *countTool) WritesWorkspace() bool { return true }
func (c *countTool) Validate(args json.RawMessage) (tools.Parsed, error) {
	var v struct {
		Cmd string `json:"cmd"`
	}
	err := json.Unmarshal(args, &v)
	return tools.Parsed{Args: v.Cmd}, err
}
func (c *countTool) Subjects(p tools.Parsed) ([]tools.Subject, error) {
	if cmd := p.Args.(string); cmd != "" {
		return []tools.Subject{{Command: cmd}}, nil
	}
	return nil, nil
}
func (c *countTool) Execute(context.Context, tools.Invocation) tools.Result {
	c.runs.Add(1)
	return tools.Result{Outcome: tools.OutcomeCompleted, Output: "ran"}
}

type rig struct {
	t        *testing.T
	store    *memstore.Store
	reg      *events.Registry
	handlers *commands.Handlers
	driver   *turn.Driver
	tool     *countTool
	session  string
	feed     *live.Feed
}

func newRig(t *testing.T) *rig {
	store := memstore.Open(memstore.NewLog())
	t.Cleanup(func() { store.Close() })
	reg := events.NewRegistry(events.AllPayloads()...)
	r := &rig{t: t, store: store, reg: reg, handlers: commands.NewHandlers(store, reg, commands.SystemClock{}, nil),
		driver: &turn.Driver{Store: store, Registry: reg, Clock: commands.SystemClock{}}, tool: &countTool{name: "shell"},
		session: "ses_gate", feed: live.New(store)}
	feedCtx, stop := context.WithCancel(context.Background())
	go r.feed.Run(feedCtx)
	t.Cleanup(stop)
	res, err := r.handlers.CreateSession(context.Background(), &commands.CreateSession{Meta: commands.Meta{CommandID: "create"},
		Create: session.Create{SessionID: r.session, Title: "t", Agent: "build"}})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *rig) policy(rules string) permission.Policy {
	p, err := permission.Resolve([]settings.Raw{{Layer: settings.Global, Source: "test", JSON: json.RawMessage(rules)}}, nil)
	if err != nil {
		r.t.Fatal(err)
	}
	return p
}

// run drives one turn whose model calls the tool with each command in turn.
func (r *rig) run(ctx context.Context, p permission.Policy, interactive bool, cmds ...string) turn.Outcome {
	r.t.Helper()
	var turns []string
	for i, c := range cmds {
		args, _ := json.Marshal(map[string]string{"cmd": c})
		turns = append(turns, `{"toolCalls":[{"id":"c`+string(rune('a'+i))+uuid.NewString()[:8]+`","name":"shell","arguments":`+string(args)+`}]}`)
	}
	prov, err := scripted.Parse("test", []byte(`{"turns":[`+strings.Join(append(turns, `{"text":"done"}`), ",")+`]}`))
	if err != nil {
		r.t.Fatal(err)
	}
	g := gate.New(gate.Config{Policy: p, Tools: []tools.Tool{r.tool}, Workspace: "/ws", Home: "/home/u",
		Interactive: interactive})
	out, err := r.driver.Run(ctx, turn.Request{Meta: commands.Meta{CommandID: "cmd_" + uuid.NewString()}, SessionID: r.session,
		Text: "go", Agent: agent.Agent{Name: "build", Tools: []string{"shell"}}, Provider: prov, ProviderName: "scripted",
		Model: model.ModelInfo{ID: "scripted"}, Tools: []turn.Tool{r.tool}, Gate: g,
		Inbox: commands.Inbox{Store: r.store, Registry: r.reg, Feed: r.feed}})
	if err != nil {
		r.t.Fatal(err)
	}
	return out
}

// answerAsks answers each ask of the session that appears from now on, with the replies in
// order.
func (r *rig) answerAsks(ctx context.Context, replies ...string) {
	seen := map[string]bool{}
	for _, a := range r.asks() {
		seen[a.AskID] = true
	}
	go func() {
		for len(replies) > 0 && ctx.Err() == nil {
			for _, a := range r.asks() {
				if seen[a.AskID] {
					continue
				}
				seen[a.AskID] = true
				r.handlers.AnswerPermission(ctx, &commands.AnswerPermission{Meta: commands.Meta{CommandID: "ans_" + a.AskID},
					Answer: answers.Answer{SessionID: r.session, AskID: a.AskID, CallID: a.CallID, Reply: replies[0]}})
				replies = replies[1:]
			}
			time.Sleep(time.Millisecond)
		}
	}()
}

func (r *rig) payloads() []events.Payload {
	recs, err := r.store.ReadStream(context.Background(), commands.SessionStream(r.session), 0, 100000)
	if err != nil {
		r.t.Fatal(err)
	}
	var out []events.Payload
	for _, rec := range recs {
		p, err := r.reg.Decode(rec)
		if err != nil {
			r.t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// granted are the session's recorded standing approvals, in log order.
func (r *rig) granted() []events.PermissionGranted {
	var out []events.PermissionGranted
	for _, p := range r.payloads() {
		if g, ok := p.(events.PermissionGranted); ok {
			out = append(out, g)
		}
	}
	return out
}

func (r *rig) asks() []events.PermissionAsked {
	var out []events.PermissionAsked
	for _, p := range r.payloads() {
		if a, ok := p.(events.PermissionAsked); ok {
			out = append(out, a)
		}
	}
	return out
}

// decisions are the recorded decisions, in log order: "callID source action reply".
func (r *rig) decisions() []events.PermissionDecision {
	var out []events.PermissionDecision
	for _, p := range r.payloads() {
		switch e := p.(type) {
		case events.ToolStarted:
			out = append(out, *e.Permission)
		case events.ToolBlocked:
			out = append(out, *e.Permission)
		}
	}
	return out
}

func TestAnswersDecideAskedCalls(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replies []string
		cmds    []string
		runs    int32
		want    []string // source/action/reply per call
	}{
		{"once admits the call", []string{"once"}, []string{"make"}, 1, []string{"user/allow/once"}},
		{"reject blocks it: nothing runs", []string{"reject"}, []string{"make"}, 0, []string{"user/deny/reject"}},
		{"always admits the same kind of command for the rest of the session, recorded as standing",
			[]string{"always"}, []string{"make test", "make test -v", "make build"}, 2,
			[]string{"user/allow/always", "standing/allow/once", "user/deny/reject"}},
		{"a compound command has no savable pattern: always installs nothing",
			[]string{"always", "reject"}, []string{"make && make", "make && make"}, 1, []string{"user/allow/always", "user/deny/reject"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			replies := tc.replies
			if len(replies) < len(tc.want) {
				replies = append(replies, "reject") // anything asked beyond the script is refused
			}
			r.answerAsks(ctx, replies...)
			r.run(ctx, r.policy(`{"rules": {"shell": "ask"}}`), true, tc.cmds...)
			var got []string
			for _, d := range r.decisions() {
				got = append(got, d.Source+"/"+d.Action+"/"+d.Reply)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") || r.tool.runs.Load() != tc.runs {
				t.Fatalf("decisions %v (runs %d), want %v (runs %d)", got, r.tool.runs.Load(), tc.want, tc.runs)
			}
		})
	}
}

func TestStandingApprovalsBelongToOneSession(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r.answerAsks(ctx, "always")
	p := r.policy(`{"rules": {"shell": "ask"}}`)
	r.run(ctx, p, true, "make test")
	// The same process, the same session, a later turn: covered.
	r.run(ctx, p, false, "make test")
	// Another session's standing approvals are its own: without a terminal the ask is a denial.
	other := newRig(t)
	other.run(ctx, p, false, "make test")
	if got := r.decisions()[1]; got.Source != gate.SourceStanding || got.Action != "allow" {
		t.Fatalf("second turn: %+v", got)
	}
	if got := other.decisions()[0]; got.Source != gate.SourceNoTerminal || got.Action != "deny" {
		t.Fatalf("other session: %+v", got)
	}
	// strict asks afresh for every side-effecting call: no standing approval covers it.
	strict := r.policy(`{"mode": "strict", "rules": {"shell": "allow"}}`)
	r.run(ctx, strict, false, "make test")
	if got := r.decisions()[2]; got.Action != "deny" || got.Source != gate.SourceNoTerminal {
		t.Fatalf("strict: %+v", got)
	}
}

func TestWithoutATerminalAnAskIsADenialNamingTheRule(t *testing.T) {
	r := newRig(t)
	out := r.run(context.Background(), r.policy(`{"rules": {"shell": {"*": "ask"}}}`), false, "make")
	if out.Reason != events.FinishCompleted || r.tool.runs.Load() != 0 || len(r.asks()) != 0 {
		t.Fatalf("outcome %+v runs %d asks %d", out, r.tool.runs.Load(), len(r.asks()))
	}
	for _, p := range r.payloads() {
		if b, ok := p.(events.ToolBlocked); ok {
			if b.Category != "denied" || !strings.Contains(b.Fix, `add permission.rules.shell {"make": "allow"} after that rule in the global layer`) {
				t.Fatalf("blocked %+v", b)
			}
			return
		}
	}
	t.Fatal("no blocked event")
}

func TestCatastrophicCommandsAreDeniedInEveryMode(t *testing.T) {
	for _, mode := range []string{"standard", "strict", "allow_all"} {
		r := newRig(t)
		r.run(context.Background(), r.policy(`{"mode": "`+mode+`", "rules": {"shell": "allow"}}`), true, "sudo rm -rf --no-preserve-root /")
		d := r.decisions()[0]
		if d.Action != "deny" || d.Source != gate.SourceRisk || r.tool.runs.Load() != 0 {
			t.Fatalf("%s: %+v runs %d", mode, d, r.tool.runs.Load())
		}
	}
}

// A turn interrupted while it waits for an answer ends interrupted with the asked call
// settled cancelled (it never ran) and its ask closed; the answer that arrives later is
// refused (ask_not_pending: docs/permissions.md, "Recovery"), installs nothing, and the
// session's next turn runs normally.
func TestATurnInterruptedWhileWaitingIsRecoverable(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(r.asks()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	p := r.policy(`{"rules": {"shell": "ask"}}`)
	out := r.run(ctx, p, true, "make test")
	if out.Reason != events.FinishInterrupted || r.tool.runs.Load() != 0 {
		t.Fatalf("outcome %+v runs %d", out, r.tool.runs.Load())
	}
	ask := r.asks()[0]
	var settled *events.ToolSettled
	for _, e := range r.payloads() {
		if s, ok := e.(events.ToolSettled); ok && s.CallID == ask.CallID {
			settled = &s
		}
	}
	if settled == nil || settled.Outcome != string(tools.OutcomeCancelled) {
		t.Fatalf("the asked call settled as %+v", settled)
	}
	res, err := r.handlers.AnswerPermission(context.Background(), &commands.AnswerPermission{Meta: commands.Meta{CommandID: "late"},
		Answer: answers.Answer{SessionID: r.session, AskID: ask.AskID, CallID: ask.CallID, Reply: "always"}})
	if err != nil || domain.CodeOf(res.Err()) != answers.CodeAskNotPending {
		t.Fatalf("late answer: %v %v", err, res.Err())
	}
	inbox := commands.Inbox{Store: r.store, Registry: r.reg, Feed: r.feed}
	if _, answered, err := inbox.Answered(context.Background(), r.session, ask.AskID); err != nil || answered {
		t.Fatalf("the late answer was recorded (%v)", err)
	}
	if closed, err := inbox.Closed(context.Background(), r.session, ask.AskID); err != nil || !closed {
		t.Fatalf("the ask is not closed (%v)", err)
	}
	// Nothing was installed by the late answer: the next turn still asks (a denial here).
	out = r.run(context.Background(), p, false, "make test")
	if out.Reason != events.FinishCompleted || r.tool.runs.Load() != 0 || r.granted() != nil {
		t.Fatalf("next turn %+v runs %d grants %v", out, r.tool.runs.Load(), r.granted())
	}
}

// An answer for an ask the session never put is refused: nobody can approve a call before it
// exists (the inbox is read from its start, so an early answer would otherwise wait there).
func TestAnAnswerCannotComeBeforeItsAsk(t *testing.T) {
	r := newRig(t)
	res, err := r.handlers.AnswerPermission(context.Background(), &commands.AnswerPermission{Meta: commands.Meta{CommandID: "early"},
		Answer: answers.Answer{SessionID: r.session, AskID: "ask_c1", CallID: "c1", Reply: "always"}})
	if err != nil || res.Error == nil || res.Error.Code != commands.CodeAskNotFound {
		t.Fatalf("early answer: %+v %v", res, err)
	}
	recs, _ := r.store.ReadStream(context.Background(), commands.InboxStream(r.session), 0, 10)
	if len(recs) != 0 {
		t.Fatalf("the inbox holds %d events", len(recs))
	}
}
