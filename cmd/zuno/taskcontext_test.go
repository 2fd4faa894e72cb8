package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The table form reads the JSON view the application returns (the CLI names no domain type).
func TestTaskContextText(t *testing.T) {
	var v taskContextView
	err := json.Unmarshal([]byte(`{"revision":3,"stale":true,"task":{"task_id":"task-1","objective":"Fix login","task_kind":"delivery",
		"status":"active","sources":[{"message_id":"msg_1","summary":"Fix the login bug"}],"constraints":["no announcement"],
		"checks":[{"id":"tests","kind":"delivery","title":"login tests pass","status":"passed","evidence":"rcp_1"}]}}`), &v)
	if err != nil {
		t.Fatal(err)
	}
	want := "task-1 · delivery · active · revision 3 · stale: a newer user message takes precedence\n" +
		"objective: Fix login\nsource:     msg_1  Fix the login bug\nconstraint: no announcement\n" +
		"check:      tests [delivery] passed: login tests pass\n"
	if got := v.text(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := (taskContextView{}).text(); !strings.HasPrefix(got, "no task context (revision 0)") {
		t.Fatal(got)
	}
}
