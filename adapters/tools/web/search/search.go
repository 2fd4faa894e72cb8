// Package search is web_search's provider interface and its backends (docs/web.md,
// "web_search"): a SearxNG-compatible JSON API configured by URL and key, and a scripted one
// for tests. A provider's errors and log lines name only the provider, the endpoint's scheme,
// host and path, the HTTP status and a class (seeds 000): never the key, an auth header or the
// query, so neither reaches the session's record or a log.
package search

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/zuno-run/zuno/domain"
)

// Query is one search.
type Query struct {
	Text  string
	Limit int
}

// Hit is one result.
type Hit struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
}

// Provider runs searches.
type Provider interface {
	// Name is the provider as diagnostics name it ("searxng", "scripted").
	Name() string
	// Network says whether a search reaches the network (so the sandbox's network policy
	// applies to it); the scripted provider does not.
	Network() bool
	Search(ctx context.Context, q Query) ([]Hit, error)
}

// Config is the web_search configuration key (docs/web.md). Only trusted layers may set it: it
// says where the agent's queries go.
type Config struct {
	// Provider is "searxng" (the default when URL is set) or "scripted".
	Provider string `json:"provider,omitempty"`
	// URL is the search endpoint (searxng), such as https://search.example/search.
	URL string `json:"url,omitempty"`
	// APIKey is the key itself or {env:ZUNO_NAME}; sent as a bearer token.
	APIKey string `json:"apiKey,omitempty"`
	// File is the scripted provider's results: {"query text": [hits]}.
	File string `json:"file,omitempty"`
}

// Configured reports whether the key configures a provider at all.
func (c Config) Configured() bool { return c.Provider != "" || c.URL != "" }

// Stable error codes.
const (
	// CodeSearchConfig: web_search is configured but cannot be used (unknown provider, no
	// URL, a key reference outside ZUNO_*, an unreadable scripted file).
	CodeSearchConfig = "web_search_config"
	// CodeSearchFailed: the provider failed; the message carries only the provider, scheme,
	// host, path, status and class.
	CodeSearchFailed = "web_search_failed"
)

// Open returns the configured provider; getenv reads a {env:ZUNO_NAME} key.
func Open(c Config, getenv func(string) string) (Provider, error) {
	switch strings.ToLower(c.Provider) {
	case "", "searxng":
		key, err := apiKey(c.APIKey, getenv)
		if err != nil {
			return nil, err
		}
		return NewSearxNG(c.URL, key)
	case "scripted":
		return OpenScripted(c.File)
	}
	return nil, domain.NewError(CodeSearchConfig, fmt.Sprintf("web_search.provider %q is not searxng or scripted", c.Provider),
		"set web_search.provider to searxng (with url and apiKey) or leave it out")
}

// apiKey reads the key: the value itself, or {env:ZUNO_NAME}, a variable of the runtime's
// namespace, which tool commands never inherit (docs/config.md, "Provider keys").
func apiKey(v string, getenv func(string) string) (string, error) {
	ref, isRef := strings.CutPrefix(v, "{env:")
	if !isRef {
		return v, nil
	}
	name, ok := strings.CutSuffix(ref, "}")
	if !ok || !strings.HasPrefix(name, "ZUNO_") {
		return "", domain.NewError(CodeSearchConfig, "web_search.apiKey refers to a variable outside the ZUNO_* namespace",
			"write {env:ZUNO_NAME}: tool commands inherit every variable outside the ZUNO_* namespace, so a key there is theirs to read")
	}
	return getenv(name), nil
}

// Scripted answers from a file of canned results, for tests; it never touches the network.
type Scripted struct{ hits map[string][]Hit }

// OpenScripted reads path: a JSON object from query text to its hits.
func OpenScripted(path string) (*Scripted, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, domain.NewError(CodeSearchConfig, "web_search.file cannot be read: "+err.Error(), "point web_search.file at a JSON file of results")
	}
	s := &Scripted{}
	if err := json.Unmarshal(b, &s.hits); err != nil {
		return nil, domain.NewError(CodeSearchConfig, "web_search.file is not a JSON object of hits: "+err.Error(), `write {"query": [{"title": "...", "url": "..."}]}`)
	}
	return s, nil
}

func (s *Scripted) Name() string  { return "scripted" }
func (s *Scripted) Network() bool { return false }

// Search returns the query's canned hits (none for a query the file does not name).
func (s *Scripted) Search(ctx context.Context, q Query) ([]Hit, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h := s.hits[q.Text]
	if q.Limit > 0 && len(h) > q.Limit {
		h = h[:q.Limit]
	}
	return h, nil
}
