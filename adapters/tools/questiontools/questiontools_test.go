package questiontools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/questiontools"
	"github.com/zuno-run/zuno/adapters/tools/schema/schematest"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// port answers Ask with a fixed receipt or error and records what it was asked.
type port struct {
	receipt question.Receipt
	err     error
	asked   []question.Ask
}

func (p *port) Ask(_ context.Context, _ tools.Invocation, a question.Ask) (question.Receipt, error) {
	p.asked = append(p.asked, a)
	return p.receipt, p.err
}

func byName(p questiontools.Port) map[string]tools.Tool {
	out := map[string]tools.Tool{}
	for _, t := range questiontools.New(p) {
		out[t.Declaration().Name] = t
	}
	return out
}

// TestSchemasUnchanged: what the model is shown is the bytes recorded in testdata/schemas.
func TestSchemasUnchanged(t *testing.T) {
	for name, tl := range byName(nil) {
		schematest.Unchanged(t, name, tl.Spec().Schema)
	}
}

// The declarations: user-mediated (strict mode does not ask), idempotent by call, exclusive.
func TestDeclarations(t *testing.T) {
	for name, tl := range byName(nil) {
		d := tl.Declaration()
		if d.Policy.SideEffect != tools.UserMediated || d.Policy.Concurrency != tools.Exclusive || tl.WritesWorkspace() {
			t.Errorf("%s: %+v", name, d)
		}
	}
}

func TestValidate(t *testing.T) {
	all := byName(nil)
	for _, tc := range []struct {
		tool, args, code string
		items            []string
	}{
		{tools.NameQuestion, `{"questions":[{"question":"Which DB?","options":[{"label":"SQLite"},{"label":"Postgres"}]},{"question":"Name?"}]}`, "", []string{"q1", "q2"}},
		{tools.NameQuestionAsync, `{"title":"T","questions":[{"id":"db","question":"Which DB?","custom":false,"options":[{"label":"A"}]}]}`, "", []string{"db"}},
		{tools.NameQuestion, `{"questions":[]}`, domain.CodeInvalidArgument, nil},
		{tools.NameQuestion, `{"questions":[{"question":"a"},{"question":"b"},{"question":"c"},{"question":"d"},{"question":"e"},{"question":"f"},{"question":"g"},{"question":"h"},{"question":"i"}]}`, domain.CodeInvalidArgument, nil},
		{tools.NameQuestion, `{"questions":[{"id":"x","question":"a"},{"id":"x","question":"b"}]}`, domain.CodeInvalidArgument, nil},
		{tools.NameQuestion, `{"questions":[{"question":"a","custom":false}]}`, "", []string{"q1"}}, // no options: free text after all
		{tools.NameQuestion, `{"questions":[{"question":"a","options":[{"label":"x"},{"label":"x"}]}]}`, domain.CodeInvalidArgument, nil},
		{tools.NameQuestion, `{"questions":[{"question":""}]}`, domain.CodeInvalidArgument, nil},
		{tools.NameQuestion, `{"questions":[{"question":"a","extra":1}]}`, domain.CodeInvalidArgument, nil},
		{tools.NamePlanExit, `{"summary":"Plan rev 3"}`, "", []string{question.PlanExitItem}},
		{tools.NamePlanExit, `{}`, domain.CodeInvalidArgument, nil},
	} {
		p, err := all[tc.tool].Validate(json.RawMessage(tc.args))
		if domain.CodeOf(err) != tc.code {
			t.Errorf("%s %s: %v, want %q", tc.tool, tc.args, err, tc.code)
			continue
		}
		if err != nil {
			continue
		}
		a := p.Args.(question.Ask)
		var ids []string
		for _, it := range a.Items {
			ids = append(ids, it.ID)
		}
		if a.Tool != tc.tool || strings.Join(ids, ",") != strings.Join(tc.items, ",") {
			t.Errorf("%s %s: %+v", tc.tool, tc.args, a)
		}
	}
}

