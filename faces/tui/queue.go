package tui

import (
	"strings"
	"sync"
	"unicode"
)

// queue hands the Engine's messages to a face in order without ever blocking the sender: a
// turn's observer calls in from the driver, and a face may call the Engine from its own loop
// (Bubble Tea's Update), which a blocking send would deadlock.
type queue struct {
	mu     sync.Mutex
	items  []any
	signal chan struct{}
}

func newQueue() *queue { return &queue{signal: make(chan struct{}, 1)} }

func (q *queue) put(m any) {
	q.mu.Lock()
	q.items = append(q.items, m)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// take returns what is queued, oldest first.
func (q *queue) take() []any {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.items
	q.items = nil
	return out
}

// Sanitize makes text from the model, a tool or the log safe to put on a terminal: every
// control character but the line feed is removed (a tab becomes spaces), so no escape
// sequence, carriage return or backspace in a model's answer can move the cursor, recolour,
// retitle, write the clipboard (OSC 52) or overwrite what the chat shows (docs/tui.md,
// "What reaches the terminal"). C1 controls (U+0080–U+009F: a lone U+009B is a CSI) go too,
// and so do invalid UTF-8 bytes and bidirectional overrides.
func Sanitize(s string) string {
	clean := true
	for _, r := range s {
		if dropped(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t':
			b.WriteString("    ")
		case r == '\n':
			b.WriteRune(r)
		case dropped(r):
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

const utf8RuneError = '\uFFFD'

// dropped: a control character (but the line feed), an invalid byte, or a bidirectional
// override or isolate, which would make the shown text read in another order than it is.
func dropped(r rune) bool {
	return r != '\n' && (r == utf8RuneError || unicode.IsControl(r) || (r >= '\u202A' && r <= '\u202E') ||
		(r >= '\u2066' && r <= '\u2069'))
}
