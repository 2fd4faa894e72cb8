package job

import (
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/events"
)

// A child's question never reaches the user: its recorded result (question_to_parent, the
// blocker in its details) is an evidence error of the report, which its parent reads.
func TestEvidenceCarriesChildQuestion(t *testing.T) {
	var e Evidence
	e.Fold(events.ToolSettled{CallID: "c1", Tool: "question", Outcome: "error", ErrorCode: question.CodeQuestionToParent,
		Metadata: events.ToolMetadata{Details: []byte(`{"outcome":"parent","blocker":"[db] Which database?"}`)}})
	e.Fold(events.ToolSettled{CallID: "c2", Tool: "read", Outcome: "error", ErrorCode: "not_found"})
	r := e.Report(events.JobState{JobID: "job_1"}, nil, events.JobCompleted)
	if len(r.EvidenceErrors) != 1 || !strings.Contains(r.EvidenceErrors[0], "call c1 (question) is a question for you: [db] Which database?") {
		t.Fatalf("evidence errors: %q", r.EvidenceErrors)
	}
}

// The ledger shares the inbox stream with the questions and folds past their events.
func TestLedgerFoldsPastQuestions(t *testing.T) {
	var l Ledger
	for _, p := range []events.Payload{events.QuestionPublished{RequestID: "r"}, events.QuestionAnswered{RequestID: "r"},
		events.QuestionDeferred{RequestID: "r"}, events.QuestionVoided{RequestID: "r"}} {
		if err := l.Evolve(p); err != nil {
			t.Fatalf("%T: %v", p, err)
		}
	}
}
