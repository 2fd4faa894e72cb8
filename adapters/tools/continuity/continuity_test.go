package continuity_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/tools/continuity"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// The real (measured) handlers are what the tools are written against.
var _ continuity.Backend = commands.WorkCommands{}

type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC) }

var registry = events.NewRegistry(events.AllPayloads()...)

const session = "ses_1"

// harness is the two tools over real command handlers on a real SQLite event store.
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
	for _, tl := range continuity.New(commands.NewHandlers(store, registry, fixedClock{}, nil).WorkCommands()) {
		h.tools[tl.Declaration().Name] = tl
	}
	return h
}

// call validates and executes one call as the turn driver does, and decodes its output.
func (h *harness) call(t *testing.T, name, callID, args string) (tools.Result, map[string]any) {
	t.Helper()
	tl := h.tools[name]
	parsed, err := tl.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: Validate(%s): %v", name, callID, args, err)
	}
	r := tl.Execute(context.Background(), tools.Invocation{SessionID: session, CallID: callID, Parsed: parsed})
	var out map[string]any
	if err := json.Unmarshal([]byte(r.Output), &out); err != nil {
		t.Fatalf("%s: output is not JSON: %s", name, r.Output)
	}
	if out["notice"] != continuity.DataNotice {
		t.Fatalf("%s: the result does not say it is data: %s", name, r.Output)
	}
	return r, out
}

func (h *harness) refusedAtValidate(t *testing.T, name, args, code string) {
	t.Helper()
	_, err := h.tools[name].Validate(json.RawMessage(args))
	if got := domain.CodeOf(err); got != code {
		t.Fatalf("Validate(%s): code %q (%v), want %q", args, got, err, code)
	}
}

