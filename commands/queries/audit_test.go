package queries_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// auditLog is a real SQLite event log whose sessions are recorded by the turn driver through
// the real OpenAI Chat Completions adapter, over HTTP on loopback, so every step has a
// receipt and a wire record.
type auditLog struct {
	path     string
	store    *sqlstore.Store
	registry *events.Registry
	handlers *commands.Handlers
	server   *httptest.Server
	steps    atomic.Int64 // tool steps the server answers before "done", per turn
	answered atomic.Int64
}

func newAuditLog(tb testing.TB) *auditLog {
	tb.Helper()
	l := &auditLog{path: filepath.Join(tb.TempDir(), "events.db"), registry: events.NewRegistry(events.AllPayloads()...)}
	l.open(tb)
	l.server = httptest.NewServer(http.HandlerFunc(l.serve))
	tb.Cleanup(l.server.Close)
	return l
}

func (l *auditLog) open(tb testing.TB) {
	tb.Helper()
	store, err := sqlstore.OpenSQLite(context.Background(), l.path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	l.store = store
	l.handlers = commands.NewHandlers(store, l.registry, commands.SystemClock{}, nil)
}

// serve streams a tool call while the turn has steps left, then "done". Texts carry HTML
// characters and non-ASCII text, which the encodings escape differently.
func (l *auditLog) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	i := l.answered.Add(1)
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(choice string) {
		fmt.Fprintf(w, "data: {\"id\":\"c%d\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[%s]}\n\n", i, choice)
	}
	if l.steps.Add(-1) >= 0 {
		chunk(`{"index":0,"delta":{"role":"assistant","content":"step <a> & é"},"finish_reason":null}`)
		chunk(fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_0","type":"function","function":{"name":"look","arguments":"{\"n\":%d}"}}]},"finish_reason":null}`, i))
		chunk(`{"index":0,"delta":{},"finish_reason":"tool_calls"}`)
	} else {
		chunk(`{"index":0,"delta":{"role":"assistant","content":"done"},"finish_reason":null}`)
		chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (l *auditLog) create(tb testing.TB, id string) {
	tb.Helper()
	res, err := l.handlers.CreateSession(context.Background(), &commands.CreateSession{Meta: commands.Meta{CommandID: "create-" + id, Actor: "user"},
		Create: session.Create{SessionID: id, Title: "audit", Agent: "build"}})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		tb.Fatal(err)
	}
}

// turn runs one turn of steps tool calls and a last answer in session id.
func (l *auditLog) turn(tb testing.TB, id, text string, steps int) {
	tb.Helper()
	l.steps.Store(int64(steps))
	a, _ := agent.Resolve("build", nil, true)
	a.Tools = []string{"look"}
	d := &turn.Driver{Store: l.store, Registry: l.registry, Clock: commands.SystemClock{}}
	p := openai.New(openai.Options{Name: "audit", BaseURL: l.server.URL + "/v1", APIKey: "none", IgnoreEnv: true})
	out, err := d.Run(context.Background(), turn.Request{Meta: commands.Meta{CommandID: "turn-" + uuid.NewString(), Actor: "user"},
		SessionID: id, Text: text, Agent: a, Provider: p, ProviderName: "audit", Model: model.ModelInfo{ID: "m"}, Tools: []turn.Tool{lookTool{}}})
	if err != nil || out.Steps != steps+1 {
		tb.Fatalf("turn: %+v %v", out, err)
	}
}

func (l *auditLog) queries() *queries.Queries { return queries.New(l.store, l.registry, nil, nil) }

// lookTool answers a call with its arguments.
type lookTool struct{}

func (lookTool) Declaration() tools.Declaration {
	return tools.Declaration{Name: "look", Policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}}
}
func (lookTool) Spec() tools.Spec {
	return tools.Spec{Name: "look", Description: "looks <here> & there", Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)}
}
func (lookTool) WritesWorkspace() bool { return false }
func (lookTool) Validate(args json.RawMessage) (tools.Parsed, error) {
	return tools.Parsed{Args: args}, nil
}
func (lookTool) Execute(_ context.Context, inv tools.Invocation) tools.Result {
	return tools.Result{Outcome: tools.OutcomeCompleted, Output: "seen <" + string(inv.Args.(json.RawMessage)) + "> ✓"}
}

// counts are the receipts and wire records a session's own stream holds.
func (l *auditLog) counts(tb testing.TB, id string) (receipts, wire int) {
	tb.Helper()
	recs, err := l.store.ReadStream(context.Background(), commands.SessionStream(id), 0, 1<<30)
	if err != nil {
		tb.Fatal(err)
	}
	for _, r := range recs {
		p, err := l.registry.Decode(r)
		if err != nil {
			tb.Fatal(err)
		}
		switch e := p.(type) {
		case events.PromptAssembled:
			receipts++
		case events.ProviderRequest:
			if e.Status != events.RequestStarted && e.Wire != nil {
				wire++
			}
		}
	}
	return receipts, wire
}

func audit(tb testing.TB, q *queries.Queries, id string) queries.SessionAudit {
	tb.Helper()
	a, err := q.AuditSession(context.Background(), id, provider.NewWireSums().Sum)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}

// TestAuditSessionVerifiesEveryReceiptAndWireRecord records two turns of tool calls, a fork
// after the first and a turn on the fork, and checks that the one-pass audit verifies every
// receipt and wire record of both, and that each step also verifies one by one (debug prompt
// --wire's path), so the two agree.
func TestAuditSessionVerifiesEveryReceiptAndWireRecord(t *testing.T) {
	l := newAuditLog(t)
	l.create(t, "ses_a")
	l.turn(t, "ses_a", "first <turn> & ü", 4)
	head, err := l.store.ReadStream(context.Background(), "session-ses_a", 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	l.turn(t, "ses_a", "second turn", 3)
	res, err := l.handlers.ForkSession(context.Background(), &commands.ForkSession{Meta: commands.Meta{CommandID: "fork", Actor: "user"},
		SessionID: "ses_f", SourceStream: "session-ses_a", SourceRevision: head[len(head)-1].StreamRevision})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		t.Fatal(err)
	}
	l.turn(t, "ses_f", "on the fork", 2)

	q := l.queries()
	for _, id := range []string{"ses_a", "ses_f"} {
		receipts, wire := l.counts(t, id)
		got := audit(t, q, id)
		if got.Fault != nil || got.Receipts != receipts || got.Wire != wire || receipts == 0 || wire != receipts {
			t.Fatalf("%s: audit %+v (fault %+v), want %d receipts and %d wire records", id, got, got.Fault, receipts, wire)
		}
		for step := 1; step <= receipts; step++ {
			if _, _, err := q.PromptWithWire(context.Background(), id, step, false, provider.RenderWire); err != nil {
				t.Fatalf("%s step %d wire: %v", id, step, err)
			}
		}
	}

	// The history the fork continues, changed behind its back, is the fork's fault.
	raw, err := sql.Open("sqlite", l.path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE event_log SET data = replace(data, 'first \u003cturn', 'first \u003ctUrn') WHERE event_id = ?`, head[1].ID); err != nil {
		t.Fatal(err)
	}
	l.open(t)
	if got := audit(t, l.queries(), "ses_f"); got.Fault == nil || got.Fault.Code != queries.CodeForkSource {
		t.Fatalf("fork of a changed history: %+v", got.Fault)
	}
}

