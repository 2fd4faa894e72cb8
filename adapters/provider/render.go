package provider

import (
	"fmt"

	"github.com/zuno-run/zuno/adapters/provider/anthropic"
	"github.com/zuno-run/zuno/adapters/provider/internal/wire"
	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/domain/model"
)

// RenderWire renders the body the named adapter mapping builds for req, with the recorded
// settings, through the same SDK code that sent it (docs/turns.md, "Wire receipts"). A mapping
// this build does not have (another adapter, another version) is an error: its bytes would
// differ for reasons that say nothing about the log.
func RenderWire(adapter string, version int, settings map[string]string, req model.Request) ([]byte, error) {
	type renderer interface {
		RenderWire(model.Request) ([]byte, error)
	}
	var (
		r    renderer
		want int
		err  error
	)
	switch adapter {
	case openai.AdapterChat:
		want = openai.ChatMappingVersion
		r, err = openai.ForMapping(settings)
	case openai.AdapterResponses:
		want, r = openai.ResponsesMappingVersion, openai.ResponsesForMapping()
	case anthropic.Adapter:
		want = anthropic.MappingVersion
		r, err = anthropic.ForMapping(settings)
	default:
		return nil, fmt.Errorf("adapter %q is not one this build has (openai.chat, openai.responses, anthropic.messages)", adapter)
	}
	if version != want {
		return nil, fmt.Errorf("%s mapping version %d was recorded; this build renders version %d", adapter, version, want)
	}
	if err != nil {
		return nil, fmt.Errorf("%s mapping: %w", adapter, err)
	}
	// The prompt cache key went in the body, not in the prompt: the mapping recorded it.
	req.PromptCacheKey = settings[wire.SettingPromptCacheKey]
	return r.RenderWire(req)
}
