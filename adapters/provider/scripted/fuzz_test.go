package scripted_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/zuno-run/zuno/adapters/provider/scripted"
	"github.com/zuno-run/zuno/domain/model"
)

// Scripts are hand-written and shared, so the parser must never panic, and a script it
// accepts must play every turn into a well-formed response.
func FuzzParse(f *testing.F) {
	demo, err := os.ReadFile(filepath.Join("testdata", "demo.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(demo)
	f.Add([]byte(`{"turns":[{"error":{"code":"rate_limit","retryAfterMs":5}}]}`))
	f.Add([]byte(`{"turns":[{"text":"a","toolCalls":[{"id":"x","name":"y","arguments":{"k":[1,{"z":null}]}}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := scripted.Parse("fuzz", data)
		if err != nil {
			if !model.HasCode(err, model.CodeScriptInvalid) {
				t.Fatalf("Parse error without script_invalid: %v", err)
			}
			return
		}
		req := model.Request{Model: "m", Messages: []model.Message{{Role: model.RoleUser, Text: "go"}}}
		for range p.Turns() {
			got, err := model.Collect(p.Stream(context.Background(), req))
			if err != nil {
				continue // a scripted failure
			}
			for _, c := range got.ToolCalls {
				if !json.Valid([]byte(c.Arguments)) || c.ID == "" || c.Name == "" {
					t.Fatalf("malformed call %+v", c)
				}
			}
			if got.FinishReason == "" {
				t.Fatal("response without finish reason")
			}
		}
		if _, err := model.Collect(p.Stream(context.Background(), req)); !model.HasCode(err, model.CodeScriptExhausted) {
			t.Fatalf("after the last turn: %v", err)
		}
	})
}
