// Package provider opens a model provider from the spec a user writes in configuration
// or on the command line. The adapters themselves are the sub-packages.
package provider

import (
	"fmt"
	"os"
	"strings"

	"github.com/zuno-run/zuno/adapters/provider/scripted"
	"github.com/zuno-run/zuno/domain/model"
)

// Open returns the provider a spec names:
//
//	scripted:<file>  plays the turns recorded in file (see package scripted)
//	ID               a provider family (openai, anthropic, ollama, llamacpp, vllm, compatible)
//	                 or an id configured under provider.<id> (Resolve)
//
// It sends no key; OpenConfigured is the runtime's way in, with the configuration and the key
// adapters/credentials resolved.
func Open(spec string) (model.Provider, error) { return OpenConfigured(spec, nil, os.Getenv, "") }

// OpenConfigured is Open with the configuration's provider map and the key the runtime
// resolved for the provider's KeyFrom ("" for none); a key in the configuration wins. The key
// goes to the adapter only, never into an event.
func OpenConfigured(spec string, cfg map[string]Settings, getenv func(string) string, key string) (model.Provider, error) {
	if kind, arg, _ := strings.Cut(spec, ":"); kind == "scripted" {
		if arg == "" {
			return nil, specError(spec, "names no script file", "write scripted:<path to the script JSON>")
		}
		return scripted.Open(arg)
	}
	r, err := Resolve(spec, cfg, getenv)
	if err != nil {
		return nil, err
	}
	if r.APIKey != "" {
		key = r.APIKey
	}
	return r.Open(key), nil
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
