package provider

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/zuno-run/zuno/adapters/provider/anthropic"
	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/domain/model"
)

// Settings is provider.<id> of the configuration (docs/config.md, "Providers"). An id that
// names a family (openai, ollama, …) needs no entry; an entry under another id names its
// family.
type Settings struct {
	Family string `json:"family,omitempty"`
	// Retries is how often a failed request is sent again (docs/turns.md, "Retries").
	Retries *int    `json:"retries,omitempty"`
	Options Options `json:"options"`
}

// Options are the connection settings of a provider.
type Options struct {
	BaseURL string `json:"baseURL,omitempty"`
	// APIKey is the key itself, or {env:ZUNO_NAME}: a variable of the runtime's namespace,
	// which tool commands never inherit.
	APIKey  string            `json:"apiKey,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Timeout bounds the wait for the server to start answering (a Go duration, "30s").
	Timeout string `json:"timeout,omitempty"`
}

// family is a preset: where a kind of server listens and how it differs from the API it
// imitates. Each quirk is handled by the adapter's options; the words are recorded.
type family struct {
	api      string // chat, responses or messages
	baseURL  string // "" for compatible: the configuration must say
	keyFrom  string // the credentials provider whose key it uses, "" for none
	dialect  openai.Dialect
	noChoice bool
	quirks   []string
}

var compatibleQuirks = []string{
	"developer messages sent as system: chat templates of local servers know no developer role",
	"output limit sent as max_tokens, not max_completion_tokens",
	"finish_reason stop after tool calls read as tool_calls",
	"tool call ids missing or numbered per response: the runtime's ids are used (docs/turns.md)",
}

var families = map[string]family{
	"openai": {api: "chat", baseURL: openai.DefaultBaseURL, keyFrom: "openai", dialect: openai.DialectOpenAI},
	// The Responses API, OpenAI's own; a gateway speaking it is this family with a baseURL.
	"openai-responses": {api: "responses", baseURL: openai.DefaultBaseURL, keyFrom: "openai", dialect: openai.DialectOpenAI},
	"anthropic":        {api: "messages", baseURL: anthropic.DefaultBaseURL, keyFrom: "anthropic"},
	"ollama": {api: "chat", baseURL: "http://localhost:11434/v1", dialect: openai.DialectCompatible, noChoice: true,
		quirks: append(slices.Clone(compatibleQuirks), "tool_choice not sent: Ollama does not support it; a call made after the tools closed is not run")},
	"llamacpp": {api: "chat", baseURL: "http://localhost:8080/v1", dialect: openai.DialectCompatible, quirks: compatibleQuirks},
	"vllm": {api: "chat", baseURL: "http://localhost:8000/v1", dialect: openai.DialectCompatible,
		quirks: append(slices.Clone(compatibleQuirks), "max_model_len of /v1/models read as the context window", "an error inside the stream carries the HTTP status in its code")},
	"compatible": {api: "chat", dialect: openai.DialectCompatible, quirks: compatibleQuirks},
}

// Families are the provider families, for messages and `zuno models --verbose`.
func Families() []string {
	out := make([]string, 0, len(families))
	for f := range families {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// Resolved is a provider id resolved against its family and the configuration. APIKey is a
// secret: it goes to the adapter only (Public is what may be shown).
type Resolved struct {
	ID, Family, API string
	BaseURL         string
	// BaseURLFrom says where BaseURL came from: the family default, a host variable, or the
	// configuration key.
	BaseURLFrom string
	// KeyFrom is the credentials provider whose key this provider sends when the
	// configuration gives none ("" for none: a local server gets no host key).
	KeyFrom string
	APIKey  string
	// APIKeyFrom names where APIKey came from ("provider.x.options.apiKey", "ZUNO_X"), never
	// the key.
	APIKeyFrom string
	Headers    map[string]string
	Timeout    time.Duration
	Retry      model.RetryPolicy
	Quirks     []string
	noChoice   bool
	dialect    openai.Dialect
}

var providerID = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// Resolve resolves a provider id. cfg is the configuration's provider map; getenv reads the
// host's and the runtime's variables.
func Resolve(id string, cfg map[string]Settings, getenv func(string) string) (Resolved, error) {
	s, configured := cfg[id]
	name := s.Family
	if name == "" {
		name = id
	}
	fam, ok := families[name]
	switch {
	case !providerID.MatchString(id):
		return Resolved{}, specError(id, "is not a provider", "write a provider id: lower-case letters, digits, '-' and '_' (one of "+strings.Join(Families(), ", ")+", or one configured under provider), or scripted:<file>")
	case !ok && s.Family != "":
		return Resolved{}, configError(id, "family", fmt.Sprintf("%q is not a provider family", s.Family), "use one of "+strings.Join(Families(), ", "))
	case !ok:
		return Resolved{}, specError(id, "is not a provider",
			fmt.Sprintf("use scripted:<file> or one of %s, or configure it: {\"provider\": {%q: {\"family\": \"compatible\", \"options\": {\"baseURL\": \"http://host:port/v1\"}}}}", strings.Join(Families(), ", "), id))
	}
	r := Resolved{ID: id, Family: name, API: fam.api, BaseURL: fam.baseURL, BaseURLFrom: name + " default", KeyFrom: fam.keyFrom,
		Headers: s.Options.Headers, Quirks: fam.quirks, noChoice: fam.noChoice, dialect: fam.dialect, Retry: model.DefaultRetryPolicy()}
	if fam.keyFrom != "" {
		if v := getenv(BaseURLVar(fam.keyFrom)); v != "" {
			r.BaseURL, r.BaseURLFrom = v, BaseURLVar(fam.keyFrom)
		}
	}
	if s.Options.BaseURL != "" {
		r.BaseURL, r.BaseURLFrom = s.Options.BaseURL, "provider."+id+".options.baseURL"
	}
	if err := r.check(s, configured, getenv); err != nil {
		return Resolved{}, err
	}
	return r, nil
}

func (r *Resolved) check(s Settings, configured bool, getenv func(string) string) error {
	if r.BaseURL == "" {
		return configError(r.ID, "options.baseURL", "is not set, and the compatible family has no default",
			"set provider."+r.ID+".options.baseURL to the server's OpenAI-compatible root, e.g. http://localhost:1234/v1")
	}
	if u, err := url.Parse(r.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return configError(r.ID, "options.baseURL", fmt.Sprintf("%q (from %s) is not an http(s) URL", r.BaseURL, r.BaseURLFrom), "write it as http://host:port/v1")
	}
	if s.Retries != nil {
		if *s.Retries < 0 || *s.Retries > 10 {
			return configError(r.ID, "retries", fmt.Sprintf("is %d", *s.Retries), "use 0 (never retry) to 10")
		}
		r.Retry.Retries = *s.Retries
	}
	if t := s.Options.Timeout; t != "" {
		d, err := time.ParseDuration(t)
		if err != nil || d <= 0 {
			return configError(r.ID, "options.timeout", fmt.Sprintf("%q is not a positive duration", t), `write it like "30s" or "2m"`)
		}
		r.Timeout = d
	}
	for k := range s.Options.Headers {
		if strings.EqualFold(k, "Authorization") || strings.EqualFold(k, "x-api-key") {
			return configError(r.ID, "options.headers."+k, "would carry the key outside apiKey, where it is shown and not kept secret",
				"put the key in provider."+r.ID+".options.apiKey ({env:ZUNO_NAME} keeps it out of the file)")
		}
	}
	return r.apiKey(s.Options.APIKey, getenv)
}

// apiKey reads options.apiKey: the key, or {env:ZUNO_NAME}. A reference outside the ZUNO_*
// namespace is refused: tool commands inherit every other variable (docs/tools.md).
func (r *Resolved) apiKey(v string, getenv func(string) string) error {
	ref, isRef := strings.CutPrefix(v, "{env:")
	switch {
	case v == "":
		return nil
	case !isRef:
		r.APIKey, r.APIKeyFrom = v, "provider."+r.ID+".options.apiKey"
		return nil
	}
	name, closed := strings.CutSuffix(ref, "}")
	if !closed || !strings.HasPrefix(name, "ZUNO_") || len(name) == len("ZUNO_") {
		return configError(r.ID, "options.apiKey", fmt.Sprintf("%q does not name a ZUNO_* variable", v),
			"write {env:ZUNO_NAME}: tool commands inherit every variable outside the ZUNO_* namespace, so a key there is theirs to read")
	}
	if r.APIKey = getenv(name); r.APIKey == "" {
		return configError(r.ID, "options.apiKey", fmt.Sprintf("names %s, which is not set", name), "export "+name+" or drop the apiKey")
	}
	r.APIKeyFrom = name
	return nil
}

// NeedsKey reports whether the provider refuses to run without a key: openai and anthropic at
// their own endpoints. Another base URL (a gateway, a local server) may need none.
func (r Resolved) NeedsKey() bool {
	fam := families[r.Family]
	return fam.keyFrom != "" && sameURL(r.BaseURL, fam.baseURL)
}

// Open opens the resolved provider with key ("" for none).
func (r Resolved) Open(key string) model.Provider {
	var client *http.Client
	if r.Timeout > 0 {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.ResponseHeaderTimeout = r.Timeout
		client = &http.Client{Transport: t}
	}
	var p model.Provider
	switch r.API {
	case "messages":
		p = anthropic.New(anthropic.Options{BaseURL: r.BaseURL, APIKey: key, Headers: r.Headers, HTTPClient: client})
	case "responses":
		p = openai.NewResponses(r.openaiOptions(key, client))
	default:
		p = openai.New(r.openaiOptions(key, client))
	}
	return described{p, model.Description{Family: r.Family, API: r.API, BaseURL: PublicURL(r.BaseURL), Quirks: r.Quirks, Retry: r.Retry}}
}

func (r Resolved) openaiOptions(key string, client *http.Client) openai.Options {
	return openai.Options{Name: r.ID, BaseURL: r.BaseURL, APIKey: key, Dialect: r.dialect, IgnoreEnv: true,
		Headers: r.Headers, NoToolChoice: r.noChoice, HTTPClient: client}
}

// PublicURL is a base URL as it may be shown and recorded: a password in it is masked.
func PublicURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, set := u.User.Password(); set {
		u.User = url.UserPassword(u.User.Username(), "***")
	}
	return u.String()
}

// described is an adapter with its description.
type described struct {
	model.Provider
	d model.Description
}

func (d described) Describe() model.Description { return d.d }

func configError(id, field, message, fix string) *model.Error {
	e := model.NewError(model.CodeInvalidRequest, message, fix)
	e.Field = "provider." + id
	if field != "" {
		e.Field += "." + field
	}
	return e
}
