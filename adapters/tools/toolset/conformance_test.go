package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/internal/patchconformance"
	"github.com/zuno-run/zuno/domain/tools"
)

// TestConformance runs Codex's apply_patch scenarios through the read and apply_patch tools
// exactly as the turn driver calls them: JSON arguments, Validate, then Execute. A patch
// Validate refuses is a blocked call (invalid arguments); a refused one is a typed error.
func TestConformance(t *testing.T) {
	patchconformance.Run(t, func(t *testing.T, root string, files []string, text string) patchconformance.Result {
		set, err := New(Config{Root: root, ArtifactDir: t.TempDir(), SessionID: "ses_conf"})
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]Tool{}
		for _, tool := range set.Tools() {
			byName[tool.Declaration().Name] = tool
		}
		call := func(name string, args any, id string) (tools.Result, error) {
			raw, _ := json.Marshal(args)
			parsed, err := byName[name].Validate(raw)
			if err != nil {
				return tools.Result{}, err
			}
			return byName[name].Execute(context.Background(), tools.Invocation{SessionID: "ses_conf", CallID: id, Parsed: parsed}), nil
		}
		for i, f := range files {
			res, err := call(tools.NameRead, map[string]any{"path": f}, fmt.Sprintf("r%d", i))
			if err != nil || res.Outcome != tools.OutcomeCompleted {
				t.Fatalf("read %s: %v %+v", f, err, res)
			}
		}
		res, err := call(tools.NameApplyPatch, map[string]any{"patch": text}, "p")
		if err != nil {
			t.Logf("blocked: %v", err)
			return patchconformance.Result{Code: "invalid_arguments"}
		}
		switch res.Outcome {
		case tools.OutcomeCompleted:
			return patchconformance.Result{}
		case tools.OutcomeError:
			if res.ErrorCode == "" {
				t.Fatalf("error result without a code: %s", res.Output)
			}
			t.Logf("rejected: %s: %s", res.ErrorCode, res.Output)
			var d struct {
				Conflicts []json.RawMessage `json:"conflicts"`
			}
			json.Unmarshal(res.Metadata.Details, &d)
			return patchconformance.Result{Code: res.ErrorCode, Conflict: len(d.Conflicts) > 0}
		default:
			t.Fatalf("unexpected outcome %s (%s): %s", res.Outcome, res.ErrorCode, res.Output)
		}
		return patchconformance.Result{}
	})
}