func (h *harness) events(t *testing.T, stream string) int {
	t.Helper()
	recs, err := h.store.ReadStream(context.Background(), stream, 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

func TestPoliciesByAction(t *testing.T) {
	h := newHarness(t)
	ro := tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}
	want := map[string]map[string]tools.Policy{
		"history": {"list_windows": ro, "list_items": ro, "read_item": ro, "search_contents": ro, "": {}, "drop": {}},
		"notes": {"list_files_by_prefix": ro, "read_file": ro, "search_contents": ro,
			"append_to_file": {}, "write_file": {}, "": {}, "delete": {}},
	}
	for name, actions := range want {
		d := h.tools[name].Declaration()
		for a, p := range actions {
			if got := d.PolicyFor(a); got != p {
				t.Errorf("%s %q: %+v, want %+v", name, a, got, p)
			}
		}
		if got := d.PolicyFor("write_file"); name == "notes" && got.SideEffect != tools.SideEffecting {
			t.Errorf("notes write_file is %v", got.SideEffect)
		}
	}
	if _, err := tools.NewRegistry(h.tools["history"].Declaration(), h.tools["notes"].Declaration()); err != nil {
		t.Fatal(err)
	}
}

func TestNotesRevisionsAndIdempotence(t *testing.T) {
	h := newHarness(t)
	stream := commands.NotesStream(session)
	h.refusedAtValidate(t, "notes", `{"name": "a.md"}`, domain.CodeInvalidAction)
	h.refusedAtValidate(t, "notes", `{"action": "delete", "name": "a.md"}`, domain.CodeInvalidAction)
	h.refusedAtValidate(t, "notes", `{"action": "write_file", "name": "/etc/passwd", "content": "x", "expected_revision": 0}`, domain.CodeInvalidArgument)
	h.refusedAtValidate(t, "notes", `{"action": "write_file", "name": "../up.md", "content": "x", "expected_revision": 0}`, domain.CodeInvalidArgument)
	h.refusedAtValidate(t, "notes", `{"action": "write_file", "name": "a.md", "content": "x"}`, domain.CodeInvalidArgument)

	r, out := h.call(t, "notes", "c1", `{"action": "write_file", "name": "plans/api.md", "content": "line one\n", "expected_revision": 0}`)
	if r.Outcome != tools.OutcomeCompleted || out["revision"] != 1.0 {
		t.Fatalf("create: %s", r.Output)
	}
	again, _ := h.call(t, "notes", "c1", `{"action": "write_file", "name": "plans/api.md", "content": "line one\n", "expected_revision": 0}`)
	if again.Outcome != tools.OutcomeCompleted || !strings.Contains(again.Output, `"duplicate":true`) || h.events(t, stream) != 1 {
		t.Fatalf("a redelivered call wrote again or answered otherwise: %s, %d events", again.Output, h.events(t, stream))
	}
	reused, _ := h.call(t, "notes", "c1", `{"action": "write_file", "name": "plans/api.md", "content": "other", "expected_revision": 0}`)
	if reused.Outcome != tools.OutcomeError || reused.ErrorCode != commands.CodeCommandIDReused {
		t.Fatalf("a reused call id with other content: %s", reused.Output)
	}
	stale, out := h.call(t, "notes", "c2", `{"action": "append_to_file", "name": "plans/api.md", "content": "two\n", "expected_revision": 0}`)
	if stale.ErrorCode != domain.CodeStaleRevision || !strings.Contains(stale.Output, `"current":1`) || h.events(t, stream) != 1 {
		t.Fatalf("stale revision: %s", stale.Output)
	}
	_ = out
	if r, _ := h.call(t, "notes", "c3", `{"action": "append_to_file", "name": "plans/api.md", "content": "line two\n", "expected_revision": 1}`); r.Outcome != tools.OutcomeCompleted {
		t.Fatalf("append: %s", r.Output)
	}
	_, read := h.call(t, "notes", "c4", `{"action": "read_file", "name": "plans/api.md"}`)
	if read["content"] != "line one\nline two\n" || read["revision"] != 2.0 {
		t.Fatalf("read: %v", read)
	}
	h.call(t, "notes", "c5", `{"action": "write_file", "name": "other.md", "content": "elsewhere", "expected_revision": 0}`)
	_, list := h.call(t, "notes", "c6", `{"action": "list_files_by_prefix", "prefix": "plans/"}`)
	if n := list["notes"].([]any); len(n) != 1 || n[0].(map[string]any)["name"] != "plans/api.md" {
		t.Fatalf("list: %v", list)
	}
	_, found := h.call(t, "notes", "c7", `{"action": "search_contents", "query": "LINE TWO"}`)
	if m := found["matches"].([]any); len(m) != 1 || m[0].(map[string]any)["line"] != 2.0 {
		t.Fatalf("search: %v", found)
	}
	// Redelivered after later writes, the first call still answers with its own result.
	if r, again := h.call(t, "notes", "c1", `{"action": "write_file", "name": "plans/api.md", "content": "line one\n", "expected_revision": 0}`); again["revision"] != 1.0 || again["duplicate"] != true {
		t.Fatalf("a late redelivery: %s", r.Output)
	}
	if r, _ := h.call(t, "notes", "c8", `{"action": "read_file", "name": "nope.md"}`); r.ErrorCode != "note_not_found" {
		t.Fatalf("missing note: %s", r.Output)
	}
}

func TestNotesLimits(t *testing.T) {
	h := newHarness(t)
	big := strings.Repeat("x", 256<<10)
	if _, err := h.tools["notes"].Validate(json.RawMessage(`{"action": "write_file", "name": "big.md", "content": "` + big + `y", "expected_revision": 0}`)); domain.CodeOf(err) != domain.CodeInvalidArgument {
		t.Fatalf("a write over 256 KiB is refused before it runs: %v", domain.CodeOf(err))
	}
	for i := range 4 {
		name := string(rune('a'+i)) + ".md"
		if r, _ := h.call(t, "notes", "f"+name, `{"action": "write_file", "name": "`+name+`", "content": "`+big+`", "expected_revision": 0}`); r.Outcome != tools.OutcomeCompleted {
			t.Fatalf("document %d: %s", i, r.ErrorCode)
		}
	}
	if r, _ := h.call(t, "notes", "grow", `{"action": "append_to_file", "name": "a.md", "content": "z", "expected_revision": 1}`); r.ErrorCode != "notes_limit" {
		t.Fatalf("an append past 256 KiB: %s", r.ErrorCode)
	}
	if r, _ := h.call(t, "notes", "over", `{"action": "write_file", "name": "e.md", "content": "z", "expected_revision": 0}`); r.ErrorCode != "notes_limit" {
		t.Fatalf("past 1 MiB in all: %s", r.ErrorCode)
	}
	// Replacing a document frees its bytes.
	if r, _ := h.call(t, "notes", "shrink", `{"action": "write_file", "name": "a.md", "content": "small", "expected_revision": 1}`); r.Outcome != tools.OutcomeCompleted {
		t.Fatalf("shrink: %s", r.Output)
	}
	for i := range 96 {
		name := fmt.Sprintf("n%03d", i)
		if r, _ := h.call(t, "notes", "n"+name, `{"action": "write_file", "name": "`+name+`", "content": "z", "expected_revision": 0}`); r.Outcome != tools.OutcomeCompleted {
			t.Fatalf("note %d: %s", i, r.Output)
		}
	}
	if r, _ := h.call(t, "notes", "101", `{"action": "write_file", "name": "one-too-many", "content": "z", "expected_revision": 0}`); r.ErrorCode != "notes_limit" {
		t.Fatalf("the 101st document: %s", r.Output)
	}
}

// history over a session stream with a compaction: two windows, the evidence of each, and
// none of reasoning, the compaction request's own answer or the host's instructions.
func TestHistoryWindowsAndEvidence(t *testing.T) {
	h := newHarness(t)
	w := commands.Writer{Store: h.store, Stream: commands.SessionStream(session), Meta: commands.Meta{CommandID: "run-1", Actor: "user"},
		Clock: fixedClock{}, Revision: -1}
	_, err := w.Append(context.Background(),
		events.SessionCreated{SessionID: session, Agent: "build"},
		events.UserMessageAppended{SessionID: session, MessageID: "m1", Text: "find the flaky test"},
		events.TurnStarted{SessionID: session, TurnID: "t1", MessageID: "m1"},
		events.ProviderRequest{SessionID: session, TurnID: "t1", RequestID: "r1", Step: 1, Status: events.RequestStarted},
		events.ProviderRequest{SessionID: session, TurnID: "t1", RequestID: "r1", Step: 1, Status: events.RequestCompleted,
			Response: &events.ProviderResponse{Text: "Looking.", Reasoning: []events.Reasoning{{Summary: "SECRET-THOUGHT", EncryptedContent: "ENCRYPTED"}},
				ToolCalls: []events.ToolCall{{ID: "c1", Name: "grep", Arguments: `{"pattern":"flaky"}`}}}},
		events.ToolStarted{SessionID: session, TurnID: "t1", RequestID: "r1", CallID: "c1", Tool: "grep"},
		events.ToolSettled{SessionID: session, TurnID: "t1", RequestID: "r1", CallID: "c1", Tool: "grep", Outcome: "completed", Output: "pkg/a_test.go:12: flaky sleep"},
		events.ProviderRequest{SessionID: session, TurnID: "t1", RequestID: "rc", Step: 2, Status: events.RequestStarted, Purpose: events.PurposeCompaction},
		events.ProviderRequest{SessionID: session, TurnID: "t1", RequestID: "rc", Step: 2, Status: events.RequestCompleted, Purpose: events.PurposeCompaction,
			Response: &events.ProviderResponse{Text: "COMPACTION-ANSWER"}},
		events.TranscriptCompacted{SessionID: session, TurnID: "t1", Window: 1, RequestID: "rc", Step: 2, Through: 1, Summary: "They grepped for flaky.",
			SummaryMessage: "[zuno compaction 1: ...]\n\nThey grepped for flaky."},
		events.ProviderRequest{SessionID: session, TurnID: "t1", RequestID: "r3", Step: 3, Status: events.RequestStarted},
		events.ProviderRequest{SessionID: session, TurnID: "t1", RequestID: "r3", Step: 3, Status: events.RequestCompleted,
			Response: &events.ProviderResponse{Text: "The sleep in a_test.go is the cause."}},
	)
	if err != nil {
		t.Fatal(err)
	}
	_, win := h.call(t, "history", "h1", `{"action": "list_windows"}`)
	ws := win["windows"].([]any)
	if len(ws) != 2 || ws[1].(map[string]any)["compactionStep"] != 2.0 {
		t.Fatalf("windows: %v", win)
	}
	r, items := h.call(t, "history", "h2", `{"action": "list_items", "window": 0}`)
	kinds := []string{}
	for _, it := range items["items"].([]any) {
		kinds = append(kinds, it.(map[string]any)["kind"].(string))
	}
	if strings.Join(kinds, ",") != "user_message,assistant_text,tool_call,tool_result" {
		t.Fatalf("window 0: %v", kinds)
	}
	_, latest := h.call(t, "history", "h3", `{"action": "list_items"}`)
	if latest["window"] != 1.0 || len(latest["items"].([]any)) != 2 {
		t.Fatalf("latest window: %v", latest)
	}
	for _, leaked := range []string{"SECRET-THOUGHT", "ENCRYPTED", "COMPACTION-ANSWER"} {
		for _, args := range []string{`{"action": "list_items", "window": 0}`, `{"action": "list_items", "window": 1}`, `{"action": "search_contents", "query": "` + leaked + `"}`} {
			if r, _ := h.call(t, "history", "hx", args); strings.Contains(r.Output, leaked) {
				t.Fatalf("%s leaked through %s: %s", leaked, args, r.Output)
			}
		}
	}
	_, found := h.call(t, "history", "h4", `{"action": "search_contents", "query": "FLAKY SLEEP"}`)
	m := found["matches"].([]any)
	if len(m) != 1 {
		t.Fatalf("search: %v", found)
	}
	id := m[0].(map[string]any)["id"].(string)
	_, item := h.call(t, "history", "h5", `{"action": "read_item", "item": "`+id+`"}`)
	if item["text"] != "pkg/a_test.go:12: flaky sleep" {
		t.Fatalf("read_item: %v", item)
	}
	if r, _ := h.call(t, "history", "h6", `{"action": "read_item", "item": "h999.0"}`); r.ErrorCode != continuity.CodeItemNotFound {
		t.Fatalf("missing item: %s", r.Output)
	}
	h.refusedAtValidate(t, "history", `{"action": "read_item"}`, domain.CodeInvalidArgument)
	h.refusedAtValidate(t, "history", `{}`, domain.CodeInvalidAction)
	_ = r
}

// Concurrent creates of one note with expected_revision 0 race on the notes stream: exactly
// one is written, every other is refused with the current revision (or told to read again
// when others kept writing), and nothing is lost or doubled.
func TestNotesConcurrentWritesOneWins(t *testing.T) {
	h := newHarness(t)
	const writers = 8
	results := make(chan tools.Result, writers)
	for i := range writers {
		go func() {
			tl := h.tools["notes"]
			parsed, err := tl.Validate(json.RawMessage(fmt.Sprintf(`{"action": "write_file", "name": "race.md", "content": "writer %d", "expected_revision": 0}`, i)))
			if err != nil {
				t.Error(err)
				results <- tools.Result{}
				return
			}
			results <- tl.Execute(context.Background(), tools.Invocation{SessionID: session, CallID: fmt.Sprintf("w%d", i), Parsed: parsed})
		}()
	}
	won := 0
	for range writers {
		r := <-results
		switch {
		case r.Outcome == tools.OutcomeCompleted:
			won++
		case r.ErrorCode == domain.CodeStaleRevision, r.ErrorCode == commands.CodeContention:
		default:
			t.Errorf("unexpected result %+v", r)
		}
	}
	if won != 1 || h.events(t, commands.NotesStream(session)) != 1 {
		t.Fatalf("%d writers won, %d events", won, h.events(t, commands.NotesStream(session)))
	}
}
