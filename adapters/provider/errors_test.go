package provider_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/credentials"
	"github.com/zuno-run/zuno/adapters/provider/anthropic"
	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/model"
)

// TestErrorsStatePrefixesOnce: representative errors of every layer, as the CLI prints them,
// state their code once and their subject once (issue 12 item 4): never
// "openai: transport: openai: …" or "unknown_agent: agent: …".
func TestErrorsStatePrefixesOnce(t *testing.T) {
	unauthorized := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`))
	}))
	defer unauthorized.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // nothing listens there: a transport failure
	models := func(p model.Provider) error {
		_, err := queries.Models(context.Background(), []string{"openai"}, func(string) (model.Provider, error) { return p, nil })
		return err
	}
	_, agentErr := agent.Resolve("nope", nil, true)
	tests := []struct {
		name, code, subject, start string
		err                        error
	}{
		{"models transport", model.CodeTransport, "openai", "transport: openai: the request failed",
			models(openai.New(openai.Options{BaseURL: closed.URL, APIKey: "k"}))},
		{"models auth", model.CodeAuth, "openai", "auth: openai: Incorrect API key provided (HTTP 401)",
			models(openai.New(openai.Options{BaseURL: unauthorized.URL, APIKey: "k"}))},
		{"anthropic without key", model.CodeAuth, "anthropic", "auth: anthropic: no API key is configured",
			first(anthropic.New(anthropic.Options{BaseURL: anthropic.DefaultBaseURL}))},
		{"unknown agent", agent.CodeUnknownAgent, "agent", `unknown_agent: no agent is named "nope"`, agentErr},
		{"missing key", string(credentials.CodeMissingKey), "openai", "missing_api_key: no openai API key is configured",
			credentials.Missing("openai", "OPENAI_BASE_URL", credentials.File{Path: "/d/auth.json"})},
		{"invalid field", domain.CodeInvalidArgument, "title", "invalid_argument: title: is empty",
			domain.Invalid("title", "is empty", "give a title")},
		{"field named in the message", domain.CodeStaleRevision, "expected_revision", "stale_revision: expected_revision is 2",
			domain.StaleRevision("plan", 2, 3, "plan_get")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("no error")
			}
			msg := tt.err.Error()
			if !strings.HasPrefix(msg, tt.start) {
				t.Errorf("%q does not start %q", msg, tt.start)
			}
			if n := strings.Count(msg, tt.code+": "); n != 1 {
				t.Errorf("%q states code %s %d times", msg, tt.code, n)
			}
			if n := strings.Count(msg, tt.subject+": "); n > 1 {
				t.Errorf("%q states subject %s %d times", msg, tt.subject, n)
			}
		})
	}
}

// TestNeedsKey: own endpoints need a key; another base URL (a local server, a gateway) may not.
func first(p model.Provider) error {
	_, err := model.Collect(p.Stream(context.Background(), model.Request{Model: "m", Messages: []model.Message{{Role: model.RoleUser, Text: "x"}}}))
	return err
}
