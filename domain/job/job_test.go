package job

import (
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

func admit(id, key, delivery string) Admit {
	return Admit{events.JobAdmitted{JobState: events.JobState{JobID: id, ParentSessionID: "ses_p", ChildSessionID: "ses_" + id,
		Agent: "explorer", Background: delivery != "", ReportDelivery: or(delivery, events.DeliveryQuiet), LogicalKey: key}}}
}

func or(a, b string) string {
	if a == "" {
		return b
	}
	return a
}

// apply decides and evolves, failing the test on a refusal.
func apply(t *testing.T, l *Ledger, cmd any) []events.Payload {
	t.Helper()
	ps, err := Decide(l, cmd)
	if err != nil {
		t.Fatalf("%T: %v", cmd, err)
	}
	for _, p := range ps {
		if err := l.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
	return ps
}

func refusedWith(t *testing.T, l *Ledger, cmd any, code string) {
	t.Helper()
	if _, err := Decide(l, cmd); domain.CodeOf(err) != code {
		t.Fatalf("%T: got %v, want %s", cmd, err, code)
	}
}

// Seeds 002 §7.5: under one parent, a logical task is refused again while an earlier job of
// it is queued, running, uncertain, or ended with a nextStep report not yet consumed; the rule
// covers foreground and background alike.
func TestLogicalKeyDeduplication(t *testing.T) {
	report := &events.TaskReport{Status: events.JobCompleted}
	for _, c := range []struct {
		name    string
		first   string // delivery of the first job ("" foreground)
		then    []func(l *Ledger) any
		blocked bool
	}{
		{"queued blocks", events.DeliveryNextStep, nil, true},
		{"running blocks", events.DeliveryNextStep, []func(*Ledger) any{start}, true},
		{"foreground running blocks a background copy", "", []func(*Ledger) any{start}, true},
		{"uncertain blocks", events.DeliveryQuiet, []func(*Ledger) any{start, settleAs(events.JobUncertain, nil, "")}, true},
		{"nextStep report unconsumed blocks", events.DeliveryNextStep, []func(*Ledger) any{start, settleAs(events.JobCompleted, report, "in_1")}, true},
		{"nextStep report consumed frees", events.DeliveryNextStep, []func(*Ledger) any{start, settleAs(events.JobCompleted, report, "in_1"),
			func(*Ledger) any { return Consume{JobID: "job_1", InputID: "in_1", MessageID: "msg"} }}, false},
		{"quiet completed frees", events.DeliveryQuiet, []func(*Ledger) any{start, settleAs(events.JobCompleted, report, "")}, false},
		{"foreground failed frees", "", []func(*Ledger) any{start, settleAs(events.JobFailed, report, "")}, false},
		{"queued cancelled frees", events.DeliveryNextStep, []func(*Ledger) any{settleAs(events.JobCancelled, nil, "")}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &Ledger{}
			apply(t, l, admit("job_1", "lk_a", c.first))
			for _, f := range c.then {
				apply(t, l, f(l))
			}
			again := admit("job_2", "lk_a", events.DeliveryNextStep)
			if c.blocked {
				refusedWith(t, l, again, CodeDuplicateTask)
			} else {
				apply(t, l, again)
			}
			apply(t, l, admit("job_3", "lk_other", events.DeliveryNextStep)) // another task is never blocked
		})
	}
}

func start(*Ledger) any { return Start{JobID: "job_1", Owner: events.TurnOwner{Host: "h", PID: 1}} }

func settleAs(status string, r *events.TaskReport, input string) func(*Ledger) any {
	return func(*Ledger) any {
		return Settle{JobID: "job_1", Status: status, Result: r, InputID: input}
	}
}

// Seeds 002 §7.1: a nextStep job's settlement and its report's admission are one append.
func TestSettlementAdmitsTheReportInTheSameAppend(t *testing.T) {
	l := &Ledger{}
	apply(t, l, admit("job_1", "lk", events.DeliveryNextStep))
	apply(t, l, start(l))
	ps := apply(t, l, Settle{JobID: "job_1", Status: events.JobCompleted, Result: &events.TaskReport{Status: "completed"}, InputID: "in_1"})
	if len(ps) != 2 || ps[0].EventType() != events.TypeJobSettled || ps[1].EventType() != events.TypeJobReportAdmitted {
		t.Fatalf("got %v", ps)
	}
	if l.Job("job_1").ReportInputID != "in_1" {
		t.Fatal("the report's input is not on the job")
	}
	// Seeds 002 §7.2: quiet creates no parent input.
	l = &Ledger{}
	apply(t, l, admit("job_1", "lk", events.DeliveryQuiet))
	apply(t, l, start(l))
	ps = apply(t, l, Settle{JobID: "job_1", Status: events.JobCompleted, Result: &events.TaskReport{}, InputID: "in_1"})
	if len(ps) != 1 || l.Job("job_1").ReportInputID != "" {
		t.Fatalf("quiet admitted a report: %v", ps)
	}
}

func TestSettledOnceAndStartedOnce(t *testing.T) {
	l := &Ledger{}
	apply(t, l, admit("job_1", "lk", events.DeliveryNextStep))
	apply(t, l, start(l))
	refusedWith(t, l, start(l), CodeJobState)
	apply(t, l, Settle{JobID: "job_1", Status: events.JobUncertain})
	refusedWith(t, l, Settle{JobID: "job_1", Status: events.JobCompleted}, CodeJobState)
	refusedWith(t, l, Settle{JobID: "job_9", Status: events.JobCompleted}, CodeJobNotFound)
	refusedWith(t, l, admit("job_1", "lk2", ""), CodeJobState)
}

// Seeds 002 §4: task_id continues only a child of the same parent, and not while it runs.
func TestContinueOnlyOwnIdleChild(t *testing.T) {
	l := &Ledger{}
	apply(t, l, admit("job_1", "lk", events.DeliveryQuiet))
	cont := admit("job_2", "lk2", events.DeliveryQuiet)
	cont.ChildSessionID, cont.Continued = "ses_job_1", true
	refusedWith(t, l, cont, CodeJobState)
	apply(t, l, start(l))
	apply(t, l, Settle{JobID: "job_1", Status: events.JobCompleted, Result: &events.TaskReport{}})
	apply(t, l, cont)
	stranger := admit("job_3", "lk3", events.DeliveryQuiet)
	stranger.ChildSessionID, stranger.Continued = "ses_someone_else", true
	refusedWith(t, l, stranger, CodeNotYourChild)
}

// Seeds 002 §7.5: job_reconcile applies only to an uncertain job; nextStep yields one
// replacement report in the same append, quiet none.
func TestReconcile(t *testing.T) {
	for _, delivery := range []string{events.DeliveryNextStep, events.DeliveryQuiet} {
		l := &Ledger{}
		apply(t, l, admit("job_1", "lk", delivery))
		rec := Reconcile{JobReconciled: events.JobReconciled{Outcome: events.JobCompleted, FinalText: "done", Authority: "CI", Evidence: "run 1"},
			Result: events.TaskReport{Status: events.JobCompleted}, InputID: "in_2"}
		rec.JobID = "job_1"
		refusedWith(t, l, rec, CodeJobState)
		apply(t, l, start(l))
		apply(t, l, Settle{JobID: "job_1", Status: events.JobUncertain, Result: &events.TaskReport{Status: events.JobUncertain}, InputID: "in_1"})
		ps := apply(t, l, rec)
		want := 1
		if delivery == events.DeliveryNextStep {
			want = 2
			if r := ps[1].(events.JobReportAdmitted); r.Replaces != "in_1" || r.InputID != "in_2" {
				t.Fatalf("replacement %+v", r)
			}
		}
		if len(ps) != want || l.Job("job_1").Status != events.JobCompleted {
			t.Fatalf("%s: %v, status %s", delivery, ps, l.Job("job_1").Status)
		}
		refusedWith(t, l, rec, CodeJobState)
	}
}

// Seeds 002 §7.5: within one provider response, a second identical task is not run again,
// even when the first was a foreground task that has already finished.
func TestSameResponseIsOneTask(t *testing.T) {
	l := &Ledger{}
	first := admit("job_1", "lk", "")
	first.ParentRequestID = "req_1"
	apply(t, l, first)
	apply(t, l, start(l))
	apply(t, l, Settle{JobID: "job_1", Status: events.JobCompleted, Result: &events.TaskReport{}})
	again := admit("job_2", "lk", "")
	again.ParentRequestID = "req_1"
	refusedWith(t, l, again, CodeDuplicateTask)
	again.ParentRequestID = "req_2" // a later response may ask for it again
	apply(t, l, again)
}

// A peer message is admitted to the inbox once and consumed once.
func TestPeerMessageOnce(t *testing.T) {
	l := &Ledger{}
	msg := AdmitMessage{events.InboxMessageAdmitted{SessionID: "ses_t", InputID: "input_m", Text: "hi"}}
	if ps := apply(t, l, msg); len(ps) != 1 {
		t.Fatalf("admitted %v", ps)
	}
	if ps := apply(t, l, msg); len(ps) != 0 {
		t.Fatalf("admitted again %v", ps)
	}
	if ps := apply(t, l, ConsumeMessage{InputID: "input_m", MessageID: "msg_1"}); len(ps) != 1 || !l.Messages()[0].Consumed {
		t.Fatalf("consumed %v", ps)
	}
	if ps := apply(t, l, ConsumeMessage{InputID: "input_m", MessageID: "msg_1"}); len(ps) != 0 {
		t.Fatalf("consumed again %v", ps)
	}
}
