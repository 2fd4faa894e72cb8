// Package provider opens a model provider from the spec a user writes in configuration
// or on the command line. The adapters themselves are the sub-packages.
package provider

import (
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/adapters/provider/anthropic"
	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/adapters/provider/scripted"
	"github.com/zuno-run/zuno/domain/model"
)

// Open returns the provider a spec names:
//
//	scripted:<file>  plays the turns recorded in file (see package scripted)
//	openai           OpenAI or a compatible server, from OPENAI_BASE_URL and OPENAI_API_KEY
//	anthropic        Anthropic, from ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL)
//
// Finer settings (a named Ollama endpoint, retries, HTTP client) are the adapters' Options;
// this covers what a spec string can say.
func Open(spec string) (model.Provider, error) { return OpenWithKey(spec, "") }

// OpenWithKey is Open with the API key the runtime resolved (adapters/credentials: a ZUNO_*
// variable, the auth file, or the host variable); "" leaves the adapter to read its host
// variable as before. The key goes to the adapter only, never into an event.
func OpenWithKey(spec, key string) (model.Provider, error) {
	switch kind, arg, _ := strings.Cut(spec, ":"); kind {
	case "scripted":
		if arg == "" {
			return nil, specError(spec, "names no script file", "write scripted:<path to the script JSON>")
		}
		return scripted.Open(arg)
	case "openai":
		if arg != "" {
			return nil, specError(spec, "takes no argument", "set OPENAI_BASE_URL to point it at another server")
		}
		return openai.New(openai.Options{APIKey: key}), nil
	case "anthropic":
		if arg != "" {
			return nil, specError(spec, "takes no argument", "set ANTHROPIC_BASE_URL to point it at another endpoint")
		}
		return anthropic.New(anthropic.Options{APIKey: key}), nil
	default:
		return nil, specError(spec, "is not a provider", "use scripted:<file>, openai or anthropic")
	}
}

// NeedsKey reports whether the provider a spec names refuses to run without an API key:
// openai and anthropic at their own endpoints. A base URL elsewhere (OPENAI_BASE_URL at
// Ollama or vLLM, ANTHROPIC_BASE_URL at a gateway) may need none, so it is not refused.
func NeedsKey(spec string, getenv func(string) string) bool {
	switch spec {
	case "openai":
		return sameURL(getenv(BaseURLVar(spec)), openai.DefaultBaseURL)
	case "anthropic":
		return sameURL(getenv(BaseURLVar(spec)), anthropic.DefaultBaseURL)
	}
	return false
}

// BaseURLVar is the variable that points a provider at another endpoint.
func BaseURLVar(spec string) string { return strings.ToUpper(spec) + "_BASE_URL" }

// sameURL: an unset base URL is the default one.
func sameURL(got, def string) bool {
	return got == "" || strings.TrimSuffix(got, "/") == strings.TrimSuffix(def, "/")
}

func specError(spec, message, fix string) *model.Error {
	e := model.NewError(model.CodeInvalidRequest, fmt.Sprintf("provider %q %s", spec, message), fix)
	e.Field = "provider"
	return e
}
