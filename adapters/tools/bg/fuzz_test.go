package bg

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
)

// FuzzValidate: Validate parses untrusted model output. It must never panic,
// every refusal must be a *domain.Error naming a field and a fix, and every
// acceptance must carry what its action needs.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		`{"action":"list"}`, `{"action":"output","taskID":"bg_1","cursor":0,"limit":1e9}`,
		`{"action":"wait","taskID":"bg_1","timeoutMs":99999999999999999999}`,
		`{"action":"artifact","outputPath":"/a"}`, `{"action":"cancel","taskID":"x"}`,
		`null`, `{}`, `[`, `{"action":"output","taskID":"x","cursor":-0.0}`, `{"action":null}`,
		`{"action":"list","action":"cancel"}`, "{\"action\":\"list\"}\x00",
	} {
		f.Add(s)
	}
	tool := NewTool(nil)
	f.Fuzz(func(t *testing.T, in string) {
		parsed, err := tool.Validate(json.RawMessage(in))
		action := parsed.Action
		if err != nil {
			var de *domain.Error
			if !errors.As(err, &de) || de.Field == "" || de.Fix == "" || action != "" {
				t.Fatalf("%q: refusal %v (action %q)", in, err, action)
			}
			return
		}
		a, err := parseArgs(json.RawMessage(in))
		if err != nil || a.Action != action || !contains(actions, action) {
			t.Fatalf("%q: accepted as %q, reparse %+v %v", in, action, a, err)
		}
		switch action {
		case ActionOutput, ActionWait, ActionCancel:
			if strings.TrimSpace(a.TaskID) == "" {
				t.Fatalf("%q: %s without taskID", in, action)
			}
		case ActionArtifact:
			if strings.TrimSpace(a.OutputPath) == "" {
				t.Fatalf("%q: artifact without outputPath", in)
			}
		}
		if a.Cursor != nil && *a.Cursor < 0 {
			t.Fatalf("%q: negative cursor", in)
		}
		if a.Timeout < 0 || a.Timeout > MaxWaitTimeout {
			t.Fatalf("%q: timeout %v", in, a.Timeout)
		}
	})
}
