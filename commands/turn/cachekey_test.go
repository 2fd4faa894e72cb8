package turn_test

import (
	"context"
	"testing"

	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// keyed answers with text and keeps the prompt cache key of every request it is sent.
type keyed struct{ keys []string }

func (k *keyed) Stream(_ context.Context, req model.Request) model.Stream {
	k.keys = append(k.keys, req.PromptCacheKey)
	return func(yield func(model.Event, error) bool) {
		_ = yield(model.ResponseStart{ID: "r", Model: "m"}, nil) &&
			yield(model.TextDelta{Text: "ok"}, nil) &&
			yield(model.Finish{Reason: model.FinishStop}, nil)
	}
}

func (k *keyed) Models(context.Context) ([]model.ModelInfo, error) {
	return []model.ModelInfo{{ID: "m"}}, nil
}

// Every provider request of a session asks for the same prompt cache key, derived from the
// session id (docs/providers.md, "Prompt caching"), and another session's key differs.
func TestEveryRequestOfASessionHasItsCacheKey(t *testing.T) {
	h := newHarness(t)
	p := &keyed{}
	for range 2 {
		out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "go",
			Agent: buildAgent(), Provider: p, ProviderName: "keyed", Model: model.ModelInfo{ID: "m"}})
		if err != nil || out.Reason != events.FinishCompleted {
			t.Fatalf("outcome %+v, %v", out, err)
		}
	}
	want := turn.PromptCacheKey(h.session)
	if len(p.keys) != 2 || p.keys[0] != want || p.keys[1] != want {
		t.Fatalf("keys %q, want %q twice", p.keys, want)
	}
	if other := turn.PromptCacheKey(h.session + "x"); other == want || len(want) != len("zuno-")+32 {
		t.Fatalf("key %q, another session's %q", want, other)
	}
}
