package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/domain/verification"
	"github.com/zuno-run/zuno/events"
)

// recording is a provider that remembers every request it is sent, in order.
type recording struct {
	model.Provider
	mu   sync.Mutex
	sent []model.Request
}

func (r *recording) Stream(ctx context.Context, req model.Request) model.Stream {
	r.mu.Lock()
	r.sent = append(r.sent, req)
	r.mu.Unlock()
	return r.Provider.Stream(ctx, req)
}

// compactionSteps is the length of the scripted session: each step reads a file whose
// result is a few hundred tokens, so the transcript outgrows the window many times over.
const compactionSteps = 300

func compactionScript() string {
	var turns []string
	turns = append(turns, `{"toolCalls":[
	 {"id":"c_plan","name":"plan_update","arguments":{"action":"create","title":"Long haul","steps":[{"title":"read everything"},{"title":"report"}]}},
	 {"id":"c_todo","name":"todo_update","arguments":{"items":[{"id":"keep","title":"survive compactions"}]}},
	 {"id":"c_task","name":"task","arguments":{"agent":"explorer","objective":"Lane Z: look once","deliverable":"d",
	   "instructions":"read only","success_evidence":"s","background":true}}]}`)
	for i := 2; i < compactionSteps; i++ {
		switch i {
		case 150:
			turns = append(turns, `{"toolCalls":[{"id":"c_todo2","name":"todo_update","arguments":{"items":[{"id":"late","title":"added after compactions"}]}}]}`)
		case 200:
			turns = append(turns, `{"toolCalls":[{"id":"c_shell","name":"shell","arguments":{"command":"cat big.txt"}}]}`)
		default:
			turns = append(turns, fmt.Sprintf(`{"text":"step %d","toolCalls":[{"id":"c_%d","name":"read","arguments":{"path":"big.txt"}}]}`, i, i))
		}
	}
	turns = append(turns, `{"text":"Done after many compactions."}`)
	return `{"turns":[` + strings.Join(turns, ",\n") + `],
	 "sessions":[{"when":"Lane Z","turns":[{"text":"Lane Z done."}]}]}`
}

