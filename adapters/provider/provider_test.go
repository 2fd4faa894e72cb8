package provider_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/adapters/provider/scripted"
	"github.com/zuno-run/zuno/domain/model"
)

func TestOpen(t *testing.T) {
	script := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(script, []byte(`{"turns":[{"text":"hi"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		spec string
		ok   func(model.Provider) bool
		code string
	}{
		{"scripted:" + script, func(p model.Provider) bool { _, ok := p.(*scripted.Provider); return ok }, ""},
		{"openai", family("openai", "chat"), ""},
		{"anthropic", family("anthropic", "messages"), ""},
		{"ollama", family("ollama", "chat"), ""},
		{"llamacpp", family("llamacpp", "chat"), ""},
		{"vllm", family("vllm", "chat"), ""},
		{"openai-responses", family("openai-responses", "responses"), ""},
		{"compatible", nil, model.CodeInvalidRequest}, // no base URL to default to
		{"scripted:", nil, model.CodeInvalidRequest},
		{"scripted:" + filepath.Join(t.TempDir(), "missing.json"), nil, model.CodeScriptInvalid},
		{"openai:http://x", nil, model.CodeInvalidRequest},
		{"gemini", nil, model.CodeInvalidRequest},
		{"", nil, model.CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			p, err := provider.Open(tt.spec)
			if tt.code != "" {
				if !model.HasCode(err, tt.code) {
					t.Fatalf("Open(%q) = %v, want %s", tt.spec, err, tt.code)
				}
				return
			}
			if err != nil || !tt.ok(p) {
				t.Fatalf("Open(%q) = %T, %v", tt.spec, p, err)
			}
		})
	}
	p, _ := provider.Open("scripted:" + script)
	got, err := model.Collect(p.Stream(context.Background(), model.Request{Model: "m", Messages: []model.Message{{Role: model.RoleUser, Text: "x"}}}))
	if err != nil || got.Text != "hi" {
		t.Fatalf("scripted provider from spec: %+v, %v", got, err)
	}
}

func family(name, api string) func(model.Provider) bool {
	return func(p model.Provider) bool {
		d, ok := p.(model.Described)
		return ok && d.Describe().Family == name && d.Describe().API == api
	}
}
