package memorytool_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/tools/memorytool"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/memory"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

type clock struct{}

func (clock) Now() time.Time { return time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC) }

func open(t *testing.T, review string) (read, update tools.Tool) {
	store, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "zuno.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h := commands.NewHandlers(store, events.NewRegistry(events.AllPayloads()...), clock{}, nil)
	ts := memorytool.New(h.WorkCommands(), memorytool.Config{Scope: "p", Review: review}, nil)
	return ts[0], ts[1]
}

func run(t *testing.T, tool tools.Tool, callID, args string) (tools.Result, map[string]any) {
	t.Helper()
	p, err := tool.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	r := tool.Execute(context.Background(), tools.Invocation{SessionID: "ses_1", CallID: callID, Parsed: p})
	var body map[string]any
	if err := json.Unmarshal([]byte(r.Output), &body); err != nil || body["notice"] != memorytool.Notice {
		t.Fatalf("result %q: %v", r.Output, err)
	}
	return r, body
}

// The tools over a real SQLite log: read, apply, stale, redelivery, review, and the arguments
// the schema refuses before anything runs.
func TestMemoryTools(t *testing.T) {
	read, update := open(t, "")
	if _, b := run(t, read, "r1", `{}`); b["revision"] != 0.0 || b["content"] != "" || b["review"] != memory.ReviewAuto {
		t.Fatalf("empty memory: %v", b)
	}
	if r, b := run(t, update, "u1", `{"content": "make check", "expectedRevision": 0}`); r.Outcome != tools.OutcomeCompleted || b["revision"] != 1.0 || b["applied"] != true {
		t.Fatalf("apply: %v", b)
	}
	if r, b := run(t, update, "u1", `{"content": "make check", "expectedRevision": 0}`); r.Outcome != tools.OutcomeCompleted || b["duplicate"] != true {
		t.Fatalf("a redelivered call writes nothing: %v", b)
	}
	if r, _ := run(t, update, "u1", `{"content": "other", "expectedRevision": 0}`); r.Outcome != tools.OutcomeError || r.ErrorCode != commands.CodeCommandIDReused {
		t.Fatalf("the same call id with other content: %+v", r)
	}
	r, b := run(t, update, "u2", `{"content": "x", "expectedRevision": 0}`)
	if r.ErrorCode != domain.CodeStaleRevision || b["error"].(map[string]any)["current"] != 1.0 {
		t.Fatalf("stale: %+v", r)
	}
	if _, b := run(t, read, "r2", `{}`); b["content"] != "make check" || b["revision"] != 1.0 {
		t.Fatalf("read back: %v", b)
	}
	for _, bad := range []string{`{"content": "x"}`, `{"expectedRevision": 1}`, `{"content": "x", "expectedRevision": -1}`,
		`{"content": "x", "expectedRevision": 1, "more": 1}`, `{"content": "` + strings.Repeat("x", memory.MaxBytes+1) + `", "expectedRevision": 1}`,
		`{"content": "a\u0000b", "expectedRevision": 1}`} {
		if _, err := update.Validate(json.RawMessage(bad)); err == nil {
			t.Errorf("%.60s validated", bad)
		}
	}
	if _, err := read.Validate(json.RawMessage(`{"x": 1}`)); err == nil {
		t.Error("memory_read took an argument")
	}
}

func TestMemoryToolsReview(t *testing.T) {
	read, update := open(t, memory.ReviewApprove)
	r, b := run(t, update, "u1", `{"content": "held", "expectedRevision": 0}`)
	if r.Outcome != tools.OutcomeCompleted || b["applied"] != false || !strings.HasPrefix(b["proposalId"].(string), "mp_") {
		t.Fatalf("held for review: %v", b)
	}
	if _, b := run(t, read, "r1", `{}`); b["revision"] != 0.0 || b["pending"] != 1.0 {
		t.Fatalf("nothing applied: %v", b)
	}
}

// Parallel reads and racing updates through the tools, under -race.
func TestMemoryToolsRace(t *testing.T) {
	read, update := open(t, "")
	var wg sync.WaitGroup
	var mu sync.Mutex
	applied := 0
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			run(t, read, "r"+string(rune('a'+i)), `{}`)
		}()
		go func() {
			defer wg.Done()
			r, _ := run(t, update, "u"+string(rune('a'+i)), `{"content": "x", "expectedRevision": 0}`)
			if r.Outcome == tools.OutcomeCompleted {
				mu.Lock()
				applied++
				mu.Unlock()
			} else if r.ErrorCode != domain.CodeStaleRevision {
				t.Errorf("%+v", r)
			}
		}()
	}
	wg.Wait()
	if applied != 1 {
		t.Fatalf("%d updates applied against revision 0, want 1", applied)
	}
}
