package prompt_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/events"
)

// FuzzVerify feeds mutated receipts to Verify, which reads receipts from the log and so from
// whoever could write to it: it never panics, refuses only with *ReceiptError, and whatever it
// accepts really does rebuild to a request with the recorded actual digest.
func FuzzVerify(f *testing.F) {
	full, err := prompt.Assemble(fullInput())
	if err != nil {
		f.Fatal(err)
	}
	minimal, err := prompt.Assemble(minimalInput())
	if err != nil {
		f.Fatal(err)
	}
	for _, r := range []prompt.Receipt{full.Receipt, minimal.Receipt} {
		b, _ := json.Marshal(r)
		f.Add(b)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"schemaVersion":1,"sections":[{"id":"x","lane":"memory","sha256":"00"}],"messages":[{"kind":"section","section":"y"}],"blobs":{"00":"a"}}`))
	f.Add([]byte(`{"schemaVersion":1,"messages":[{"kind":"message","sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}],"blobs":{"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855":""}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r prompt.Receipt
		if json.Unmarshal(data, &r) != nil {
			return
		}
		err := prompt.Verify(r)
		if err != nil {
			var re *prompt.ReceiptError
			if !errors.As(err, &re) || len(re.Mismatches) == 0 || re.Code() != prompt.CodeReceiptMismatch {
				t.Fatalf("Verify = %T %v, want *ReceiptError with mismatches", err, err)
			}
			_ = prompt.NewDebugView(r, false) // a broken receipt can still be looked at
			return
		}
		req, err := prompt.Reconstruct(r)
		if err != nil {
			t.Fatalf("verified receipt does not reconstruct: %v", err)
		}
		body, err := prompt.RequestBytes(req)
		if err != nil {
			t.Fatal(err)
		}
		if sha(string(body)) != r.ActualDigest {
			t.Fatal("verified receipt's actual digest is not its request's")
		}
	})
}

// FuzzRenderWorkState: whatever the durable state holds, runtime.work_state is either within
// its budget, valid UTF-8 with every line its own, or refused with work_state_overflow.
func FuzzRenderWorkState(f *testing.F) {
	f.Add(uint8(3), uint8(5), uint8(2), uint8(1), uint16(40), "title", "中文的最终文本", false)
	f.Add(uint8(64), uint8(200), uint8(70), uint8(64), uint16(4000), "x\ny", "\xff\xfe", true)
	f.Add(uint8(0), uint8(0), uint8(80), uint8(0), uint16(1), "", "", true)
	f.Fuzz(func(t *testing.T, nSteps, nTodos, nJobs, nReports uint8, textLen uint16, title, final string, uncertain bool) {
		text := strings.Repeat(final, int(textLen)%8192/max(1, len(final)))
		ws := &prompt.WorkState{PreviousReceiptID: "rcp " + title, PlanRevision: 1, TodoRevision: 2}
		if nSteps > 0 {
			p := events.WorkPlan{PlanID: "plan-1", Title: title, Status: "in_progress"}
			for i := range int(nSteps) {
				status := []string{"pending", "completed", "in_progress"}[i%3]
				p.Steps = append(p.Steps, events.WorkPlanStep{ID: "s" + strings.Repeat("i", i), Title: title + text, Status: status})
			}
			ws.Plans = []events.WorkPlan{p}
		}
		for i := range int(nTodos) {
			ws.Todos = append(ws.Todos, events.WorkItem{ID: title + "t", Title: text, Status: []string{"pending", "completed"}[i%2]})
		}
		for i := range int(nJobs) {
			status := []string{prompt.JobRunning, prompt.JobCompleted, prompt.JobUncertain}[i%3]
			if !uncertain && status == prompt.JobUncertain {
				status = prompt.JobQueued
			}
			ws.Jobs = append(ws.Jobs, prompt.Job{ID: "j" + title, Agent: title, Status: status, PlanStepID: "s", FinalText: text, Error: final})
		}
		for range int(nReports) {
			ws.Reports = append(ws.Reports, prompt.Report{InputID: "in", JobID: title, Status: prompt.ReportQueued, FinalText: text})
		}
		out, rep, err := prompt.RenderWorkState(ws)
		if err != nil {
			if !domain.HasCode(err, prompt.CodeWorkStateOverflow) || out != "" {
				t.Fatalf("RenderWorkState = %q, %v", out, err)
			}
			return
		}
		if len(out) > prompt.MaxWorkStateBytes || !utf8.ValidString(out) || rep.Bytes != len(out) {
			t.Fatalf("rendered %d bytes, valid %v, report %+v", len(out), utf8.ValidString(out), rep)
		}
		for _, c := range []int{rep.Shown.PlanSteps, rep.Shown.Todos, rep.Shown.Jobs, rep.Shown.Reports} {
			if c > prompt.MaxWorkStateItems {
				t.Fatalf("a collection shows %d items: %+v", c, rep)
			}
		}
		if rep.Shown.Todos+rep.Omitted.Todos != len(ws.Todos) || rep.Shown.PlanSteps+rep.Omitted.PlanSteps != int(nSteps) {
			t.Fatalf("counts do not add up: %+v", rep)
		}
	})
}

// FuzzExpand feeds mutated receipt chains to Expand, which follows conversationBase links
// between receipts read from the log: it never panics or loops, refuses only with
// *ReceiptError, and what it returns carries no base and verifies exactly when Verify says so.
func FuzzExpand(f *testing.F) {
	h := &prompt.History{}
	var chain []prompt.Receipt
	var prev *prompt.Receipt
	for step := range 3 {
		in := fullInput()
		in.Conversation = growing(step)
		in.History = h
		full := mustAssembleF(f, in)
		chain = append(chain, prompt.Compact(full, prev, fmt10(step-1), h))
		prev = &full
	}
	b, _ := json.Marshal(chain)
	f.Add(b)
	f.Add([]byte(`[{"conversationBase":{"receiptId":"r0","parts":1}},{"conversationBase":{"receiptId":"r1","parts":-1}}]`))
	f.Add([]byte(`[{"conversationBase":{"receiptId":"r1"}},{"conversationBase":{"receiptId":"r0"}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var rs []prompt.Receipt
		if json.Unmarshal(data, &rs) != nil || len(rs) == 0 {
			return
		}
		byID := map[string]prompt.Receipt{}
		for i, r := range rs {
			byID[fmt10(i)] = r
		}
		out, err := prompt.Expand(rs[len(rs)-1], func(id string) (prompt.Receipt, bool) { r, ok := byID[id]; return r, ok }, nil)
		if err != nil {
			var re *prompt.ReceiptError
			if !errors.As(err, &re) {
				t.Fatalf("Expand error %T: %v", err, err)
			}
			return
		}
		if out.ConversationBase != nil {
			t.Fatal("an expanded receipt still has a base")
		}
		_ = prompt.Verify(out)
	})
}

func fmt10(i int) string { return "r" + string(rune('0'+i%10)) }

func mustAssembleF(f *testing.F, in prompt.Input) prompt.Receipt {
	a, err := prompt.Assemble(in)
	if err != nil {
		f.Fatal(err)
	}
	return a.Receipt
}
