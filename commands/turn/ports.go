// Package turn is the agent turn as a process manager: it takes one user input and drives it
// to an answer, recording every step as an event before anything depends on it — the prompt
// receipt before the provider request, the request before the response is used, a tool call's
// start before it runs and its result before the next step. A crashed run is recovered from the
// log alone: the next run of the session settles what was cut short (uncertain or cancelled)
// and never re-runs it.
//
// The driver is the single writer of its session's stream during a turn. It folds its own
// events into an in-memory transcript (domain/transcript), so a step never reloads the history,
// and it appends with the exact expected revision, so a second writer is detected, not merged.
package turn

import (
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// Tool is one tool the driver can offer and run (the contract is domain/tools.Tool; the
// adapters in adapters/tools implement it).
type Tool = tools.Tool

// Observer sees a turn as it happens: the CLI streams it to the user. Calls come from the
// driver's goroutine, in order.
type Observer interface {
	// Recorded is called for every event once it is durable.
	Recorded(rec events.Recorded, p events.Payload)
	// TextDelta is called for each piece of assistant text as it streams in.
	TextDelta(text string)
}

// NopObserver ignores everything.
type NopObserver struct{}

func (NopObserver) Recorded(events.Recorded, events.Payload) {}
func (NopObserver) TextDelta(string)                         {}

// Surface is the tools of one session's run over its workspace, opened by the host (the tool
// adapters and their per-session state); Close ends what they started (background tasks).
type Surface interface {
	Tools() []Tool
	Close() error
}

// OpenTools opens the tool surface of a session working in dir.
type OpenTools func(dir, sessionID string) (Surface, error)
