package prompt_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/events"
)

func tool(name string, writes bool) prompt.ToolDecl {
	return prompt.ToolDecl{Tool: model.Tool{Name: name, Description: "the " + name + " tool",
		Schema: json.RawMessage(`{"type": "object", "properties": {}}`)}, WritesWorkspace: writes}
}

func minimalInput() prompt.Input {
	return prompt.Input{
		Model: "m",
		Agent: prompt.AgentPrompt{Name: "build", Source: "builtin:build", Trust: prompt.TrustHost,
			Text: "You are build, an end-to-end implementation agent."},
		Conversation: []model.Message{{Role: model.RoleUser, Text: "fix the failing test"}},
	}
}

// fullInput has every lane present.
func fullInput() prompt.Input {
	in := minimalInput()
	in.Mode = prompt.ModeWork
	in.Runtime = prompt.RuntimeState{Delegates: []string{"explorer"}}
	in.GlobalAgents = &prompt.InstructionFile{Path: "/home/u/.config/zuno/AGENTS.md", Content: []byte("Answer in English.\n")}
	in.ProjectAgents = []prompt.InstructionFile{
		{Path: "/repo/pkg/sub/AGENTS.md", Content: []byte("Sub-package rules: keep it pure.\n")},
		{Path: "/repo/AGENTS.md", Content: []byte("Run `go test ./...` before finishing.\n")},
		{Path: "/repo/pkg/AGENTS.md", Content: []byte("Package rules: 中文注释可以。\n")},
	}
	in.WorkState = &prompt.WorkState{PlanRevision: 2, Plans: []events.WorkPlan{{PlanID: "plan-1", Title: "Fix", Status: "in_progress",
		Steps: []events.WorkPlanStep{{ID: "step-1", Title: "Reproduce", Status: "completed"}, {ID: "step-2", Title: "Fix", Status: "pending"}}}}}
	in.Conversation = []model.Message{
		{Role: model.RoleUser, Text: "fix the failing test"},
		{Role: model.RoleAssistant, Text: "Reading.", ToolCalls: []model.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a.go"}`}}},
		{Role: model.RoleTool, ToolCallID: "c1", Text: "package a\n"},
	}
	in.Tools = []prompt.ToolDecl{tool("task", false), tool("read", false), tool("apply_patch", true), tool("plan_update", false)}
	return in
}

func mustAssemble(t *testing.T, in prompt.Input) prompt.Assembled {
	t.Helper()
	a, err := prompt.Assemble(in)
	if err != nil {
		t.Fatalf("Assemble: %v", err)
	}
	return a
}

func ids(a prompt.Assembled) []string {
	var out []string
	for _, s := range a.Sections {
		out = append(out, s.ID)
	}
	return out
}

func TestLaneOrder(t *testing.T) {
	a := mustAssemble(t, fullInput())
	want := []string{
		"agent.build",
		"mode.work",
		prompt.SectionIntent, prompt.SectionExecution, prompt.SectionEditing, prompt.SectionVerification,
		prompt.SectionDelegation, prompt.SectionPersistence,
		"agents.global",
		"agents.project:/repo/AGENTS.md", "agents.project:/repo/pkg/AGENTS.md", "agents.project:/repo/pkg/sub/AGENTS.md",
		prompt.SectionWorkState,
	}
	if got := ids(a); !slices.Equal(got, want) {
		t.Fatalf("section ids =\n%q\nwant\n%q", got, want)
	}
	lanes := []string{prompt.LaneAgentRole, prompt.LaneMode, prompt.LaneRuntimePolicy, prompt.LaneGlobalAgents,
		prompt.LaneProjectAgents, prompt.LaneWorkState}
	last := -1
	for i, s := range a.Sections {
		rank := slices.Index(lanes, s.Lane)
		if rank < last {
			t.Errorf("section %s in lane %s comes after lane %s", s.ID, s.Lane, lanes[last])
		}
		last = rank
		if s.Order != i {
			t.Errorf("section %s has order %d at position %d", s.ID, s.Order, i)
		}
		if m := a.Request.Messages[i]; string(m.Role) != s.Role || m.Text != s.Content {
			t.Errorf("messages[%d] = %s %q, want section %s", i, m.Role, m.Text, s.ID)
		}
	}
	if got, want := len(a.Request.Messages), len(a.Sections)+3; got != want {
		t.Fatalf("request has %d messages, want %d sections + 3 conversation", got, want)
	}
	// Every lane of the canonical order is exercised by this input.
	seen := map[string]bool{}
	for _, s := range a.Sections {
		seen[s.Lane] = true
	}
	for _, l := range lanes {
		if !seen[l] {
			t.Errorf("lane %s produced no section", l)
		}
	}
}

func TestSectionMetadata(t *testing.T) {
	in := fullInput()
	a := mustAssemble(t, in)
	byID := map[string]prompt.Section{}
	for _, s := range a.Sections {
		byID[s.ID] = s
		sum := sha256.Sum256([]byte(s.Content))
		if s.SHA256 != hex.EncodeToString(sum[:]) || s.Bytes != len(s.Content) || s.EstimatedTokens != prompt.EstimateTokens(s.Content) {
			t.Errorf("%s: sha %s bytes %d tokens %d do not describe its content", s.ID, s.SHA256, s.Bytes, s.EstimatedTokens)
		}
	}
	tests := []struct {
		id, source, role, trust string
	}{
		{"agent.build", "builtin:build", "system", prompt.TrustHost},
		{"mode.work", "zuno-runtime:mode.work", "developer", prompt.TrustHost},
		{prompt.SectionIntent, "zuno-runtime:runtime.intent", "developer", prompt.TrustHost},
		{prompt.SectionWorkState, "zuno-runtime:runtime.work_state", "developer", prompt.TrustHost},
		{"agents.global", "/home/u/.config/zuno/AGENTS.md", "developer", prompt.TrustUser},
		{"agents.project:/repo/AGENTS.md", "/repo/AGENTS.md", "developer", prompt.TrustProject},
	}
	for _, tt := range tests {
		s, ok := byID[tt.id]
		if !ok {
			t.Errorf("no section %s", tt.id)
			continue
		}
		if s.Source != tt.source || s.Role != tt.role || s.Trust != tt.trust {
			t.Errorf("%s: source %q role %q trust %q, want %q %q %q", tt.id, s.Source, s.Role, s.Trust, tt.source, tt.role, tt.trust)
		}
	}
	// The source digest is the file's own digest, so a file on disk can be matched to a receipt.
	for _, f := range in.ProjectAgents {
		s := byID["agents.project:"+f.Path]
		sum := sha256.Sum256(f.Content)
		if s.SourceSHA256 != hex.EncodeToString(sum[:]) || !strings.HasSuffix(s.Content, string(f.Content)) {
			t.Errorf("%s: source digest %s does not match the file", s.ID, s.SourceSHA256)
		}
	}
	// Nearer AGENTS.md files take precedence over shallower ones, and host text over all.
	p := func(id string) int { return byID[id].Priority }
	if !(p("agents.project:/repo/AGENTS.md") < p("agents.project:/repo/pkg/AGENTS.md") &&
		p("agents.project:/repo/pkg/AGENTS.md") < p("agents.project:/repo/pkg/sub/AGENTS.md") &&
		p("agents.project:/repo/pkg/sub/AGENTS.md") < p("agents.global") && p("agents.global") < p(prompt.SectionIntent)) {
		t.Errorf("priorities do not follow trust and nearness: %+v", byID)
	}
	// The conversation follows the sections unchanged.
	if got := a.Request.Messages[len(a.Sections):]; !reflect.DeepEqual(got, in.Conversation) {
		t.Errorf("conversation = %+v, want %+v", got, in.Conversation)
	}
	// Tools are sorted by name whatever order the caller built them in.
	var names []string
	for _, tl := range a.Request.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Equal(names, []string{"apply_patch", "plan_update", "read", "task"}) {
		t.Errorf("tools = %v", names)
	}
	// No request hooks run yet: the receipt's hooks field (kept for recorded receipts) is empty.
	if h := a.Receipt.Hooks; h.Ran != nil || h.RemovedTools != nil {
		t.Errorf("hooks = %+v, want none", h)
	}
}

// toolMention finds tool names in runtime text; "task" is an English word too, so it counts
// only where the text tells the model to use it.
var toolMention = regexp.MustCompile(`\b(plan_update|plan_get|todo_get|todo_update|job_reconcile)\b|with (task)\b`)

func sectionText(a prompt.Assembled, id string) (string, bool) {
	for _, s := range a.Sections {
		if s.ID == id {
			return s.Content, true
		}
	}
	return "", false
}

func TestRuntimeSectionConditions(t *testing.T) {
	always := []string{prompt.SectionIntent, prompt.SectionExecution, prompt.SectionVerification}
	tests := []struct {
		name          string
		tools         []prompt.ToolDecl
		runtime       prompt.RuntimeState
		workState     *prompt.WorkState
		want          []string // runtime sections besides the three that are always present
		planThreshold bool
	}{
		{name: "no tools: only the unconditional sections"},
		{name: "read-only tools", tools: []prompt.ToolDecl{tool("read", false), tool("grep", false)}},
		{name: "an editing tool", tools: []prompt.ToolDecl{tool("apply_patch", true)}, want: []string{prompt.SectionEditing}},
		{name: "a shell that can write the workspace", tools: []prompt.ToolDecl{tool("shell", true)}, want: []string{prompt.SectionEditing}},
		{name: "a sandboxed read-only shell", tools: []prompt.ToolDecl{tool("shell", false)}},
		{name: "plan_update adds the plan threshold and persistence", tools: []prompt.ToolDecl{tool("plan_update", false)},
			want: []string{prompt.SectionPersistence}, planThreshold: true},
		{name: "task without delegates", tools: []prompt.ToolDecl{tool("task", false)}},
		{name: "delegates without task", runtime: prompt.RuntimeState{Delegates: []string{"explorer"}}},
		{name: "task and a delegate", tools: []prompt.ToolDecl{tool("task", false)},
			runtime: prompt.RuntimeState{Delegates: []string{"explorer"}}, want: []string{prompt.SectionDelegation}},
		{name: "durable state active", runtime: prompt.RuntimeState{DurableState: true}, want: []string{prompt.SectionPersistence}},
		{name: "a durable tool", tools: []prompt.ToolDecl{tool("todo_get", false)}, want: []string{prompt.SectionPersistence}},
		{name: "work state present", workState: &prompt.WorkState{TodoRevision: 1,
			Todos: []events.WorkItem{{ID: "todo-1", Title: "x", Status: "pending"}}}, want: []string{prompt.SectionPersistence}},
		{name: "everything", tools: []prompt.ToolDecl{tool("task", false), tool("apply_patch", true), tool("plan_update", false)},
			runtime: prompt.RuntimeState{Delegates: []string{"explorer"}},
			want:    []string{prompt.SectionEditing, prompt.SectionDelegation, prompt.SectionPersistence}, planThreshold: true},
	}
	order := []string{prompt.SectionIntent, prompt.SectionExecution, prompt.SectionEditing, prompt.SectionVerification,
		prompt.SectionDelegation, prompt.SectionPersistence}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := minimalInput()
			in.Tools, in.Runtime, in.WorkState = tt.tools, tt.runtime, tt.workState
			a := mustAssemble(t, in)
			var got []string
			for _, s := range a.Sections {
				if s.Lane == prompt.LaneRuntimePolicy {
					got = append(got, s.ID)
					if s.Source != prompt.RuntimeSource(s.ID) || s.Trust != prompt.TrustHost {
						t.Errorf("%s: source %q trust %q", s.ID, s.Source, s.Trust)
					}
				}
			}
			want := append(slices.Clone(always), tt.want...)
			slices.SortFunc(want, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
			if !slices.Equal(got, want) {
				t.Fatalf("runtime sections = %v, want %v", got, want)
			}
			exec, _ := sectionText(a, prompt.SectionExecution)
			if has := strings.Contains(exec, "Plan threshold"); has != tt.planThreshold {
				t.Errorf("plan threshold present = %v, want %v", has, tt.planThreshold)
			}
			// No runtime section names a tool the model is not offered.
			offered := map[string]bool{}
			for _, tl := range tt.tools {
				offered[tl.Name] = true
			}
			for _, s := range a.Sections {
				if s.Lane != prompt.LaneRuntimePolicy {
					continue
				}
				for _, m := range toolMention.FindAllStringSubmatch(s.Content, -1) {
					if name := m[1] + m[2]; !offered[name] {
						t.Errorf("%s mentions %s, which is not offered: %q", s.ID, name, s.Content)
					}
				}
			}
		})
	}
}

