package question_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/events"
)

func book(t testing.TB) *question.Book {
	b := &question.Book{}
	ps, err := question.DecidePublish(b, question.Publish{QuestionPublished: events.QuestionPublished{SessionID: "s", RequestID: "r",
		Kind: events.QuestionKindQuestion, Mode: events.QuestionModeWait, DeferAt: "2026-12-02T10:00:00Z",
		Items: []events.QuestionItem{{ID: "db", Question: "Which?", Options: []events.QuestionOption{{Label: "A"}, {Label: "B"}}},
			{ID: "name", Question: "Name?", Custom: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := b.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// A plan_exit publication made again (its binding is a pointer) is the same publication.
func TestPublishPlanExitAgain(t *testing.T) {
	b := &question.Book{}
	pub := func() question.Publish {
		return question.Publish{QuestionPublished: events.QuestionPublished{SessionID: "s", RequestID: "p", Kind: events.QuestionKindPlanExit,
			Items:    []events.QuestionItem{{ID: question.PlanExitItem, Question: "ok?", Options: []events.QuestionOption{{Label: question.Approve}, {Label: question.Reject}}}},
			PlanExit: &events.PlanExitBinding{PlanID: "plan-1", PlanRevision: 2}}}
	}
	ps, err := question.DecidePublish(b, pub())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if err := b.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
	if ps, err := question.DecidePublish(b, pub()); err != nil || len(ps) != 0 {
		t.Fatalf("again: %v %v", ps, err)
	}
}

// The publication is idempotent by content, and the deadline of a publication made again (a
// retried call) is the first's: it is not recomputed.
func TestPublishAgain(t *testing.T) {
	b := book(t)
	again := question.Publish{QuestionPublished: b.Get("r").QuestionPublished}
	again.DeferAt = "2030-01-01T00:00:00Z"
	if ps, err := question.DecidePublish(b, again); err != nil || len(ps) != 0 {
		t.Fatalf("publication again: %v %v", ps, err)
	}
	again.Title = "other"
	if _, err := question.DecidePublish(b, again); domain.CodeOf(err) != question.CodeRequestIDReused {
		t.Fatalf("other content: %v", err)
	}
}

func TestDefer(t *testing.T) {
	b := book(t)
	ps, err := question.DecideDefer(b, question.Defer{SessionID: "s", RequestID: "r", ExpectedRevision: 1, Reason: events.DeferTimeout})
	if err != nil || len(ps) != 1 || ps[0].(events.QuestionDeferred).Deadline != "2026-12-02T10:00:00Z" {
		t.Fatalf("timeout: %v %v", ps, err)
	}
	if _, err := question.DecideDefer(b, question.Defer{SessionID: "s", RequestID: "r", ExpectedRevision: 1, Reason: "skip"}); domain.CodeOf(err) != domain.CodeInvalidArgument {
		t.Fatalf("unknown reason: %v", err)
	}
	if _, err := question.DecideDefer(b, question.Defer{SessionID: "s", RequestID: "x", ExpectedRevision: 1, Reason: events.DeferLater}); domain.CodeOf(err) != question.CodeQuestionNotFound {
		t.Fatalf("unknown request: %v", err)
	}
}

// FuzzDecideAnswer: an answer is untrusted input from any face. Deciding it never panics; a
// refusal is a typed *domain.Error and records nothing; an acceptance is the answer event at
// the next revision and the one inbox input that carries it, and it leaves no item answered
// twice.
func FuzzDecideAnswer(f *testing.F) {
	for _, s := range []string{`[]`, `[{"itemId":"db","selected":["A"]}]`, `[{"itemId":"db","text":"free"}]`,
		`[{"itemId":"name","text":"x"},{"itemId":"db","selected":["B"]}]`, `[{"itemId":"db","selected":["A","B"]}]`,
		`[{"itemId":"db","selected":["A"]},{"itemId":"db","selected":["B"]}]`, `[{"itemId":"nope","text":"x"}]`, `[{}]`} {
		f.Add(s, uint64(1))
	}
	f.Fuzz(func(t *testing.T, in string, rev uint64) {
		var answers []events.QuestionItemAnswer
		if json.Unmarshal([]byte(in), &answers) != nil {
			return
		}
		b := book(t)
		ps, err := question.DecideAnswer(b, question.Answer{SessionID: "s", RequestID: "r", ExpectedRevision: rev, Answers: answers, InputID: "in"})
		if err != nil {
			var de *domain.Error
			if !errors.As(err, &de) || de.Fix == "" || ps != nil {
				t.Fatalf("%q: %v (%T) %v", in, err, err, ps)
			}
			return
		}
		if len(ps) != 2 || ps[0].(events.QuestionAnswered).Revision != 2 || ps[1].(events.InboxMessageAdmitted).QuestionRequestID != "r" {
			t.Fatalf("%q: %#v", in, ps)
		}
		for _, p := range ps {
			if err := b.Evolve(p); err != nil {
				t.Fatal(err)
			}
		}
		if again, err := question.DecideAnswer(b, question.Answer{SessionID: "s", RequestID: "r", ExpectedRevision: 2, Answers: answers, InputID: "in2"}); err == nil {
			t.Fatalf("%q answered twice: %#v", in, again)
		}
	})
}
