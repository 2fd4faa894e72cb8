package worktools_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// The real handlers are what the tools are written against.
var _ worktools.Commands = (*commands.Handlers)(nil)

type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC) }

var registry = events.NewRegistry(events.AllPayloads()...)

const session = "ses_1"

// harness is the four tools over real command handlers on a real SQLite event store.
type harness struct {
	store *sqlstore.Store
	tools map[string]tools.Tool
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	store, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "zuno.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h := &harness{store: store, tools: map[string]tools.Tool{}}
	for _, tl := range worktools.New(commands.NewHandlers(store, registry, fixedClock{}, nil)) {
		h.tools[tl.Declaration().Name] = tl
	}
	return h
}

// call validates and executes one call the way the turn driver does.
func (h *harness) call(t *testing.T, name, callID, args string) tools.Result {
	t.Helper()
	return h.callCtx(t, context.Background(), name, callID, args)
}

func (h *harness) callCtx(t *testing.T, ctx context.Context, name, callID, args string) tools.Result {
	t.Helper()
	tl := h.tools[name]
	parsed, err := tl.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: Validate(%s): %v", name, callID, args, err)
	}
	r := tl.Execute(ctx, tools.Invocation{SessionID: session, CallID: callID, Parsed: parsed})
	if r.Outcome == tools.OutcomeBlocked {
		t.Fatalf("%s %s: Execute returned blocked: %+v", name, callID, r)
	}
	return r
}

func (h *harness) stream(t *testing.T) []events.Recorded {
	t.Helper()
	recs, err := h.store.ReadStream(context.Background(), commands.WorkStream(session), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// out is a result's Output as the model reads it.
type out struct {
	Plan  *planView `json:"plan"`
	Todos *todoView `json:"todos"`
	Error *errOut   `json:"error"`
	Note  string    `json:"note"`
	raw   map[string]json.RawMessage
}

type planView struct {
	PlanID       string `json:"plan_id"`
	Revision     uint64 `json:"revision"`
	Title        string `json:"title"`
	Status       string `json:"status"`
	Depth        int    `json:"depth"`
	ParentPlanID string `json:"parent_plan_id"`
	Steps        []struct {
		ID, Title, Status string
	} `json:"steps"`
}

type todoView struct {
	Revision uint64 `json:"revision"`
	Items    []struct {
		ID           string   `json:"id"`
		Title        string   `json:"title"`
		Status       string   `json:"status"`
		Owner        string   `json:"owner"`
		Dependencies []string `json:"dependencies"`
		PlanStepID   string   `json:"plan_step_id"`
	} `json:"items"`
}

type errOut struct {
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Fix      string   `json:"fix"`
	Field    string   `json:"field"`
	ID       string   `json:"id"`
	Expected *uint64  `json:"expected"`
	Current  *uint64  `json:"current"`
	Valid    []string `json:"valid"`
}

type detailsOut struct {
	Revision    *uint64 `json:"revision"`
	Fingerprint string  `json:"fingerprint"`
	Duplicate   bool    `json:"duplicate"`
	Code        string  `json:"code"`
	Field       string  `json:"field"`
	ID          string  `json:"id"`
	Expected    *uint64 `json:"expected"`
	Current     *uint64 `json:"current"`
}

func parseOut(t *testing.T, r tools.Result) out {
	t.Helper()
	var o out
	if err := json.Unmarshal([]byte(r.Output), &o); err != nil {
		t.Fatalf("Output is not JSON: %v\n%s", err, r.Output)
	}
	if err := json.Unmarshal([]byte(r.Output), &o.raw); err != nil {
		t.Fatal(err)
	}
	return o
}

func parseDetails(t *testing.T, r tools.Result) detailsOut {
	t.Helper()
	var d detailsOut
	if err := json.Unmarshal(r.Metadata.Details, &d); err != nil {
		t.Fatalf("Details are not JSON: %v\n%s", err, r.Metadata.Details)
	}
	return d
}

func u64(n uint64) *uint64 { return &n }

func eq(a, b *uint64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func show(p *uint64) any {
	if p == nil {
		return "nil"
	}
	return *p
}
