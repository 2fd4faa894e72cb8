// Package bounds holds the limits on what one call, one model response or one query may make
// Zuno hold in memory or put on disk, with their defaults and their hard ceilings
// (docs/config.md, "Bounds"). A ceiling is what no layer, trusted or not, can lift: a value
// above it is clamped to it. The project layer, which the checkout controls, may only lower a
// limit below what the trusted layers under it (or the default) say.
package bounds

import (
	"fmt"

	"github.com/zuno-run/zuno/domain"
)

// Limit is one bounded setting: its configuration key (dotted), default and ceiling.
type Limit struct {
	Key      string
	Default  int64
	Ceiling  int64
	Unit     string
	Settable bool // a configuration key; false: a fixed ceiling no layer sets
}

// The tool output limits (tool_output.*). The inline caps decide what reaches the model, the
// log and the provider in one event; the artifact caps decide how much disk a shell command's
// withheld output (foreground and background) may take, per call and per session.
var (
	ToolOutputBytes = Limit{Key: "tool_output.max_bytes", Default: 51200, Ceiling: 1 << 20, Unit: "bytes", Settable: true}
	ToolOutputLines = Limit{Key: "tool_output.max_lines", Default: 2000, Ceiling: 100_000, Unit: "lines", Settable: true}
	ArtifactBytes   = Limit{Key: "tool_output.max_artifact_bytes", Default: 1 << 30, Ceiling: 4 << 30, Unit: "bytes", Settable: true}
	SessionBytes    = Limit{Key: "tool_output.max_session_artifact_bytes", Default: 4 << 30, Ceiling: 16 << 30, Unit: "bytes", Settable: true}
)

// ToolOutput are the tool_output limits in the order docs/config.md lists them.
var ToolOutput = []Limit{ToolOutputBytes, ToolOutputLines, ArtifactBytes, SessionBytes}

// The model response ceilings: what one provider response may carry before it is refused
// while it streams, so no single event of the log holds more (docs/config.md, "Bounds").
var (
	ResponseText = Limit{Key: "model response text", Default: 8 << 20, Ceiling: 8 << 20, Unit: "bytes"}
	ToolArgument = Limit{Key: "model tool-call arguments", Default: 16 << 20, Ceiling: 16 << 20, Unit: "bytes"}
	Response     = Limit{Key: "model response", Default: 32 << 20, Ceiling: 32 << 20, Unit: "bytes"}
)

// The `zuno db` limits: its flags' defaults and ceilings.
var (
	DBRows    = Limit{Key: "zuno db --limit", Default: 1000, Ceiling: 1_000_000, Unit: "rows"}
	DBBytes   = Limit{Key: "zuno db --max-bytes", Default: 16 << 20, Ceiling: 256 << 20, Unit: "bytes"}
	DBTimeout = Limit{Key: "zuno db --timeout", Default: 30_000, Ceiling: 600_000, Unit: "ms"}
)

// Effective is v clamped to the limit: the default for 0 (unset), the ceiling above it.
// Negative values are the caller's to refuse before.
func (l Limit) Effective(v int64) int64 {
	switch {
	case v == 0:
		return l.Default
	case v > l.Ceiling:
		return l.Ceiling
	}
	return v
}

// CodeOverCeiling: a value asked for on the command line is above its hard ceiling.
const CodeOverCeiling = "over_ceiling"

// OverCeiling is the typed refusal of a flag above its ceiling (a configuration value is
// clamped instead, with a note: a file may be shared by hosts with other ceilings).
func (l Limit) OverCeiling(v int64) *domain.Error {
	e := domain.NewError(CodeOverCeiling,
		fmt.Sprintf("%s is %d %s, above its ceiling of %d %s", l.Key, v, l.Unit, l.Ceiling, l.Unit),
		fmt.Sprintf("ask for at most %d %s (docs/config.md, \"Bounds\")", l.Ceiling, l.Unit))
	e.Field = l.Key
	return e
}

// CodeResponseTooLarge: a model response (its text, one tool call's arguments, or the whole
// of it) grew past its ceiling while it streamed; it was refused before anything of it was
// stored, and the turn ended with this code.
const CodeResponseTooLarge = "response_too_large"
