package bg

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/tools"
)

func TestDeclarationClassifiesByAction(t *testing.T) {
	d := NewTool(nil).Declaration()
	if d.Name != "bg" || !d.Mixed() {
		t.Fatalf("declaration %+v", d)
	}
	ro := tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}
	for _, a := range []string{"list", "output", "wait", "artifact"} {
		if got := d.PolicyFor(a); got != ro {
			t.Errorf("%s: %+v", a, got)
		}
	}
	strict := tools.Policy{SideEffect: tools.SideEffecting, Replay: tools.Never, Concurrency: tools.Exclusive}
	for _, a := range []string{"cancel", "", "kill", "LIST"} {
		if got := d.PolicyFor(a); got != strict {
			t.Errorf("%q: %+v, want the strictest policy", a, got)
		}
	}
	if _, err := tools.NewRegistry(d); err != nil {
		t.Fatal(err)
	}
}

func TestSpec(t *testing.T) {
	tool := NewTool(nil)
	s := tool.Spec()
	if s.Name != "bg" || s.Description == "" || tool.WritesWorkspace() {
		t.Fatalf("spec %+v", s)
	}
	var schema struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type    string   `json:"type"`
			Enum    []string `json:"enum"`
			Minimum *int     `json:"minimum"`
		} `json:"properties"`
		Required             []string `json:"required"`
		AdditionalProperties *bool    `json:"additionalProperties"`
	}
	if err := json.Unmarshal(s.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties ||
		len(schema.Required) != 1 || schema.Required[0] != "action" {
		t.Fatalf("schema %s", s.Schema)
	}
	for _, name := range known {
		if _, ok := schema.Properties[name]; !ok {
			t.Errorf("schema lacks %s", name)
		}
	}
	if strings.Join(schema.Properties["action"].Enum, ",") != strings.Join(actions, ",") {
		t.Errorf("action enum %v", schema.Properties["action"].Enum)
	}
	if c := schema.Properties["cursor"]; c.Type != "integer" || c.Minimum == nil || *c.Minimum != 0 {
		t.Errorf("cursor %+v", c)
	}
}

