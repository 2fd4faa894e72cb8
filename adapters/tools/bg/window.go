package bg

import (
	"unicode/utf8"

	"github.com/zuno-run/zuno/events"
)

// Window sizes of bg's windowed read-back (see "Output caps and artifacts" in
// docs/tools.md). The cap is fixed on purpose: it does not follow
// tool_output.max_bytes, because read-back is how output withheld by that cap
// comes back, and lowering the cap must not shrink it.
const (
	DefaultLimit = 16384
	MaxLimit     = 51200
	// RingSize is how much of a task's most recent output stays in memory;
	// older bytes are served from the task's log file.
	RingSize = 2 << 20
)

// Status is the state of a background task.
type Status string

const (
	StatusRunning Status = "running"
	// StatusExited: the command ended on its own (with an exit code, or
	// killed by a signal that Zuno did not send; then Signal is set).
	StatusExited Status = "exited"
	// StatusKilled: Zuno stopped it without being asked to (Manager.Close).
	StatusKilled Status = "killed"
	// StatusCancelled: Cancel stopped it (bg action=cancel).
	StatusCancelled Status = "cancelled"
	// StatusCapped: Zuno stopped it when its log reached the disk cap (WithDiskCaps).
	StatusCapped Status = "capped"
	// StatusLost: the process that ran it ended without recording how it ended; the task
	// died with that process (the guard's lifeline) at a moment no one observed. Known from
	// the log only.
	StatusLost Status = "lost"
	// StatusUnknown: another Zuno process that is still alive (or on another host, which
	// cannot be checked) runs it; its completion, once recorded there, is read here. Never
	// reported as running: this process cannot see it run.
	StatusUnknown Status = "unknown"
)

// Window is one bounded read of an output stream. Offsets are absolute byte
// offsets into the stream; Cursor is where the next window starts and
// WindowFrom where this one starts, so a reader pages either way without
// doing arithmetic on lengths.
type Window struct {
	// TaskID or OutputPath names the source read.
	TaskID     string `json:"taskID,omitempty"`
	OutputPath string `json:"outputPath,omitempty"`

	// Text is the window's bytes, raw (not re-encoded).
	Text         string `json:"text,omitempty"`
	Bytes        int    `json:"bytes"`
	WindowFrom   int64  `json:"windowFrom"`
	Cursor       int64  `json:"cursor"`
	HasMore      bool   `json:"hasMore"`
	HasEarlier   bool   `json:"hasEarlier"`
	TotalWritten int64  `json:"totalWritten"`
	// FromDisk says the bytes came from the log file, because the cursor is
	// older than what the in-memory ring still holds.
	FromDisk bool `json:"fromDisk"`

	// Status, ExitCode and Signal describe a task (empty for an artifact).
	Status   Status `json:"status,omitempty"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Signal   string `json:"signal,omitempty"`
	// Completion is the task's recorded completion receipt, the same one bg list and a
	// later turn report (nil while it runs, or without a journal).
	Completion      *events.BackgroundCompleted `json:"completion,omitempty"`
	CompletionError string                      `json:"completionError,omitempty"`
}

// clampLimit applies the default and the cap: a limit is never rejected.
func clampLimit(limit int) int {
	switch {
	case limit <= 0:
		return DefaultLimit
	case limit > MaxLimit:
		return MaxLimit
	}
	return limit
}

// span is a planned window: the absolute range [from, end) of a stream whose
// length is total.
type span struct {
	from, end, total int64
	// tail: the window was placed at the end because no cursor was given.
	tail bool
}

// plan places a window. Without a cursor, tail places it at the end of the
// stream (a running command's latest output) and !tail at byte 0 (an
// artifact, which does not grow). A cursor outside [0, total] is an
// invalid_arguments error naming the valid range.
func plan(cursor *int64, limit int, total int64, tail bool) (span, error) {
	lim := int64(clampLimit(limit))
	s := span{total: total}
	switch {
	case cursor != nil:
		c := *cursor
		if c < 0 || c > total {
			return span{}, invalid("cursor",
				"cursor %d is outside the output, which has %d bytes: pass a cursor from 0 to %d (a cursor or windowFrom returned by an earlier window), or omit it",
				c, total, total)
		}
		s.from = c
	case tail:
		s.from = max(0, total-lim)
		s.tail = true
	}
	s.end = min(total, s.from+lim)
	return s, nil
}

// settle turns the bytes read for s into a Window.
//
// UTF-8: cursors are exact byte offsets, so a window may start or end inside
// a multi-byte sequence. To keep the text readable, a window whose END would
// split a sequence is shortened by up to 3 bytes so the next window starts on
// the sequence's first byte; a tail window (no cursor) likewise skips up to 3
// leading continuation bytes so it starts on a rune boundary. Neither
// adjustment ever empties a window, so paging always makes progress, and the
// end of a stream that will not grow (growing false and the window reaching
// total) is left alone: those bytes are final, and backing off would only make
// the next window return them again.
func settle(s span, data []byte, growing bool) Window {
	from := s.from
	if s.tail && from > 0 {
		k := 0
		for k < 3 && k < len(data)-1 && !utf8.RuneStart(data[k]) {
			k++
		}
		if k < len(data) && utf8.RuneStart(data[k]) {
			data, from = data[k:], from+int64(k)
		}
	}
	end := from + int64(len(data))
	if end < s.total || growing {
		if cut := incompleteTail(data); cut > 0 && cut < len(data) {
			data = data[:len(data)-cut]
			end -= int64(cut)
		}
	}
	return Window{
		Text:         string(data),
		Bytes:        len(data),
		WindowFrom:   from,
		Cursor:       end,
		HasMore:      end < s.total,
		HasEarlier:   from > 0,
		TotalWritten: s.total,
	}
}

// incompleteTail returns how many trailing bytes of b are the start of a
// UTF-8 sequence that b cuts short (0 when b ends on a boundary, or when the
// tail is not valid UTF-8 anyway: then there is nothing to keep together).
func incompleteTail(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if !utf8.RuneStart(c) {
			continue // a continuation byte: look further back for its lead
		}
		need := 0
		switch {
		case c&0xE0 == 0xC0:
			need = 2
		case c&0xF0 == 0xE0:
			need = 3
		case c&0xF8 == 0xF0:
			need = 4
		}
		if need > k {
			return k
		}
		return 0
	}
	return 0
}
