package provider

import (
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zuno-run/zuno/adapters/provider/internal/wire"
	"github.com/zuno-run/zuno/adapters/provider/openai"
	"github.com/zuno-run/zuno/domain/model"
)

// WireSums renders bodies as RenderWire does but returns their SHA-256 and size, keeping one
// renderer per recorded mapping: the Chat Completions renderer keeps each conversation's
// encoded start with its hash state, so one session's bodies, checked in order, cost what each
// step added (docs/storage.md, "`zuno verify`"). The other mappings render the whole body
// each time. Not safe for concurrent use.
type WireSums struct {
	chat map[string]*openai.SumRenderer
	// lastSettings and lastKey are the last mapping's settings and their key: every request of
	// a session records the same mapping, and building its key was a tenth of a step's render.
	lastSettings map[string]string
	lastKey      string
}

// NewWireSums returns a renderer with no mapping loaded yet.
func NewWireSums() *WireSums { return &WireSums{chat: map[string]*openai.SumRenderer{}} }

// Sum returns the SHA-256 and size of the body the mapping builds for req.
func (w *WireSums) Sum(adapter string, version int, settings map[string]string, req model.Request) ([]byte, int64, error) {
	if adapter != openai.AdapterChat || version != openai.ChatMappingVersion {
		body, err := RenderWire(adapter, version, settings, req)
		if err != nil {
			return nil, 0, err
		}
		sum := sha256.Sum256(body)
		return sum[:], int64(len(body)), nil
	}
	// The prompt cache key went in the body, not in the prompt: the mapping recorded it (as
	// RenderWire takes it).
	req.PromptCacheKey = settings[wire.SettingPromptCacheKey]
	key := w.key(settings)
	r, ok := w.chat[key]
	if !ok {
		p, err := openai.ForMapping(settings)
		if err != nil {
			return nil, 0, fmt.Errorf("%s mapping: %w", adapter, err)
		}
		r = openai.NewSumRenderer(p)
		w.chat[key] = r
	}
	return r.Sum(req)
}

// key is settingsKey(settings), the last one's again when settings are the last ones.
func (w *WireSums) key(settings map[string]string) string {
	if w.lastSettings == nil || !maps.Equal(settings, w.lastSettings) {
		w.lastSettings, w.lastKey = maps.Clone(settings), settingsKey(settings)
		if w.lastSettings == nil {
			w.lastSettings = map[string]string{} // nil settings are the empty ones
		}
	}
	return w.lastKey
}

func settingsKey(settings map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		fmt.Fprintf(&b, "%q=%q;", k, settings[k])
	}
	return b.String()
}
