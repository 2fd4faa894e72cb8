package contexttools_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/tools/contexttools"
	"github.com/zuno-run/zuno/adapters/tools/schema/schematest"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/taskcontext"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// The real handlers, and the work commands a turn's catalogue holds, are what the tool is
// written against.
var (
	_ contexttools.Commands = (*commands.Handlers)(nil)
	_ contexttools.Commands = commands.WorkCommands{}
)

type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC) }

var registry = events.NewRegistry(events.AllPayloads()...)

// harness is the tool over real handlers on a real SQLite event store, with a root session
// holding a user message, a job's report and a delegated child.
type harness struct {
	h    *commands.Handlers
	tool tools.Tool
	n    int
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	store, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "zuno.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	hs := commands.NewHandlers(store, registry, fixedClock{}, nil)
	x := &harness{h: hs, tool: contexttools.New(hs.WorkCommands())[0]}
	ctx := context.Background()
	must(t)(hs.CreateSession(ctx, &commands.CreateSession{Meta: x.meta(), Create: session.Create{SessionID: "ses_root", Title: "t", Agent: "build"}}))
	must(t)(hs.AppendUserMessage(ctx, &commands.AppendUserMessage{Meta: x.meta(),
		AppendUserMessage: session.AppendUserMessage{SessionID: "ses_root", MessageID: "msg_fix", Text: "Fix the\nlogin bug"}}))
	must(t)(hs.AppendUserMessage(ctx, &commands.AppendUserMessage{Meta: x.meta(),
		AppendUserMessage: session.AppendUserMessage{SessionID: "ses_root", MessageID: "msg_report", Text: "child says: done", InputID: "input_1",
			TaskReport: &events.TaskReport{SchemaVersion: 2, JobID: "job_1", Status: "completed"}}}))
	must(t)(hs.CreateSession(ctx, &commands.CreateSession{Meta: x.meta(),
		Create: session.Create{SessionID: "ses_child", Title: "c", Agent: "explorer", ParentSessionID: "ses_root"}}))
	return x
}

func (x *harness) meta() commands.Meta {
	x.n++
	return commands.Meta{CommandID: "cmd_" + strings.Repeat("x", x.n), Actor: "user"}
}

// must fails t when a setup command fails.
func must(t *testing.T) func(commands.Result, error) {
	return func(r commands.Result, err error) {
		t.Helper()
		if err == nil {
			err = r.Err()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func (x *harness) call(t *testing.T, sessionID, callID, args string) (tools.Result, map[string]any) {
	t.Helper()
	parsed, err := x.tool.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatalf("Validate(%s): %v", args, err)
	}
	res := x.tool.Execute(context.Background(), tools.Invocation{SessionID: sessionID, CallID: callID, Parsed: parsed})
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Output), &out); err != nil {
		t.Fatalf("output %q: %v", res.Output, err)
	}
	return res, out
}

func TestGetUpdateReplace(t *testing.T) {
	x := newHarness(t)
	res, out := x.call(t, "ses_root", "c1", `{"action": "get"}`)
	if res.Outcome != tools.OutcomeCompleted || !strings.Contains(res.Output, `"task":null`) ||
		!strings.Contains(res.Output, `"user_messages":[{"message_id":"msg_fix","summary":"Fix the login bug"}]`) {
		t.Fatalf("get before any task: %s", res.Output)
	}
	_ = out

	// A job's report never authorises a task: refused, nothing written, the current state shown.
	res, _ = x.call(t, "ses_root", "c2", `{"action": "update", "objective": "Fix login", "task_kind": "delivery", "source_message_ids": ["msg_report"]}`)
	if res.Outcome != tools.OutcomeError || res.ErrorCode != taskcontext.CodeSourceNotUser || !strings.Contains(res.Output, "Nothing was written") {
		t.Fatalf("report as source: %s %s", res.ErrorCode, res.Output)
	}

	res, _ = x.call(t, "ses_root", "c3", `{"action": "update", "objective": "Fix login", "task_kind": "delivery", "source_message_ids": ["msg_fix"],
		"checks": [{"id": "tests", "kind": "delivery", "title": "login tests pass"}]}`)
	if res.Outcome != tools.OutcomeCompleted || !strings.Contains(res.Output, `"revision":1`) || !strings.Contains(res.Output, `"summary":"Fix the login bug"`) {
		t.Fatalf("create: %s", res.Output)
	}
	// The same call again (a re-delivered turn) writes nothing and returns the first result.
	again, _ := x.call(t, "ses_root", "c3", `{"action": "update", "objective": "Fix login", "task_kind": "delivery", "source_message_ids": ["msg_fix"],
		"checks": [{"id": "tests", "kind": "delivery", "title": "login tests pass"}]}`)
	if again.Output != res.Output || !strings.Contains(string(again.Metadata.Details), `"duplicate":true`) {
		t.Fatalf("re-delivery: %s %s", again.Output, again.Metadata.Details)
	}

	res, _ = x.call(t, "ses_root", "c4", `{"action": "update", "expected_revision": 0, "constraints": ["no announcement"]}`)
	if res.ErrorCode != "stale_revision" || !strings.Contains(string(res.Metadata.Details), `"current":1`) {
		t.Fatalf("stale: %s %s", res.ErrorCode, res.Metadata.Details)
	}
	res, _ = x.call(t, "ses_root", "c5", `{"action": "update", "expected_revision": 1, "constraints": ["no announcement"]}`)
	if !strings.Contains(res.Output, `"objective":"Fix login"`) || !strings.Contains(res.Output, `"constraints":["no announcement"]`) {
		t.Fatalf("merge: %s", res.Output)
	}

	// A delegated child reads its root's context and never rewrites it.
	res, _ = x.call(t, "ses_child", "c6", `{"action": "get"}`)
	if !strings.Contains(res.Output, `"objective":"Fix login"`) {
		t.Fatalf("child get: %s", res.Output)
	}
	res, _ = x.call(t, "ses_child", "c7", `{"action": "update", "expected_revision": 2, "constraints": ["x"]}`)
	if res.ErrorCode != taskcontext.CodeChildContext {
		t.Fatalf("child update: %s %s", res.ErrorCode, res.Output)
	}

	res, _ = x.call(t, "ses_root", "c8", `{"action": "replace", "expected_revision": 2, "objective": "Audit logout", "task_kind": "inspection", "source_message_ids": ["msg_fix"]}`)
	if !strings.Contains(res.Output, `"task_id":"task-2"`) || strings.Contains(res.Output, "no announcement") {
		t.Fatalf("replace: %s", res.Output)
	}
}

func TestValidateAndPolicy(t *testing.T) {
	tl := contexttools.New(nil)[0]
	for _, bad := range []string{`{}`, `{"action": "delete"}`, `{"action": "get", "objective": "x"}`, `{"action": "update", "intent": "x"}`} {
		if _, err := tl.Validate(json.RawMessage(bad)); err == nil {
			t.Errorf("%s validated", bad)
		}
	}
	d := tl.Declaration()
	if d.PolicyFor("get").SideEffect != tools.ReadOnly || d.PolicyFor("update").SideEffect != tools.SideEffecting ||
		d.PolicyFor("bogus").SideEffect != tools.SideEffecting {
		t.Fatal("policies")
	}
}

func TestSchemaUnchanged(t *testing.T) {
	tl := contexttools.New(nil)[0]
	schematest.Unchanged(t, tl.Declaration().Name, tl.Spec().Schema)
}
