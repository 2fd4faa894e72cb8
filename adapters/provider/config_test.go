package provider_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/domain/model"
)

func TestResolve(t *testing.T) {
	env := map[string]string{"ZUNO_LOCAL_KEY": "sk-local", "LOCAL_KEY": "sk-host"}
	getenv := func(k string) string { return env[k] }
	two := 2
	tests := []struct {
		name  string
		id    string
		cfg   map[string]provider.Settings
		vars  map[string]string // on top of env
		check func(provider.Resolved) bool
		field string // the refused key, "" when resolved
	}{
		{"a family needs no entry", "ollama", nil, nil, func(r provider.Resolved) bool {
			return r.BaseURL == "http://localhost:11434/v1" && r.KeyFrom == "" && r.Retry.Retries == model.DefaultRetries && len(r.Quirks) > 0
		}, ""},
		{"llamacpp default", "llamacpp", nil, nil, func(r provider.Resolved) bool { return r.BaseURL == "http://localhost:8080/v1" }, ""},
		{"vllm default", "vllm", nil, nil, func(r provider.Resolved) bool { return r.BaseURL == "http://localhost:8000/v1" }, ""},
		{"openai at its own endpoint needs a key", "openai", nil, nil, func(r provider.Resolved) bool { return r.NeedsKey() && r.KeyFrom == "openai" }, ""},
		{"OPENAI_BASE_URL elsewhere needs none", "openai", nil, map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1"},
			func(r provider.Resolved) bool { return !r.NeedsKey() && r.BaseURLFrom == "OPENAI_BASE_URL" }, ""},
		{"OPENAI_BASE_URL at OpenAI still needs one", "openai", nil, map[string]string{"OPENAI_BASE_URL": "https://api.openai.com/v1/"},
			func(r provider.Resolved) bool { return r.NeedsKey() }, ""},
		{"ANTHROPIC_BASE_URL at a gateway needs none", "anthropic", nil, map[string]string{"ANTHROPIC_BASE_URL": "http://gateway"},
			func(r provider.Resolved) bool { return !r.NeedsKey() }, ""},
		{"the configured base URL wins over the variable", "openai",
			map[string]provider.Settings{"openai": {Options: provider.Options{BaseURL: "https://proxy.example/v1"}}},
			map[string]string{"OPENAI_BASE_URL": "http://other/v1"},
			func(r provider.Resolved) bool {
				return r.BaseURL == "https://proxy.example/v1" && r.BaseURLFrom == "provider.openai.options.baseURL"
			}, ""},
		{"a new id of a family", "box", map[string]provider.Settings{"box": {Family: "compatible", Retries: &two,
			Options: provider.Options{BaseURL: "http://10.0.0.2:1234/v1", APIKey: "{env:ZUNO_LOCAL_KEY}", Headers: map[string]string{"X-Team": "a"}, Timeout: "45s"}}},
			nil, func(r provider.Resolved) bool {
				return r.Family == "compatible" && r.APIKey == "sk-local" && r.APIKeyFrom == "ZUNO_LOCAL_KEY" && r.Retry.Retries == 2 &&
					r.Timeout == 45*time.Second && r.Headers["X-Team"] == "a" && r.KeyFrom == ""
			}, ""},
		{"a literal key in a trusted file", "box", map[string]provider.Settings{"box": {Family: "vllm", Options: provider.Options{APIKey: "sk-lit"}}},
			nil, func(r provider.Resolved) bool {
				return r.APIKey == "sk-lit" && r.APIKeyFrom == "provider.box.options.apiKey"
			}, ""},
		{"retries 0 never retries", "ollama", map[string]provider.Settings{"ollama": {Retries: new(int)}}, nil,
			func(r provider.Resolved) bool { return r.Retry.Retries == 0 }, ""},
		{"unknown id", "gemini", nil, nil, nil, "provider"},
		{"unknown family", "box", map[string]provider.Settings{"box": {Family: "tgi"}}, nil, nil, "provider.box.family"},
		{"compatible without a base URL", "box", map[string]provider.Settings{"box": {Family: "compatible"}}, nil, nil, "provider.box.options.baseURL"},
		{"base URL not http", "ollama", map[string]provider.Settings{"ollama": {Options: provider.Options{BaseURL: "file:///etc/passwd"}}}, nil, nil, "provider.ollama.options.baseURL"},
		{"base URL without host", "ollama", map[string]provider.Settings{"ollama": {Options: provider.Options{BaseURL: "http:///v1"}}}, nil, nil, "provider.ollama.options.baseURL"},
		{"key in a host variable tools inherit", "box", map[string]provider.Settings{"box": {Family: "vllm", Options: provider.Options{APIKey: "{env:LOCAL_KEY}"}}}, nil, nil, "provider.box.options.apiKey"},
		{"key reference lower-case namespace", "box", map[string]provider.Settings{"box": {Family: "vllm", Options: provider.Options{APIKey: "{env:zuno_LOCAL_KEY}"}}}, nil, nil, "provider.box.options.apiKey"},
		{"key reference unclosed", "box", map[string]provider.Settings{"box": {Family: "vllm", Options: provider.Options{APIKey: "{env:ZUNO_LOCAL_KEY"}}}, nil, nil, "provider.box.options.apiKey"},
		{"key reference to the bare prefix", "box", map[string]provider.Settings{"box": {Family: "vllm", Options: provider.Options{APIKey: "{env:ZUNO_}"}}}, nil, nil, "provider.box.options.apiKey"},
		{"key reference unset", "box", map[string]provider.Settings{"box": {Family: "vllm", Options: provider.Options{APIKey: "{env:ZUNO_MISSING}"}}}, nil, nil, "provider.box.options.apiKey"},
		{"Authorization header", "ollama", map[string]provider.Settings{"ollama": {Options: provider.Options{Headers: map[string]string{"authorization": "Bearer x"}}}}, nil, nil, "provider.ollama.options.headers.authorization"},
		{"x-api-key header", "ollama", map[string]provider.Settings{"ollama": {Options: provider.Options{Headers: map[string]string{"X-Api-Key": "x"}}}}, nil, nil, "provider.ollama.options.headers.X-Api-Key"},
		{"timeout not a duration", "ollama", map[string]provider.Settings{"ollama": {Options: provider.Options{Timeout: "30"}}}, nil, nil, "provider.ollama.options.timeout"},
		{"timeout negative", "ollama", map[string]provider.Settings{"ollama": {Options: provider.Options{Timeout: "-1s"}}}, nil, nil, "provider.ollama.options.timeout"},
		{"retries negative", "ollama", map[string]provider.Settings{"ollama": {Retries: ptr(-1)}}, nil, nil, "provider.ollama.retries"},
		{"retries unbounded", "ollama", map[string]provider.Settings{"ollama": {Retries: ptr(11)}}, nil, nil, "provider.ollama.retries"},
		{"id with a separator", "a/b", nil, nil, nil, "provider"},
		{"id upper-case", "Ollama", nil, nil, nil, "provider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			get := getenv
			if tt.vars != nil {
				get = func(k string) string {
					if v, ok := tt.vars[k]; ok {
						return v
					}
					return env[k]
				}
			}
			r, err := provider.Resolve(tt.id, tt.cfg, get)
			if tt.field != "" {
				var e *model.Error
				if !asError(err, &e) || e.Field != tt.field || e.Fix == "" || e.Code() != model.CodeInvalidRequest {
					t.Fatalf("Resolve() = %v, want a refusal of %s with a fix", err, tt.field)
				}
				if strings.Contains(err.Error(), "sk-") {
					t.Fatalf("the error shows a key: %v", err)
				}
				return
			}
			if err != nil || !tt.check(r) {
				t.Fatalf("Resolve() = %+v, %v", r, err)
			}
		})
	}
}

func TestPublicURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:8080/v1":             "http://localhost:8080/v1",
		"https://user:s3cret@proxy.example/v1": "https://user:%2A%2A%2A@proxy.example/v1",
		"https://user@proxy.example/v1":        "https://user@proxy.example/v1",
	} {
		if got := provider.PublicURL(in); got != want || strings.Contains(got, "s3cret") {
			t.Errorf("PublicURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func ptr(n int) *int { return &n }

func asError(err error, target **model.Error) bool { return errors.As(err, target) }
