package continuity

import (
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/events"
)

// Evidence is a session's stream normalised into items, windowed by its compactions
// (docs/compaction.md): what the history tool reads. Only what the session recorded as said
// or done is an item: user messages (reports and peer messages among them), the model's
// answer text, its tool calls and their results, and compaction summaries. Reasoning (and
// its encrypted content), the host's synthetic prompts (the step-limit and compaction
// instructions, the system sections) and a compaction request's own answer (its summary is
// the compaction's item) are left out; no attachment bytes are recorded in the stream.
type Evidence struct {
	items   []Item
	byID    map[string]int
	windows []Window
}

// Item is one piece of evidence.
type Item struct {
	ID     string
	Window int
	// Kind is user_message, report, peer_message, assistant_text, tool_call, tool_result or
	// compaction_summary.
	Kind string
	Tool string
	Text string
}

type itemHeader struct {
	ID      string `json:"id"`
	Window  int    `json:"window"`
	Kind    string `json:"kind"`
	Tool    string `json:"tool,omitempty"`
	Bytes   int    `json:"bytes"`
	Preview string `json:"preview"`
}

func (it Item) header() itemHeader {
	return itemHeader{ID: it.ID, Window: it.Window, Kind: it.Kind, Tool: it.Tool, Bytes: len(it.Text), Preview: clip(it.Text, previewBytes)}
}

// Window is a span of the session between compactions.
type Window struct {
	Window int `json:"window"`
	Items  int `json:"items"`
	// Step and RequestID name the compaction that opened it (none for window 0).
	Step      int    `json:"compactionStep,omitempty"`
	RequestID string `json:"compactionRequestId,omitempty"`
}

// Add folds one event of the session stream.
func (e *Evidence) Add(rec events.Recorded, p events.Payload) {
	if e.windows == nil {
		e.windows = []Window{{}}
		e.byID = map[string]int{}
	}
	id := func(n int) string { return fmt.Sprintf("h%d.%d", rec.StreamRevision, n) }
	switch x := p.(type) {
	case events.UserMessageAppended:
		kind := "user_message"
		switch {
		case x.TaskReport != nil:
			kind = "report"
		case x.PeerMessage != nil:
			kind = "peer_message"
		}
		e.add(Item{ID: id(0), Kind: kind, Text: x.Text})
	case events.ProviderRequest:
		if x.Status != events.RequestCompleted || x.Response == nil || x.Purpose != "" {
			return
		}
		if x.Response.Text != "" {
			e.add(Item{ID: id(0), Kind: "assistant_text", Text: x.Response.Text})
		}
		for i, c := range x.Response.ToolCalls {
			e.add(Item{ID: id(i + 1), Kind: "tool_call", Tool: c.Name, Text: c.Arguments})
		}
	case events.ToolSettled:
		e.add(Item{ID: id(0), Kind: "tool_result", Tool: x.Tool, Text: x.Output})
	case events.ToolBlocked:
		e.add(Item{ID: id(0), Kind: "tool_result", Tool: x.Tool, Text: x.Output})
	case events.TranscriptCompacted:
		e.windows = append(e.windows, Window{Window: x.Window, Step: x.Step, RequestID: x.RequestID})
		e.add(Item{ID: id(0), Kind: "compaction_summary", Text: x.Summary})
	}
}

func (e *Evidence) add(it Item) {
	it.Window = len(e.windows) - 1
	e.byID[it.ID] = len(e.items)
	e.items = append(e.items, it)
	e.windows[it.Window].Items++
}

// Windows lists the windows.
func (e *Evidence) Windows() []Window {
	if e.windows == nil {
		return []Window{{}}
	}
	return e.windows
}

// Latest is the current window.
func (e *Evidence) Latest() int { return max(len(e.windows)-1, 0) }

// InWindow returns the items of window w.
func (e *Evidence) InWindow(w int) []Item {
	var out []Item
	for _, it := range e.items {
		if it.Window == w {
			out = append(out, it)
		}
	}
	return out
}

// Item returns the item with this id.
func (e *Evidence) Item(id string) (Item, bool) {
	i, ok := e.byID[id]
	if !ok {
		return Item{}, false
	}
	return e.items[i], true
}

type evidenceMatch struct {
	itemHeader
	Snippet string `json:"snippet"`
}

// Search finds query case-insensitively in the items of window (every window when < 0), at
// most limit matches, one per item.
func (e *Evidence) Search(query string, window, limit int) []evidenceMatch {
	q := strings.ToLower(query)
	out := []evidenceMatch{}
	for _, it := range e.items {
		if window >= 0 && it.Window != window {
			continue
		}
		i := strings.Index(strings.ToLower(it.Text), q)
		if i < 0 {
			continue
		}
		from := min(max(0, i-80), len(it.Text)) // lower-casing may change a text's length
		for from > 0 && !utf8RuneStart(it.Text[from]) {
			from--
		}
		out = append(out, evidenceMatch{itemHeader: it.header(), Snippet: clip(it.Text[from:], 240)})
		if len(out) == limit {
			break
		}
	}
	return out
}
