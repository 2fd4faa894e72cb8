package turn

import (
	"fmt"

	"github.com/zuno-run/zuno/domain/bounds"
	"github.com/zuno-run/zuno/domain/model"
)

// boundStream passes a provider's stream on until the response grows past a ceiling
// (domain/bounds: its text, one call's arguments, or the whole response), then ends it with
// a response_too_large error: the provider's reading stops there, so what is held is at most
// a ceiling and one event, and the request is recorded failed with the code and no part of
// the response (docs/config.md, "Bounds"; issue 30: a 100 MB write argument was one event).
func boundStream(s model.Stream) model.Stream {
	return func(yield func(model.Event, error) bool) {
		var m responseMeter
		for ev, err := range s {
			if err == nil {
				if over := m.add(ev); over != nil {
					yield(nil, over)
					return
				}
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// responseMeter counts a response's bytes as they stream.
type responseMeter struct {
	text, total int64
	args        map[string]int64 // by the stream's call id
}

// add counts ev and returns the refusal when a ceiling is crossed.
func (m *responseMeter) add(ev model.Event) error {
	switch e := ev.(type) {
	case model.TextDelta:
		m.text += int64(len(e.Text))
		m.total += int64(len(e.Text))
		if m.text > bounds.ResponseText.Ceiling {
			return tooLarge(bounds.ResponseText, m.text, "")
		}
	case model.ToolCallArgsDelta:
		return m.addArgs(e.ID, int64(len(e.Delta)), false)
	case model.ToolCallEnd:
		return m.addArgs(e.ID, int64(len(e.Arguments)), true)
	case model.ReasoningItem:
		m.total += int64(len(e.Reasoning.Summary) + len(e.Reasoning.EncryptedContent))
	}
	if m.total > bounds.Response.Ceiling {
		return tooLarge(bounds.Response, m.total, "")
	}
	return nil
}

// addArgs counts n bytes of call id's arguments: a delta adds to them, an end replaces them
// (its arguments are authoritative, model.Accumulator).
func (m *responseMeter) addArgs(id string, n int64, end bool) error {
	if m.args == nil {
		m.args = map[string]int64{}
	}
	prev := m.args[id]
	if end {
		m.total -= prev
		prev = 0
	}
	m.args[id] = prev + n
	m.total += n
	if m.args[id] > bounds.ToolArgument.Ceiling {
		return tooLarge(bounds.ToolArgument, m.args[id], id)
	}
	if m.total > bounds.Response.Ceiling {
		return tooLarge(bounds.Response, m.total, "")
	}
	return nil
}

func tooLarge(l bounds.Limit, n int64, callID string) *model.Error {
	what := l.Key
	if callID != "" {
		what = fmt.Sprintf("%s of call %q", l.Key, callID)
	}
	e := model.NewError(bounds.CodeResponseTooLarge,
		fmt.Sprintf("the %s reached %d bytes while streaming, over its ceiling of %d; the response was refused and nothing of it was stored", what, n, l.Ceiling),
		"ask for smaller pieces: write a large file in several calls (write, then apply_patch), or answer in parts")
	e.Field = l.Key
	return e
}