func TestValidate(t *testing.T) {
	tool := NewTool(nil)
	for _, c := range []struct {
		args   string
		action string
		field  string // "" = valid
	}{
		{`{"action":"list"}`, "list", ""},
		{` {"action":"list"} `, "list", ""},
		{`{"action":"output","taskID":"bg_1"}`, "output", ""},
		{`{"action":"output","taskID":"bg_1","cursor":0,"limit":100}`, "output", ""},
		{`{"action":"output","taskID":"bg_1","cursor":12.0,"limit":1e9}`, "output", ""},
		{`{"action":"output","taskID":"bg_1","limit":-3}`, "output", ""},
		{`{"action":"output","taskID":"bg_1","limit":1e300}`, "output", ""},
		{`{"action":"output","taskID":"bg_1","cursor":null,"limit":null}`, "output", ""},
		{`{"action":"wait","taskID":"bg_1","timeoutMs":1000}`, "wait", ""},
		{`{"action":"wait","taskID":"bg_1","timeoutMs":99999999999999999999}`, "wait", ""},
		{`{"action":"artifact","outputPath":"/a/b"}`, "artifact", ""},
		{`{"action":"artifact","outputPath":"/a/b","cursor":5}`, "artifact", ""},
		{`{"action":"cancel","taskID":"bg_1"}`, "cancel", ""},
		{`{"action":"list","taskID":null}`, "list", ""},
		{"{ \"action\" :\n \"output\", \"taskID\": \"bg_1\", \"cursor\":  5 , \"limit\":\tnull }", "output", ""},

		{``, "", "arguments"},
		{`null`, "", "action"},
		{`[]`, "", "arguments"},
		{`"list"`, "", "arguments"},
		{`{"action":"list"} {}`, "", "arguments"},
		{`{"action":"list"`, "", "arguments"},
		{`{}`, "", "action"},
		{`{"action":""}`, "", "action"},
		{`{"action":"kill"}`, "", "action"},
		{`{"action":"LIST"}`, "", "action"},
		{`{"action":1}`, "", "action"},
		{`{"Action":"list"}`, "", "Action"},
		{`{"action":"list","extra":1}`, "", "extra"},
		{`{"action":"list","taskID":"bg_1"}`, "", "taskID"},
		{`{"action":"output"}`, "", "taskID"},
		{`{"action":"output","taskID":""}`, "", "taskID"},
		{`{"action":"output","taskID":7}`, "", "taskID"},
		{`{"action":"wait"}`, "", "taskID"},
		{`{"action":"cancel"}`, "", "taskID"},
		{`{"action":"cancel","taskID":"bg_1","cursor":0}`, "", "cursor"},
		{`{"action":"output","taskID":"bg_1","outputPath":"/x"}`, "", "outputPath"},
		{`{"action":"output","taskID":"bg_1","timeoutMs":5}`, "", "timeoutMs"},
		{`{"action":"artifact"}`, "", "outputPath"},
		{`{"action":"artifact","outputPath":" "}`, "", "outputPath"},
		{`{"action":"artifact","outputPath":"/x","taskID":"bg_1"}`, "", "taskID"},
		{`{"action":"output","taskID":"bg_1","cursor":-1}`, "", "cursor"},
		{`{"action":"output","taskID":"bg_1","cursor":1.5}`, "", "cursor"},
		{`{"action":"output","taskID":"bg_1","cursor":"10"}`, "", "cursor"},
		{`{"action":"output","taskID":"bg_1","cursor":1e300}`, "", "cursor"},
		{`{"action":"output","taskID":"bg_1","limit":"big"}`, "", "limit"},
		{`{"action":"output","taskID":"bg_1","limit":2.5}`, "", "limit"},
		{`{"action":"wait","taskID":"bg_1","timeoutMs":-1}`, "", "timeoutMs"},
	} {
		parsed, err := tool.Validate(json.RawMessage(c.args))
		action := parsed.Action
		if c.field == "" {
			if err != nil || action != c.action {
				t.Errorf("%s: action %q, err %v; want %q", c.args, action, err, c.action)
			}
			continue
		}
		var de *domain.Error
		if !errors.As(err, &de) || de.Field != c.field || de.Fix == "" || action != "" {
			t.Errorf("%s: action %q err %v; want a *domain.Error on %q", c.args, action, err, c.field)
		}
	}

	// Clamping happens in validation, so Execute never sees an absurd value.
	a, _ := parseArgs(json.RawMessage(`{"action":"wait","taskID":"x","timeoutMs":99999999999999999999,"limit":1e300}`))
	if a.Timeout != MaxWaitTimeout || a.Limit <= MaxLimit {
		t.Fatalf("parsed %+v", a)
	}
	a, _ = parseArgs(json.RawMessage(`{"action":"wait","taskID":"x"}`))
	if a.Timeout != DefaultWaitTimeout {
		t.Fatalf("default timeout %v", a.Timeout)
	}
}

// One bg wait observation lasts at most 60 s (seeds 000): the old tool accepted 10 minutes
// and defaulted to 30 s.
func TestWaitIsOneObservationOfAtMostSixtySeconds(t *testing.T) {
	for _, c := range []struct {
		args string
		want time.Duration
	}{
		{`{"action":"wait","taskID":"x"}`, 60 * time.Second},
		{`{"action":"wait","taskID":"x","timeoutMs":60000}`, 60 * time.Second},
		{`{"action":"wait","taskID":"x","timeoutMs":60001}`, 60 * time.Second},
		{`{"action":"wait","taskID":"x","timeoutMs":600000}`, 60 * time.Second},
		{`{"action":"wait","taskID":"x","timeoutMs":1500}`, 1500 * time.Millisecond},
		{`{"action":"wait","taskID":"x","timeoutMs":0}`, 0},
	} {
		a, err := parseArgs(json.RawMessage(c.args))
		if err != nil || a.Timeout != c.want {
			t.Errorf("%s: timeout %v, err %v; want %v", c.args, a.Timeout, err, c.want)
		}
	}
}

func execute(t *testing.T, tool *Tool, args string) tools.Result {
	t.Helper()
	parsed, err := tool.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatalf("Validate(%s): %v", args, err)
	}
	return tool.Execute(context.Background(), tools.Invocation{SessionID: "s", CallID: "c", Parsed: parsed})
}

func details[T any](t *testing.T, r tools.Result) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.Metadata.Details, &v); err != nil {
		t.Fatalf("details %s: %v", r.Metadata.Details, err)
	}
	return v
}