// TestAuditSessionFindsAnAlteredByte alters the SQLite file directly, one byte at a time, and
// checks that the audit names the event the change is first seen at, with the specified code
// (docs/formats/receipts.md §10): a blob's byte at the receipt recording it, a user message's
// byte at the next receipt, a recorded body digest at its request. The chain is not re-hashed:
// zuno verify's chain walk reports that separately; the audit must stand on its own.
func TestAuditSessionFindsAnAlteredByte(t *testing.T) {
	l := newAuditLog(t)
	l.create(t, "ses_a")
	l.turn(t, "ses_a", "alter me", 6)
	raw, err := sql.Open("sqlite", l.path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	recs, err := l.store.ReadStream(context.Background(), "session-ses_a", 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var receipts, wires, users []events.Recorded
	for _, r := range recs {
		p, _ := l.registry.Decode(r)
		switch e := p.(type) {
		case events.PromptAssembled:
			receipts = append(receipts, r)
		case events.ProviderRequest:
			if e.Wire != nil && e.Status != events.RequestStarted {
				wires = append(wires, r)
			}
		case events.UserMessageAppended:
			users = append(users, r)
		}
	}
	if len(receipts) != 7 || len(wires) != 7 || len(users) != 1 {
		t.Fatalf("%d receipts, %d wire records, %d user messages", len(receipts), len(wires), len(users))
	}
	for _, tc := range []struct {
		name       string
		at         events.Recorded
		find, repl string
		wantAt     events.Recorded
		code       string
	}{
		{"a tool declaration's byte", receipts[0], `looks `, `LOOKS `, receipts[0], "blob_digest"},
		{"a user message byte", users[0], `"alter me"`, `"altar me"`, receipts[0], "conversation_digest"},
		{"a wire digest digit", wires[4], `"requestSha256":"`, `"requestSha256":"0`, wires[4], queries.CodeWireMismatch},
		{"a conversation digest digit", receipts[5], `"conversationDigest":"`, `"conversationDigest":"0`, receipts[5], "conversation_digest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := raw.Exec(`UPDATE event_log SET data = replace(data, ?, ?) WHERE event_id = ?`, tc.find, tc.repl, tc.at.ID)
			if n, _ := res.RowsAffected(); err != nil || n != 1 {
				t.Fatalf("alter: %v (%d rows)", err, n)
			}
			defer raw.Exec(`UPDATE event_log SET data = replace(data, ?, ?) WHERE event_id = ?`, tc.repl, tc.find, tc.at.ID)
			l.open(t) // a fresh store: nothing read before the change is reused
			got := audit(t, l.queries(), "ses_a")
			if got.Fault == nil || got.Fault.EventID != tc.wantAt.ID || got.Fault.Code != tc.code || got.Fault.Position != tc.wantAt.Position {
				t.Fatalf("audit %+v, fault %+v; want %s at %s (position %d)", got, got.Fault, tc.code, tc.wantAt.ID, tc.wantAt.Position)
			}
		})
	}
	l.open(t)
	if got := audit(t, l.queries(), "ses_a"); got.Fault != nil {
		t.Fatalf("after undoing every change: %+v", got.Fault)
	}
}
