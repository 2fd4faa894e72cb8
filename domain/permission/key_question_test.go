package permission_test

import (
	"testing"

	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/tools"
)

// seeds 000: question_async is governed by the question permission key; question and
// plan_exit ask under their own names.
func TestQuestionKeys(t *testing.T) {
	for tool, key := range map[string]string{tools.NameQuestion: "question", tools.NameQuestionAsync: "question", tools.NamePlanExit: "plan_exit"} {
		if got := permission.KeyFor(tool); got != key {
			t.Errorf("KeyFor(%s) = %s, want %s", tool, got, key)
		}
	}
}
