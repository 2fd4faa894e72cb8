package acp_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// conformanceScript plays the session ops/testdeps/acp/conformance.mjs drives: a write that
// asks (the workspace's zuno.json makes edits ask), a plan, a write whose ask is cancelled,
// and a delegation to an explorer child whose report comes back.
const conformanceScript = `{"turns": [
  {"text": "Writing it.", "toolCalls": [{"id": "call_w", "name": "write", "arguments": {"path": "greeting.txt", "content": "hello\n"}}]},
  {"text": "Wrote greeting.txt."},
  {"toolCalls": [{"id": "call_p", "name": "plan_update", "arguments": {"action": "create", "title": "Release", "steps": [{"title": "Tag"}, {"title": "Publish"}]}}]},
  {"text": "Planned."},
  {"text": "Overwriting.", "toolCalls": [{"id": "call_x", "name": "write", "arguments": {"path": "greeting.txt", "content": "gone\n"}}]},
  {"text": "One lane.", "toolCalls": [{"id": "call_t", "name": "task", "arguments": {"agent": "explorer", "objective": "lane A: map the lexer", "deliverable": "a report", "instructions": "read only", "success_evidence": "citations", "scope": {"include": ["lexer/"]}, "background": true}}]},
  {"text": "Waiting for the lane."},
  {"text": "Integrated lane A."},
  {"text": "Done."}
],
"sessions": [{"when": "lane A", "turns": [{"text": "Lexer: tokens end at lexer.go:41."}]}]}`

// editsAsk is the global configuration of the tests: every edit asks permission.
const editsAsk = `{"permission": {"rules": {"edit": "ask"}}}`

// sdkDir is where CI installs the official TypeScript client SDK (npm ci --prefix
// ops/testdeps/acp).
const sdkDir = "../../ops/testdeps/acp"

// needNode skips the test when node or the SDK is missing, and fails it under CI, which
// installs both.
func needNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(sdkDir, "node_modules", "@agentclientprotocol", "sdk", "package.json"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI must install node and the ACP SDK (npm ci --prefix ops/testdeps/acp): %v", err)
		}
		t.Skipf("SKIP: node or @agentclientprotocol/sdk missing (run npm ci --prefix ops/testdeps/acp): %v", err)
	}
	return node
}

// TestConformanceTypeScriptSDK drives `zuno acp` with the official client SDK through
// initialize, session/new, a prompt whose tool call asks permission (answered by the client),
// a plan update, a cancelled prompt, a delegated child's report, and session/load in a new
// process, whose replay must be the history seen live (the script asserts the protocol side);
// here the log is held to what the client saw.
func TestConformanceTypeScriptSDK(t *testing.T) {
	node := needNode(t)
	w := newWorld(t, conformanceScript, editsAsk, map[string]string{"lexer/lexer.go": "package lexer\n"})
	out, stderrText, err := runSDKScript(t, node, w, "conformance.mjs")
	stderr := bytes.NewBufferString(stderrText)
	if err != nil {
		t.Fatalf("conformance.mjs: %v\n%s\nthe log:\n%s", err, stderr.String(), w.run("events", "read"))
	}
	if strings.Contains(stderr.String(), "DATA RACE") {
		t.Errorf("an agent process raced:\n%s", stderr.String())
	}
	var seen struct {
		SessionID  string          `json:"sessionId"`
		TaskReport json.RawMessage `json:"taskReport"`
		Prompts    []struct {
			Prompt     string `json:"prompt"`
			StopReason string `json:"stopReason"`
		} `json:"prompts"`
	}
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("the script's report: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(filepath.Join(w.dir, "greeting.txt")); string(got) != "hello\n" {
		t.Errorf("greeting.txt = %q: the approved write ran, the cancelled one did not", got)
	}

	// The log holds what the client did, as any face's commands: the reply recorded with
	// the actor acp, the cancelled turn interrupted, and the task report the client read.
	evs := w.events(seen.SessionID)
	var answers, interrupted []map[string]any
	var report json.RawMessage
	for _, e := range evs {
		switch e.Type {
		case "session.permission.answered.1":
			answers = append(answers, e.data(t))
		case "session.turn.finished.1":
			if d := e.data(t); d["reason"] == "interrupted" {
				interrupted = append(interrupted, d)
			}
		case "session.user_message.appended.1":
			var d struct {
				TaskReport json.RawMessage `json:"taskReport"`
			}
			json.Unmarshal(e.Data, &d)
			if len(d.TaskReport) > 0 {
				report = d.TaskReport
			}
		}
	}
	if len(answers) != 1 || answers[0]["reply"] != "once" {
		t.Errorf("answers = %v, want the client's one reply once", answers)
	}
	if len(interrupted) != 1 {
		t.Errorf("interrupted turns = %d, want the cancelled prompt's", len(interrupted))
	}
	if !jsonEqual(t, report, seen.TaskReport) {
		t.Errorf("the client's task report\n%s\nis not the log's\n%s", seen.TaskReport, report)
	}
	for _, e := range evs {
		if e.Type == "session.permission.answered.1" && e.Metadata.Actor != "acp" {
			t.Errorf("the reply's actor = %q, want acp", e.Metadata.Actor)
		}
	}
	if len(seen.Prompts) != 4 {
		t.Errorf("prompts = %d, want 4", len(seen.Prompts))
	}
	// What the editor drove is a log like any other: its chains and read models verify, and
	// its sessions replay through this build with the same decisions (as every testscript's).
	if out := w.run("verify"); !strings.Contains(out, "read models: no drift") {
		t.Errorf("zuno verify:\n%s", out)
	}
	w.run("replay", "--all", "--verify")
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// event is one line of zuno events read --format json.
type event struct {
	Type     string          `json:"type"`
	Stream   string          `json:"stream"`
	Data     json.RawMessage `json:"data"`
	Metadata struct {
		Actor string `json:"actor"`
	} `json:"metadata"`
}

func (e event) data(t testing.TB) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(e.Data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// events reads the session's events, and its inbox's, from the log through another process.
func (w *world) events(sid string) []event {
	w.t.Helper()
	var out []event
	for _, line := range strings.Split(strings.TrimSpace(w.run("events", "read", "--format", "json")), "\n") {
		var e event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			w.t.Fatalf("events read: %v: %s", err, line)
		}
		if strings.HasSuffix(e.Stream, sid) {
			out = append(out, e)
		}
	}
	return out
}

// runSDKScript runs one of ops/testdeps/acp's scripts with node in the world's workspace,
// against the built zuno: its standard output, its standard error, and how it ended.
func runSDKScript(t *testing.T, node string, w *world, name string) ([]byte, string, error) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join(sdkDir, name))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, script)
	cmd.Dir = w.dir
	cmd.Env = append(w.env, "ZUNO_BIN="+zuno(t), "WORKSPACE="+w.dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	return out, stderr.String(), err
}