// A 300-step session whose transcript exceeds a small context window many times keeps going
// through compactions: every durable state survives them, every receipt verifies, and for a
// step after a compaction debug prompt rebuilds exactly the request the provider was sent.
func TestComponentCompaction(t *testing.T) {
	ctx := context.Background()
	big := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40) // ~450 tokens a read
	// Measure the prompt's fixed part (sections, tools) to give the window a little room.
	probe := newComponent(t)
	probe.file("big.txt", big)
	first := probe.run(t, app.RunTurn{Meta: meta("probe"), Prompt: "hello", Model: probe.script("probe", `{"turns":[{"text":"hi"}]}`),
		Agent: "orchestrator"})
	pv, err := probe.app.Queries.Prompt(ctx, first.SessionID, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	window := pv.Receipt.EstimatedInputTokens + 3000

	c := newComponent(t, func(s *app.Settings) { s.ContextWindow = window })
	c.file("big.txt", big)
	// Each provider opened is recorded on its own: the first is the parent's turn, later ones
	// the child's.
	var opened []*recording
	var mu sync.Mutex
	c.wrapProvider = func(p model.Provider) model.Provider {
		mu.Lock()
		defer mu.Unlock()
		r := &recording{Provider: p}
		opened = append(opened, r)
		return r
	}
	q := c.app.Queries
	begun := time.Now()
	res := c.run(t, app.RunTurn{Meta: meta("long"), Prompt: "read big.txt again and again", Model: c.script("long", compactionScript()),
		Agent: "orchestrator"})
	session := res.SessionID
	if res.Reason != "completed" || res.Steps != compactionSteps || res.Text != "Done after many compactions." {
		t.Fatalf("outcome: %+v", res.Outcome)
	}
	t.Logf("ran at %v", time.Since(begun))
	if err := q.WaitFor(ctx, res.LastPosition); err != nil {
		t.Fatal(err)
	}
	t.Logf("projected at %v", time.Since(begun))
	rec := opened[0]
	log, err := q.Events(ctx, commands.SessionStream(session), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var compactions []events.TranscriptCompacted
	steps := map[int]events.ProviderRequest{}
	estimates := map[string]int64{}
	for _, ev := range log {
		switch ev.Type {
		case events.TypeTranscriptCompacted:
			var c events.TranscriptCompacted
			if err := json.Unmarshal(ev.Data, &c); err != nil {
				t.Fatal(err)
			}
			compactions = append(compactions, c)
		case events.TypePromptAssembled:
			var a events.PromptAssembled
			if err := json.Unmarshal(ev.Data, &a); err != nil {
				t.Fatal(err)
			}
			estimates[a.ReceiptID] = a.EstimatedInputTokens
		case events.TypeProviderRequest:
			var r events.ProviderRequest
			if err := json.Unmarshal(ev.Data, &r); err != nil {
				t.Fatal(err)
			}
			if r.Status == events.RequestStarted {
				steps[r.Step] = r
			}
		}
	}
	t.Logf("%d compactions over %d steps", len(compactions), len(steps))
	if len(compactions) < 10 {
		t.Fatalf("%d compactions over %d steps; the window %d should force many", len(compactions), compactionSteps, window)
	}
	t.Run("each compaction names its request and moves the boundary one window on", func(t *testing.T) {
		for i, k := range compactions {
			r, ok := steps[k.Step]
			if k.Window != i+1 || !ok || r.RequestID != k.RequestID || r.PromptReceiptID != k.PromptReceiptID || r.Purpose != events.PurposeCompaction {
				t.Fatalf("compaction %d: %+v, its request %+v", i, k, r)
			}
			if k.Through < 1 || k.EstimatedTokensAfter >= k.EstimatedTokensBefore || !strings.HasPrefix(k.SummaryMessage, "[zuno compaction ") {
				t.Fatalf("compaction %d did not shrink the conversation: %+v", i, k)
			}
		}
	})
	t.Run("every request sent fits the window", func(t *testing.T) {
		if len(rec.sent) != len(steps) {
			t.Fatalf("%d requests sent, %d recorded", len(rec.sent), len(steps))
		}
		for step, r := range steps {
			if est, ok := estimates[r.PromptReceiptID]; !ok || est > window {
				t.Fatalf("step %d: an estimated %d tokens (receipt recorded: %v) in a window of %d", step, est, ok, window)
			}
		}
	})
	t.Run("debug prompt rebuilds exactly what was sent, around every few compactions", func(t *testing.T) {
		// Each lookup folds the whole session; a sample keeps the test short.
		check := []int{1, len(steps)}
		for i := 0; i < len(compactions); i += 25 {
			check = append(check, compactions[i].Step-1, compactions[i].Step, compactions[i].Step+1)
		}
		for _, step := range check {
			v, err := q.Prompt(ctx, session, step, true)
			if err != nil || !v.Verified {
				t.Fatalf("step %d: %v", step, err)
			}
			got, _ := json.Marshal(v.Projection)
			want, _ := json.Marshal(rec.sent[step-1])
			if string(got) != string(want) {
				t.Fatalf("step %d: debug prompt shows\n%s\nbut the provider was sent\n%s", step, got, want)
			}
		}
	})
	t.Run("debug prompt after a compaction shows the boundary and the summary opening the conversation", func(t *testing.T) {
		k := compactions[len(compactions)/2]
		v, err := q.Prompt(ctx, session, k.Step+1, true)
		if err != nil {
			t.Fatal(err)
		}
		if v.Boundary == nil || v.Boundary.Window != k.Window || v.Boundary.RequestID != k.RequestID || v.Purpose != "" {
			t.Fatalf("step %d after compaction %d: boundary %+v purpose %q", k.Step+1, k.Window, v.Boundary, v.Purpose)
		}
		var conv []model.Message
		for _, m := range v.Projection.Messages {
			if m.Role != model.RoleSystem && m.Role != model.RoleDeveloper {
				conv = append(conv, m)
			}
		}
		if len(conv) == 0 || conv[0].Text != k.SummaryMessage {
			t.Fatalf("the conversation does not open with the summary: %+v", conv[:min(1, len(conv))])
		}
		cv, err := q.Prompt(ctx, session, k.Step, true)
		if err != nil || cv.Purpose != events.PurposeCompaction || cv.Projection.ToolChoice.Mode != model.ToolChoiceNone {
			t.Fatalf("the compaction request: %+v %v", cv.Projection.ToolChoice, err)
		}
		last := cv.Projection.Messages[len(cv.Projection.Messages)-1]
		if last.Text != transcript.CompactionInstruction {
			t.Fatalf("the compaction request ends with %q", last.Text)
		}
	})
	t.Run("the replay agrees with every decision and shows every boundary", func(t *testing.T) {
		rep, err := c.app.Commands.Replay(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		if err := rep.Err(); err != nil {
			t.Fatal(err)
		}
		if len(rep.Compactions) != len(compactions) || rep.Compactions[0].Step != compactions[0].Step {
			t.Fatalf("replay shows %d compactions, the log has %d", len(rep.Compactions), len(compactions))
		}
	})
	t.Run("the job settled and its report was delivered once, through the inbox", func(t *testing.T) {
		if _, err := c.app.Commands.SettleJobs(ctx); err != nil {
			t.Fatal(err)
		}
		l, _, err := commands.LoadJobs(ctx, c.store, events.NewRegistry(events.AllPayloads()...), session)
		if err != nil {
			t.Fatal(err)
		}
		jobs := l.Jobs()
		if len(jobs) != 1 || jobs[0].Status != events.JobCompleted || !jobs[0].ReportConsumed {
			t.Fatalf("jobs: %+v", jobs)
		}
	})
	t.Run("the plan, the todos, the verification receipt and the log survive", func(t *testing.T) {
		plan, err := q.Plan(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		contains(t, plan, `"title":"Long haul"`)
		todos, err := q.Todos(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		contains(t, todos, "survive compactions")
		contains(t, todos, "added after compactions")
		if _, err := q.VerificationReceipt(ctx, verification.ReceiptID(session, "c_shell")); err != nil {
			t.Fatal(err)
		}
		if log[0].Type != events.TypeSessionCreated || !strings.Contains(string(log[1].Data), "read big.txt again and again") {
			t.Fatalf("the log's start changed: %s %s", log[0].Type, log[1].Data)
		}
	})
}
