package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// A reply is recorded only on a deliberate confirmation (docs/tui.md, "Answering: no reply
// from type-ahead"). Two rules make it so:
//
//   - what the panel shows (an ask, a question's item) takes keys only once it has been on
//     the screen for readGuard: keys typed before it appeared, or in the moment it did, were
//     typed for the input line and go there (a line begun then is a message, not an answer);
//   - an ask's one-key reply (o, a, r; y, n) only selects; Enter records the selection, and
//     any other key drops it (Esc, Backspace, Ctrl-U, Ctrl-C: nothing recorded; a printable key
//     or a paste: the selected letter was the start of a line, and goes into it).
//
// A question's answer is a line and its Enter; the line answers the item only when it was
// begun after the item had been shown for readGuard, and Enter on an empty line (skipping
// the item) counts only then too.

// readGuard is how long the panel's head must have been on screen before a key answers it:
// longer than keys of one burst of typing are apart, shorter than a person takes to read a
// line and decide.
const readGuard = 500 * time.Millisecond

// head is what the panel shows, and since when.
type head struct {
	key   string // "", "picker", "ask:<shown>:<ask id>", "question:<request id>/<item>"
	since time.Time
}

// selection is an ask's reply chosen with one key, not recorded yet: Enter records it.
type selection struct {
	// key is the head it was made at: that very ask (askHead), not any ask of the same id.
	key          string
	askID, reply string
	typed        string // the key as typed: put back into the line when the person goes on typing
}

// guardMsg redraws the screen when the guard of the head it names has passed.
type guardMsg struct{ key string }

func (m *screen) clock() time.Time {
	if m.now != nil {
		return m.now()
	}
	return time.Now()
}

func (m *screen) questionKey() string {
	if len(m.question) == 0 {
		return ""
	}
	return fmt.Sprintf("question:%s/%d", m.question[0].req.RequestID, m.question[0].item)
}

// headKey is what the panel shows: the picker; the question item a line is being typed for
// (an ask that arrives meanwhile waits behind it); the first ask; the first question's item.
func (m *screen) headKey() string {
	switch {
	case m.picker != nil:
		return "picker"
	case len(m.input) > 0 && m.lineFor != "" && m.lineFor == m.questionKey():
		return m.lineFor
	case len(m.asks) > 0:
		return askHead(m.asks[0])
	}
	return m.questionKey()
}

// askHead names one ask as shown: two asks of the same id (another session's, a model that
// reuses a call id) are two heads, each with its own guard, and a selection made at one
// never confirms the other.
func askHead(a askMsg) string { return fmt.Sprintf("ask:%d:%s", a.shown, a.Ask.AskID) }

// track runs after every message: when the head changed, its guard starts (and a tick
// redraws the screen when it passes); a selection for an ask no longer shown is dropped,
// nothing recorded.
func (m *screen) track() tea.Cmd {
	k := m.headKey()
	if m.sel != nil && k != m.sel.key {
		m.say(fmt.Sprintf("· not recorded: the selection %s for %s (no longer asked)", m.sel.reply, m.sel.askID))
		m.sel = nil
	}
	if k == m.head.key {
		return nil
	}
	m.head = head{key: k, since: m.clock()}
	if k == "" || k == "picker" {
		return nil
	}
	return tea.Tick(readGuard, func(time.Time) tea.Msg { return guardMsg{k} })
}

// ready: the head has been on screen long enough to take keys, and no paste came within
// readGuard (keys that come with a paste are its own).
func (m *screen) ready() bool {
	now := m.clock()
	return m.head.key != "" && now.Sub(m.head.since) >= readGuard && now.Sub(m.pasted) >= readGuard
}

func (m *screen) showsAsk() bool      { return strings.HasPrefix(m.head.key, "ask:") }
func (m *screen) showsQuestion() bool { return strings.HasPrefix(m.head.key, "question:") }

// askKey is a key at the shown ask while the input line is empty: a reply key selects,
// Enter without a selection says what to do; took is false for a key that begins a line
// (a message typed while the ask waits), or any key before the guard passed.
func (m *screen) askKey(k tea.KeyPressMsg) (cmd tea.Cmd, took bool) {
	if !m.ready() {
		return nil, false
	}
	a := m.asks[0]
	if k.String() == "enter" {
		m.hint = "choose first: " + choiceKeys(a) + ", then Enter"
		return nil, true
	}
	if len([]rune(k.Text)) != 1 {
		return nil, false
	}
	reply := askReply(a.Ask, k.Text)
	if reply == "" {
		return nil, false
	}
	m.sel = &selection{key: askHead(a), askID: a.Ask.AskID, reply: reply, typed: k.Text}
	return nil, true
}

func choiceKeys(a askMsg) string {
	if a.Ask.Always == "" {
		return "o once · r reject"
	}
	return "o once · a always · r reject"
}

// selectionKey is a key while a selection waits: Enter records it; anything else drops it.
func (m *screen) selectionKey(k tea.KeyPressMsg) tea.Cmd {
	s := m.sel
	m.sel = nil
	switch {
	case k.String() == "enter" && len(m.asks) > 0 && askHead(m.asks[0]) == s.key:
		a := m.asks[0]
		m.asks = m.asks[1:]
		m.say(fmt.Sprintf("· %s %s: %s", a.Ask.Tool, a.Ask.CallID, s.reply))
		return func() tea.Msg {
			return answeredMsg{err: m.e.AnswerAsk(m.ctx, a.Ask.SessionID, a.Ask.AskID, s.reply)}
		}
	case k.Text != "":
		// The person is typing words ("ok", "and"): the selected letter begins the line.
		m.insert(s.typed)
		return m.editKey(k)
	}
	m.hint = "selection cleared: nothing recorded"
	return nil
}

// unselect puts a dropped selection's letter back into the line (a paste after it).
func (m *screen) unselect() {
	if m.sel != nil {
		typed := m.sel.typed
		m.sel = nil
		m.insert(typed)
	}
}
