package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/provider/scripted"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/domain/verification"
)

// xss is one hostile text: were it ever run as markup or script, it would set window.__xss
// to its number or change the document's title (the browser test checks both).
type xss struct {
	n    int
	text string
}

// hostile are the payloads the sessions carry, in titles, prompts, tool output, file names,
// workspace paths (a receipt section's source) and AGENTS.md (a receipt section's content).
// None holds a '/', so each can be a file or directory name.
var hostile = []xss{
	{1, `<script>window.__xss=1</script>`},
	{2, `"><img src=x onerror="window.__xss=2">`},
	{3, `javascript:window.__xss=3`},
	{4, `</textarea><script>window.__xss=4</script>`},
	{5, `<svg onload="window.__xss=5">`},
	{6, `'><svg onload=document.title='pwned6'>`},
	{7, `</title><script>window.__xss=7</script>`},
	{8, `</pre><iframe srcdoc="<script>parent.__xss=8</script>">`},
	{9, `<a href="javascript:window.__xss=9" id="x9">click</a>`},
	{10, `{{.}}<style>body{display:none}</style>`},
}

// payload is hostile text number n.
func payload(n int) string { return hostile[n-1].text }

// scenario is what populate recorded.
type scenario struct {
	parent, child, receipt string
	plain                  []string
}

// populate records real sessions through the Application: a parent (orchestrator) whose turn
// makes a plan and a todo list, runs a shell command (a verification receipt), writes a file, is refused a git push by a rule
// and delegates a foreground child, whose turn reads the file; then plain sessions for the
// list. With hostile, every
// text an attacker could control carries a payload.
func populate(t *testing.T, f *fixture, plain int) scenario {
	t.Helper()
	file := "out.txt"
	title, prompt, out, answer := "Audit parent", "Check the notes and report.", "hello", "All checked."
	agents := "Project rules: be careful."
	planTitle, todoTitle := "Audit the notes", "read the notes"
	if strings.ContainsAny(filepath.Base(f.workspace), "<>") {
		file = payload(2) + ".txt"
		title, prompt, out, answer = payload(1)+" "+payload(7), payload(4)+" "+payload(8), payload(5), payload(6)+" "+payload(10)
		agents = payload(8) + "\n" + payload(9)
		planTitle, todoTitle = payload(9), payload(10)
	}
	if err := os.WriteFile(filepath.Join(f.workspace, "AGENTS.md"), []byte(agents+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.workspace, "notes.txt"), []byte(out+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	task, _ := json.Marshal(map[string]any{"agent": "explorer", "objective": "Lane A: read the notes", "deliverable": "what they say",
		"instructions": "read only", "success_evidence": "the text", "background": false})
	shell, _ := json.Marshal(map[string]any{"command": "printf '%s\\n' " + shellQuote(out)})
	write, _ := json.Marshal(map[string]any{"path": file, "content": out + "\n"})
	plan, _ := json.Marshal(map[string]any{"action": "create", "title": planTitle, "steps": []map[string]string{{"title": "delegate the reading"}}})
	todo, _ := json.Marshal(map[string]any{"items": []map[string]string{{"id": "t1", "title": todoTitle}}})
	s := scripted.Script{
		Turns: []scripted.Turn{
			{ToolCalls: []scripted.ToolCall{{ID: "call_plan", Name: "plan_update", Arguments: plan}, {ID: "call_todo", Name: "todo_update", Arguments: todo}}},
			{ToolCalls: []scripted.ToolCall{{ID: "call_sh", Name: "shell", Arguments: shell}, {ID: "call_w", Name: "write", Arguments: write},
				{ID: "call_push", Name: "shell", Arguments: json.RawMessage(`{"command":"git push origin main"}`)}}},
			{ToolCalls: []scripted.ToolCall{{ID: "call_task", Name: "task", Arguments: task}}},
			{Text: answer},
		},
		Sessions: []scripted.Session{{When: "Lane A", Turns: []scripted.Turn{
			{ToolCalls: []scripted.ToolCall{{ID: "call_r", Name: "read", Arguments: json.RawMessage(`{"path":"notes.txt"}`)}}},
			{Text: "Lane A done: " + out},
		}}},
	}
	res := f.run(app.RunTurn{Meta: meta("parent-1"), Prompt: prompt, Title: title, Model: f.script("parent", s), Agent: "orchestrator"})
	if res.Reason != "completed" {
		t.Fatalf("parent turn: %+v", res.Outcome)
	}
	if b, err := os.ReadFile(filepath.Join(f.workspace, file)); err != nil || string(b) != out+"\n" {
		t.Fatalf("the write to %q: %q %v", file, b, err)
	}
	sc := scenario{parent: res.SessionID, receipt: verification.ReceiptID(res.SessionID, "call_sh")}
	jobs, err := f.app.Queries.Jobs(context.Background(), sc.parent)
	if err != nil || len(jobs) != 1 || jobs[0].ChildSessionID == "" {
		t.Fatalf("jobs: %+v %v", jobs, err)
	}
	sc.child = childOf(jobs)
	for i := range plain {
		spec := f.script(fmt.Sprintf("plain%d", i), scripted.Script{Turns: []scripted.Turn{{Text: "ok"}}})
		r := f.run(app.RunTurn{Meta: meta(fmt.Sprintf("plain-%d", i)), Prompt: "hi", Title: fmt.Sprintf("plain session %02d", i), Model: spec})
		sc.plain = append(sc.plain, r.SessionID)
	}
	return sc
}

func childOf(jobs []delegation.JobView) string { return jobs[0].ChildSessionID }

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