// Execute renders each outcome: a receipt never carries an answer; a child's question is an
// error result with the blocker in its details, which the parent's report reads.
func TestExecute(t *testing.T) {
	ctx := context.Background()
	args := json.RawMessage(`{"questions":[{"id":"db","question":"Which DB?"}]}`)
	for _, tc := range []struct {
		name    string
		p       *port
		outcome tools.Outcome
		code    string
		want    string
	}{
		{"published", &port{receipt: question.Receipt{RequestID: "qst_1", Outcome: question.AskPublished, Status: "pending"}},
			tools.OutcomeCompleted, "", `"outcome":"published"`},
		{"deferred", &port{receipt: question.Receipt{RequestID: "qst_1", Outcome: question.AskDeferred}},
			tools.OutcomeCompleted, "", "not an answer"},
		{"child", &port{receipt: question.Receipt{Outcome: question.AskParent, Blocker: "The child needs a decision: [db] Which DB?"}},
			tools.OutcomeError, question.CodeQuestionToParent, "goes to your parent"},
		{"refused", &port{err: domain.NewError("question_outside_turn", "outside", "ask from a turn")},
			tools.OutcomeError, "question_outside_turn", "Nothing was asked"},
		{"lost", &port{err: errors.New("disk gone")}, tools.OutcomeUncertain, "internal", "may or may not"},
	} {
		tl := byName(tc.p)[tools.NameQuestion]
		parsed, err := tl.Validate(args)
		if err != nil {
			t.Fatal(err)
		}
		r := tl.Execute(ctx, tools.Invocation{SessionID: "ses_1", CallID: "c1", Parsed: parsed})
		if r.Outcome != tc.outcome || r.ErrorCode != tc.code || !strings.Contains(r.Output, tc.want) {
			t.Errorf("%s: %+v", tc.name, r)
		}
		if tc.name == "child" && !strings.Contains(string(r.Metadata.Details), `"blocker":"The child needs a decision`) {
			t.Errorf("child details: %s", r.Metadata.Details)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tl := byName(&port{})[tools.NameQuestion]
	parsed, _ := tl.Validate(args)
	if r := tl.Execute(cancelled, tools.Invocation{Parsed: parsed}); r.Outcome != tools.OutcomeCancelled {
		t.Errorf("cancelled: %+v", r)
	}
}

// FuzzValidate: Validate parses untrusted model output for all three tools. It never panics;
// every refusal is a *domain.Error naming a field and a fix; every acceptance is an Ask whose
// items the domain accepts.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{``, `{}`, `null`, `[]`, `{"questions":[{"question":"a"}]}`, `{"summary":"s"}`,
		`{"questions":[{"id":"","question":"a","options":[{"label":"x","description":"d"}],"custom":true}]}`,
		`{"questions":[null]}`, `{"questions":[{"question":"\ud800"}]}`, "{\"questions\":[{\"question\":\"\xff\"}]}",
		`{"title":"t","questions":[{"question":"a"}],"title":"u"}`} {
		for i := range 3 {
			f.Add(s, uint8(i))
		}
	}
	all := questiontools.New(nil)
	f.Fuzz(func(t *testing.T, in string, which uint8) {
		tl := all[int(which)%len(all)]
		p, err := tl.Validate(json.RawMessage(in))
		if err != nil {
			var de *domain.Error
			if !errors.As(err, &de) || de.Fix == "" || de.Message == "" || p.Args != nil {
				t.Fatalf("%s %q: refusal %v (%T)", tl.Declaration().Name, in, err, err)
			}
			return
		}
		a, ok := p.Args.(question.Ask)
		kind := events.QuestionKindQuestion
		if a.Tool == tools.NamePlanExit {
			kind = events.QuestionKindPlanExit
		}
		if !ok || a.Tool != tl.Declaration().Name || question.CheckItems(kind, a.Items) != nil {
			t.Fatalf("%q: accepted as %#v", in, p)
		}
	})
}