func TestExecuteActions(t *testing.T) {
	root := t.TempDir()
	m := newManager(t, WithArtifactRoots(root))
	tool := NewTool(m)

	r := execute(t, tool, `{"action":"list"}`)
	if r.Outcome != tools.OutcomeCompleted || r.Output != "no background tasks" {
		t.Fatalf("empty list: %+v", r)
	}

	done := start(t, m, `printf 'one\ntwo\n'; exit 2`)
	settled(t, m, done.ID)
	running := start(t, m, "echo waiting; sleep 300")
	eventually(t, "output", func() bool { w, _ := m.Output(context.Background(), running.ID, nil, 0); return w.TotalWritten > 0 })

	r = execute(t, tool, `{"action":"list"}`)
	list := details[struct{ Tasks []TaskInfo }](t, r)
	if r.Outcome != tools.OutcomeCompleted || len(list.Tasks) != 2 ||
		!strings.Contains(r.Output, done.ID+" status=exited exitCode=2") ||
		!strings.Contains(r.Output, running.ID+" status=running") {
		t.Fatalf("list: %+v", r)
	}

	r = execute(t, tool, `{"action":"output","taskID":"`+done.ID+`","cursor":4,"limit":2}`)
	w := details[Window](t, r)
	if r.Outcome != tools.OutcomeCompleted || w.Text != "" || w.WindowFrom != 4 || w.Cursor != 6 || !w.HasMore || !w.HasEarlier {
		t.Fatalf("output details: %+v", w)
	}
	wantHeader := "[bg output " + done.ID + " status=exited exitCode=2 windowFrom=4 cursor=6 bytes=2 hasMore=true hasEarlier=true totalWritten=8 fromDisk=false]\ntw"
	if r.Output != wantHeader {
		t.Fatalf("output text %q\nwant        %q", r.Output, wantHeader)
	}

	r = execute(t, tool, `{"action":"wait","taskID":"`+running.ID+`","timeoutMs":20}`)
	if w := details[Window](t, r); r.Outcome != tools.OutcomeCompleted || w.Status != StatusRunning ||
		!strings.HasSuffix(r.Output, "]\nwaiting\n") {
		t.Fatalf("wait: %+v", r)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	args := `{"action":"wait","taskID":"` + running.ID + `"}`
	parsed, err := tool.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatal(err)
	}
	r = tool.Execute(ctx, tools.Invocation{Parsed: parsed})
	if r.Outcome != tools.OutcomeCompleted || !strings.Contains(r.Output, "waitInterrupted=true") {
		t.Fatalf("interrupted wait: %+v", r)
	}

	r = execute(t, tool, `{"action":"cancel","taskID":"`+running.ID+`"}`)
	if info := details[TaskInfo](t, r); r.Outcome != tools.OutcomeCompleted || info.Status != StatusCancelled ||
		!strings.Contains(r.Output, "status=cancelled signal=SIGTERM") {
		t.Fatalf("cancel: %+v", r)
	}

	art := filepath.Join(root, "out.txt")
	big := strings.Repeat("x", 60000)
	if err := os.WriteFile(art, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	r = execute(t, tool, `{"action":"artifact","outputPath":"`+art+`","limit":1000000}`)
	w = details[Window](t, r)
	if r.Outcome != tools.OutcomeCompleted || w.Bytes != MaxLimit || w.WindowFrom != 0 || !w.HasMore || !w.FromDisk ||
		!strings.HasSuffix(r.Output, "]\n"+big[:MaxLimit]) || r.Metadata.WithheldOutput != nil || r.Metadata.OutputPaths != nil {
		t.Fatalf("artifact: %+v", w)
	}

	// Refusals are error results with the manager's stable code.
	for _, c := range []struct{ args, code string }{
		{`{"action":"output","taskID":"bg_missing"}`, CodeNotFound},
		{`{"action":"cancel","taskID":"bg_missing"}`, CodeNotFound},
		{`{"action":"output","taskID":"` + done.ID + `","cursor":999}`, CodeInvalidArguments},
		{`{"action":"artifact","outputPath":"/etc/passwd"}`, CodeInvalidArguments},
	} {
		r := execute(t, tool, c.args)
		if r.Outcome != tools.OutcomeError || r.ErrorCode != c.code || r.Output == "" {
			t.Errorf("%s: %+v", c.args, r)
		}
	}
	// Arguments that never passed Validate are not run: blocking is decided before
	// execution, so Execute answers a caller bug as an error.
	r = tool.Execute(context.Background(), tools.Invocation{Parsed: tools.Parsed{Action: ActionCancel, Args: `{"action":"cancel"}`}})
	if r.Outcome != tools.OutcomeError || r.ErrorCode != tools.CodeNotValidated {
		t.Fatalf("unvalidated: %+v", r)
	}
}
