package turn_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/bounds"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// chunked streams a response of n bytes of text, or of one call's arguments, in 64 KiB
// deltas, as a provider does, and reports how much of it was read before the consumer
// stopped.
type chunked struct {
	n    int
	args bool
	read int
}

func (c *chunked) Stream(ctx context.Context, req model.Request) model.Stream {
	return func(yield func(model.Event, error) bool) {
		if !yield(model.ResponseStart{ID: "r1", Model: "m"}, nil) {
			return
		}
		if c.args && !yield(model.ToolCallStart{ID: "c1", Name: "write"}, nil) {
			return
		}
		chunk := strings.Repeat("x", 64<<10)
		for c.read < c.n {
			c.read += len(chunk)
			var ev model.Event = model.TextDelta{Text: chunk}
			if c.args {
				ev = model.ToolCallArgsDelta{ID: "c1", Delta: chunk}
			}
			if !yield(ev, nil) {
				return
			}
		}
		yield(model.Finish{Reason: model.FinishStop}, nil)
	}
}

func (c *chunked) Models(context.Context) ([]model.ModelInfo, error) {
	return []model.ModelInfo{{ID: "m"}}, nil
}

// A response past a ceiling ends the turn as failed with response_too_large while it
// streams: the provider is read no further than the ceiling and a chunk, and no event holds
// any of it (issue 30: a 50 MB answer and a 100 MB write argument were one event each).
func TestResponseOverTheCeilingIsRefusedWhileStreaming(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  bool
		limit bounds.Limit
	}{{"text", false, bounds.ResponseText}, {"tool argument", true, bounds.ToolArgument}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			p := &chunked{n: 100 << 20, args: tc.args}
			out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "go",
				Agent: buildAgent(), Provider: p, ProviderName: "chunked", Model: model.ModelInfo{ID: "m"}})
			if err != nil {
				t.Fatal(err)
			}
			if out.Reason != events.FinishFailed || out.Error == nil || out.Error.Code != bounds.CodeResponseTooLarge {
				t.Fatalf("outcome %+v (error %+v)", out, out.Error)
			}
			if int64(p.read) > tc.limit.Ceiling+64<<10 {
				t.Fatalf("read %d bytes of the stream, past the ceiling %d and a chunk", p.read, tc.limit.Ceiling)
			}
			for _, ev := range h.events(t) {
				data, _ := json.Marshal(ev)
				if len(data) > 1<<20 {
					t.Fatalf("%s holds %d bytes", ev.EventType(), len(data))
				}
				if r, ok := ev.(events.ProviderRequest); ok && r.Status == events.RequestCompleted {
					t.Fatalf("the response was recorded completed: %s", data[:200])
				}
			}
		})
	}
}

// A response under the ceilings passes whole.
func TestResponseUnderTheCeilingPasses(t *testing.T) {
	h := newHarness(t)
	p := &chunked{n: 1 << 20}
	out, err := h.driver.Run(context.Background(), turn.Request{Meta: turnMeta(), SessionID: h.session, Text: "go",
		Agent: buildAgent(), Provider: p, ProviderName: "chunked", Model: model.ModelInfo{ID: "m"}})
	if err != nil || out.Reason != events.FinishCompleted || len(out.Text) != 1<<20 {
		t.Fatalf("outcome %s, %d bytes, %v", out.Reason, len(out.Text), err)
	}
}