func TestDelegationAndPersistenceText(t *testing.T) {
	in := minimalInput()
	in.Tools = []prompt.ToolDecl{tool("task", false), tool("todo_get", false), tool("plan_update", false)}
	in.Runtime.Delegates = []string{"reviewer", "explorer", "explorer"}
	a := mustAssemble(t, in)
	d, _ := sectionText(a, prompt.SectionDelegation)
	if !strings.HasSuffix(d, "Agents you may delegate to: explorer, reviewer.") {
		t.Errorf("delegation = %q, want the sorted, de-duplicated roster", d)
	}
	p, _ := sectionText(a, prompt.SectionPersistence)
	if !strings.HasSuffix(p, "Tools for this state: plan_update, todo_get.") {
		t.Errorf("persistence = %q, want only the offered durable tools", p)
	}
}

func TestModeAndAbsentLanes(t *testing.T) {
	tests := []struct {
		name string
		edit func(*prompt.Input)
		want []string
	}{
		{"minimal", func(*prompt.Input) {}, []string{"agent.build", prompt.SectionIntent, prompt.SectionExecution, prompt.SectionVerification}},
		{"plan mode", func(in *prompt.Input) { in.Mode = prompt.ModePlan },
			[]string{"agent.build", "mode.plan", prompt.SectionIntent, prompt.SectionExecution, prompt.SectionVerification}},
		{"agent without a role prompt", func(in *prompt.Input) { in.Agent.Text = "" },
			[]string{prompt.SectionIntent, prompt.SectionExecution, prompt.SectionVerification}},
		{"empty and blank AGENTS.md files say nothing", func(in *prompt.Input) {
			in.GlobalAgents = &prompt.InstructionFile{Path: "/g/AGENTS.md", Content: nil}
			in.ProjectAgents = []prompt.InstructionFile{{Path: "/r/AGENTS.md", Content: []byte(" \n\t\n")}}
		}, []string{"agent.build", prompt.SectionIntent, prompt.SectionExecution, prompt.SectionVerification}},
		{"an empty work state says nothing", func(in *prompt.Input) { in.WorkState = &prompt.WorkState{PreviousReceiptID: "r1"} },
			[]string{"agent.build", prompt.SectionIntent, prompt.SectionExecution, prompt.SectionVerification}},
		{"consumed reports and settled jobs alone say nothing", func(in *prompt.Input) {
			in.WorkState = &prompt.WorkState{
				Jobs:    []prompt.Job{{ID: "job-1", Agent: "explorer", Status: prompt.JobCompleted}},
				Reports: []prompt.Report{{InputID: "in-1", JobID: "job-1", Status: prompt.ReportConsumed}},
			}
		}, []string{"agent.build", prompt.SectionIntent, prompt.SectionExecution, prompt.SectionVerification}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := minimalInput()
			tt.edit(&in)
			if got := ids(mustAssemble(t, in)); !slices.Equal(got, tt.want) {
				t.Fatalf("sections = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	a := mustAssemble(t, fullInput())
	in := fullInput()
	// The same inputs in another order: sets are sorted, AGENTS.md files by depth.
	slices.Reverse(in.Tools)
	slices.Reverse(in.ProjectAgents)
	b := mustAssemble(t, in)
	ja, _ := json.Marshal(a.Receipt)
	jb, _ := json.Marshal(b.Receipt)
	if string(ja) != string(jb) {
		t.Fatalf("receipts differ:\n%s\n%s", ja, jb)
	}
	for range 3 {
		c := mustAssemble(t, fullInput())
		if jc, _ := json.Marshal(c.Receipt); string(jc) != string(ja) {
			t.Fatal("a repeated assembly gave a different receipt")
		}
	}
	// A receipt survives the event log: encode, decode, verify.
	ev, err := events.Encode(events.DeriveID("cmd", 0), events.PromptAssembled{SessionID: "ses_1", ReceiptID: "rcp_1", PromptReceipt: a.Receipt},
		events.Metadata{CommandID: "cmd", Actor: "host"})
	if err != nil {
		t.Fatal(err)
	}
	var back events.PromptAssembled
	if err := json.Unmarshal(ev.Data, &back); err != nil {
		t.Fatal(err)
	}
	if err := prompt.Verify(back.PromptReceipt); err != nil {
		t.Fatalf("Verify after a log round trip: %v", err)
	}
	if jback, _ := json.Marshal(back.PromptReceipt); string(jback) != string(ja) {
		t.Fatal("receipt changed in a log round trip")
	}
}

func TestReceiptReconstructsRequest(t *testing.T) {
	in := fullInput()
	// Invalid UTF-8 in a tool result is replaced by JSON encoding; the request sent must be
	// the one the receipt rebuilds, not the one the caller passed.
	in.Conversation[2].Text = "bin\xff\xfeary"
	a := mustAssemble(t, in)
	if err := prompt.Verify(a.Receipt); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	req, err := prompt.Reconstruct(a.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(req, a.Request) {
		t.Fatalf("reconstructed request differs:\n%+v\n%+v", req, a.Request)
	}
	body, _ := prompt.RequestBytes(a.Request)
	sum := sha256.Sum256(body)
	if hex.EncodeToString(sum[:]) != a.Receipt.ActualDigest {
		t.Fatal("actual digest is not the digest of the request bytes")
	}
	if a.Request.Messages[len(a.Sections)+2].Text != "bin\uFFFD\uFFFDary" {
		t.Fatalf("tool result = %q", a.Request.Messages[len(a.Sections)+2].Text)
	}
	var sum64 int64
	for _, s := range a.Receipt.Sections {
		sum64 += int64(s.EstimatedTokens)
	}
	for _, p := range a.Receipt.Messages[len(a.Sections):] {
		sum64 += int64(p.EstimatedTokens)
	}
	for _, p := range a.Receipt.Tools {
		sum64 += int64(p.EstimatedTokens)
	}
	sum64 += int64(prompt.MessageOverheadTokens * len(a.Request.Messages))
	if a.Receipt.EstimatedInputTokens != sum64 {
		t.Fatalf("estimated input %d, want %d", a.Receipt.EstimatedInputTokens, sum64)
	}
}

func TestContextOverflow(t *testing.T) {
	in := fullInput()
	in.ContextWindow = 0
	fits := mustAssemble(t, in).Receipt.EstimatedInputTokens

	tests := []struct {
		name    string
		window  int64
		refused bool
	}{
		{"unknown window: the provider decides", 0, false},
		{"exactly at the window", fits, false},
		{"one token over", fits - 1, true},
		{"far over", 100, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := fullInput()
			in.ContextWindow = tt.window
			a, err := prompt.Assemble(in)
			if !tt.refused {
				if err != nil {
					t.Fatalf("Assemble: %v", err)
				}
				if a.Receipt.ContextWindow != tt.window {
					t.Fatalf("receipt window %d", a.Receipt.ContextWindow)
				}
				return
			}
			var e *prompt.ContextOverflowError
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *ContextOverflowError", err)
			}
			if e.Code() != model.CodeContextOverflow || e.EstimatedTokens != fits || e.ContextWindow != tt.window ||
				e.SectionTokens+e.ConversationTokens+e.ToolTokens+e.OverheadTokens != fits || len(e.Largest) == 0 {
				t.Fatalf("overflow = %+v", e)
			}
			if a.Receipt.AssemblyDigest != "" || len(a.Request.Messages) != 0 {
				t.Fatal("a refused prompt still produced a request or receipt")
			}
			for _, want := range []string{"context_overflow", "nothing was sent"} {
				if !strings.Contains(e.Error(), want) {
					t.Errorf("error text %q lacks %q", e.Error(), want)
				}
			}
		})
	}

	// Nothing is cut to make a prompt fit: a large AGENTS.md is refused, not truncated.
	in = minimalInput()
	in.ContextWindow = 1000
	in.ProjectAgents = []prompt.InstructionFile{{Path: "/r/AGENTS.md", Content: []byte(strings.Repeat("rule. ", 2000))}}
	_, err := prompt.Assemble(in)
	var e *prompt.ContextOverflowError
	if !errors.As(err, &e) || e.Largest[0].ID != "agents.project:/r/AGENTS.md" {
		t.Fatalf("err = %v, want an overflow naming the AGENTS.md as largest", err)
	}
}

func TestEstimateTokens(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"a", 1},
		{"abcd", 1},
		{"abcde", 2},
		{"中文", 2},
		{"ab中文", 3},
		{"\xff", 1},
		{strings.Repeat("x", 4000), 1000},
	}
	for _, tt := range tests {
		if got := prompt.EstimateTokens(tt.in); got != tt.want {
			t.Errorf("EstimateTokens(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestAssembleRejects(t *testing.T) {
	tests := []struct {
		name      string
		edit      func(*prompt.Input)
		code      string
		wantField string
	}{
		{"negative context window", func(in *prompt.Input) { in.ContextWindow = -1 }, domain.CodeInvalidArgument, "contextWindow"},
		{"empty conversation", func(in *prompt.Input) { in.Conversation = nil }, domain.CodeInvalidArgument, "conversation"},
		{"no agent name", func(in *prompt.Input) { in.Agent.Name = "" }, domain.CodeInvalidArgument, "agent.name"},
		{"unknown trust", func(in *prompt.Input) { in.Agent.Trust = "root" }, domain.CodeInvalidArgument, "agent.trust"},
		{"agent without source", func(in *prompt.Input) { in.Agent.Source = "" }, domain.CodeInvalidArgument, "agent.source"},
		{"unknown mode", func(in *prompt.Input) { in.Mode = "yolo" }, domain.CodeInvalidArgument, "mode"},
		{"AGENTS.md not UTF-8", func(in *prompt.Input) {
			in.ProjectAgents = []prompt.InstructionFile{{Path: "/r/AGENTS.md", Content: []byte("caf\xe9")}}
		}, domain.CodeInvalidArgument, "projectAgents[0]"},
		{"AGENTS.md without path", func(in *prompt.Input) {
			in.ProjectAgents = []prompt.InstructionFile{{Content: []byte("x")}}
		}, domain.CodeInvalidArgument, "projectAgents[0].path"},
		{"orphan tool result", func(in *prompt.Input) {
			in.Conversation = append(in.Conversation, model.Message{Role: model.RoleTool, ToolCallID: "c9", Text: "x"})
		}, model.CodeInvalidRequest, "messages[1].toolCallId"},
		{"duplicate tool", func(in *prompt.Input) { in.Tools = []prompt.ToolDecl{tool("read", false), tool("read", false)} },
			model.CodeInvalidRequest, "tools[1].name"},
		{"no model", func(in *prompt.Input) { in.Model = "" }, model.CodeInvalidRequest, "model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := minimalInput()
			tt.edit(&in)
			_, err := prompt.Assemble(in)
			var de *domain.Error
			var me *model.Error
			switch {
			case errors.As(err, &de):
				if de.Code() != tt.code || de.Field != tt.wantField || de.Fix == "" {
					t.Fatalf("err = %v (code %q field %q), want %s at %q", err, de.Code(), de.Field, tt.code, tt.wantField)
				}
			case errors.As(err, &me):
				if me.Code() != tt.code || me.Field != tt.wantField {
					t.Fatalf("err = %v (code %q field %q), want %s at %q", err, me.Code(), me.Field, tt.code, tt.wantField)
				}
			default:
				t.Fatalf("err = %v (%T), want a typed %s", err, err, tt.code)
			}
		})
	}
}
