package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/events"
)

// confirmScreen is a chat screen on a clock the test moves, with a turn running (a line
// typed goes to the turn as a steer, which the test does not carry out).
type confirmScreen struct {
	*screen
	t   *testing.T
	at  time.Time
	rec []tea.Cmd // the commands keys returned: a reply recorded is one of them
}

func newConfirmScreen(t *testing.T) *confirmScreen {
	c := &confirmScreen{t: t, at: time.Unix(1_700_000_000, 0)}
	c.screen = &screen{ctx: context.Background(), e: NewEngine(Config{Session: "ses_1"}, func(any) {}), now: func() time.Time { return c.at }}
	c.e.running = true
	c.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	return c
}

func (c *confirmScreen) wait(d time.Duration) { c.at = c.at.Add(d) }

// typ presses keys: each rune of s, "\r" as Enter.
func (c *confirmScreen) typ(s string) {
	for _, r := range s {
		k := tea.KeyPressMsg{Code: r, Text: string(r)}
		if r == '\r' {
			k = tea.KeyPressMsg{Code: tea.KeyEnter}
		}
		c.press(k)
	}
}

func (c *confirmScreen) press(k tea.KeyPressMsg) {
	_, cmd := c.Update(k)
	c.rec = append(c.rec, cmd)
}

func (c *confirmScreen) ask(id, call string, always bool) {
	a := events.PermissionAsked{SessionID: "ses_1", AskID: id, CallID: call, Tool: "apply_patch", Key: "edit",
		Resource: "a.txt", Mode: "standard"}
	if always {
		a.Always = "a.txt"
	}
	c.Update(askMsg{Ask: a, Why: "rule edit says ask"})
}

// replies are the replies the chat recorded, in order ("p1: once").
func (c *confirmScreen) replies() []string {
	var out []string
	for _, l := range c.lines {
		if rest, ok := strings.CutPrefix(l, "· apply_patch "); ok && !strings.Contains(rest, "→") {
			out = append(out, rest)
		}
	}
	return out
}

func (c *confirmScreen) wantReplies(want ...string) {
	c.t.Helper()
	if got := c.replies(); strings.Join(got, ",") != strings.Join(want, ",") {
		c.t.Fatalf("recorded %q, want %q; transcript:\n%s", got, want, strings.Join(c.lines, "\n"))
	}
}

func (c *confirmScreen) wantInput(want string) {
	c.t.Helper()
	if got := string(c.input); got != want {
		c.t.Fatalf("the line is %q, want %q", got, want)
	}
}

func (c *confirmScreen) shows(text string) bool { return strings.Contains(c.View().Content, text) }

// The table of attacks on "no reply without a deliberate confirmation" (docs/tui.md,
// "Answering: no reply from type-ahead"): each row a way a key meant for something else could
// answer an ask or a question.
func TestNoReplyFromTypeAhead(t *testing.T) {
	t.Run("typing fast through the moment an ask appears", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.typ("fix the ")
		c.ask("ask_1", "p1", true)
		c.typ("tests and also remove the logs")
		c.wait(time.Second)
		c.typ("o")
		c.wantReplies()
		c.wantInput("fix the tests and also remove the logso")
		if c.sel != nil || !c.shows("an ask waits") {
			t.Fatal("a line being typed selected a reply")
		}
	})
	t.Run("type-ahead after sending lands in the line, not on the new ask", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.typ("first\r") // sent: the line is empty again
		c.ask("ask_1", "p1", true)
		c.wait(100 * time.Millisecond)
		c.typ("o\r") // typed for the prompt, in the moment the ask appeared
		c.wantReplies()
		if len(c.asks) != 1 || c.sel != nil {
			t.Fatalf("the ask was answered by type-ahead: asks %d, selection %+v", len(c.asks), c.sel)
		}
		if c.shows("o/a/r>") {
			t.Fatal("the ask takes keys before it was on screen for the guard")
		}
		c.wait(readGuard)
		if !c.shows("o/a/r>") {
			t.Fatalf("the guard passed and the prompt does not offer the ask:\n%s", c.View().Content)
		}
	})
	t.Run("o then Enter records once, once", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.ask("ask_1", "p1", true)
		c.wait(readGuard)
		c.typ("o")
		c.wantReplies()
		if !c.shows("once? Enter>") || !c.shows("[r]eject?  ▸ once") {
			t.Fatalf("the selection is not shown:\n%s", c.View().Content)
		}
		c.typ("\r\r\r")
		c.wantReplies("p1: once")
		if len(c.asks) != 0 {
			t.Fatal("the ask is still shown")
		}
	})
	t.Run("r then Enter rejects; a then Enter saves always", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.ask("ask_1", "p1", true)
		c.ask("ask_2", "p2", true)
		c.wait(readGuard)
		c.typ("r\r")
		c.wait(readGuard)
		c.typ("a\r")
		c.wantReplies("p1: reject", "p2: always")
	})
	t.Run("a when the ask saves no always begins a line", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.ask("ask_1", "p1", false)
		c.wait(readGuard)
		c.typ("a")
		c.wantInput("a")
		c.wantReplies()
	})
	t.Run("Enter without a selection records nothing", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.ask("ask_1", "p1", true)
		c.wait(readGuard)
		c.typ("\r")
		c.wantReplies()
		if c.hint == "" || len(c.asks) != 1 {
			t.Fatal("Enter alone did not say to choose first")
		}
	})
	t.Run("a word that begins with a reply letter is a line", func(t *testing.T) {
		for _, word := range []string{"ok", "and", "on it", "yes please", "no", "rr"} {
			c := newConfirmScreen(t)
			c.ask("ask_1", "p1", true)
			c.wait(readGuard)
			c.typ(word)
			c.wantInput(word)
			c.typ("\r") // sent as a message (a steer): not a reply
			c.wantReplies()
			if len(c.asks) != 1 {
				t.Fatalf("%q answered the ask", word)
			}
		}
	})
	t.Run("Esc, Backspace, Ctrl-U clear a selection", func(t *testing.T) {
		for _, k := range []tea.KeyPressMsg{{Code: tea.KeyEscape}, {Code: tea.KeyBackspace}, {Code: 'u', Mod: tea.ModCtrl}} {
			c := newConfirmScreen(t)
			c.ask("ask_1", "p1", true)
			c.wait(readGuard)
			c.typ("o")
			c.press(k)
			c.typ("\r")
			c.wantReplies()
			c.wantInput("")
			if c.sel != nil || len(c.asks) != 1 {
				t.Fatalf("%s: the selection survived", k)
			}
		}
	})
	t.Run("a paste holding o and a line feed is text", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.ask("ask_1", "p1", true)
		c.wait(readGuard)
		c.Update(tea.PasteMsg{Content: "o\n"})
		c.wantInput("o ")
		c.typ("\r")
		c.wantReplies()
		// After a selection: the selected letter and the paste are the line.
		c.typ("o")
		c.Update(tea.PasteMsg{Content: "k\nr\n"})
		c.wantInput("ok r ")
		c.typ("\r")
		c.wantReplies()
		if len(c.asks) != 1 {
			t.Fatal("a paste answered the ask")
		}
	})
	t.Run("an ask that appears while another's selection waits", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.ask("ask_1", "p1", true)
		c.wait(readGuard)
		c.typ("r")
		c.ask("ask_2", "p2", true)
		if c.sel == nil || c.sel.askID != "ask_1" || !c.shows("(1 more waiting)") {
			t.Fatalf("the selection moved: %+v", c.sel)
		}
		c.typ("\r")
		c.wantReplies("p1: reject")
		// The second ask is shown now: its guard starts again.
		c.typ("o\r")
		c.wantReplies("p1: reject")
		c.wantInput("")
		if len(c.asks) != 1 || c.asks[0].Ask.AskID != "ask_2" {
			t.Fatal("the second ask was answered by the keys that followed the first's Enter")
		}
	})
	t.Run("a resize keeps the selection for its ask", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.ask("ask_1", "p1", true)
		c.wait(readGuard)
		c.typ("o")
		c.Update(tea.WindowSizeMsg{Width: 40, Height: 12})
		if c.sel == nil || !c.shows("once? Enter>") {
			t.Fatalf("the resize dropped the selection:\n%s", c.View().Content)
		}
		c.typ("\r")
		c.wantReplies("p1: once")
	})
	t.Run("the ask shown again after the picker closed has its guard again", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.ask("ask_1", "p1", true)
		c.wait(readGuard)
		c.Update(pickerMsg{rows: []SessionRow{{ID: "ses_2"}}})
		c.typ("o") // the picker's: nothing
		c.wait(time.Second)
		c.press(tea.KeyPressMsg{Code: tea.KeyEscape})
		c.typ("o\r")
		c.wantReplies()
		if c.sel != nil || len(c.asks) != 1 {
			t.Fatal("a key right after the picker closed answered the ask under it")
		}
	})
	t.Run("Ctrl-C with a selection records nothing", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.e.running = false // Ctrl-C arms (a running turn would be interrupted: no App here)
		c.ask("ask_1", "p1", true)
		c.wait(readGuard)
		c.typ("o")
		c.press(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
		c.typ("\r")
		c.wantReplies()
		if c.sel != nil || !strings.Contains(strings.Join(c.lines, "\n"), "not recorded: the selection once for ask_1 (Ctrl-C)") {
			t.Fatalf("Ctrl-C kept the selection:\n%s", strings.Join(c.lines, "\n"))
		}
	})
	t.Run("another face answers while a selection waits", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.ask("ask_1", "p1", true)
		c.wait(readGuard)
		c.typ("o")
		c.Update(askSettledMsg{AskID: "ask_1"})
		c.typ("\r")
		c.wantReplies()
		if c.sel != nil || !strings.Contains(strings.Join(c.lines, "\n"), "not recorded: the selection once for ask_1") {
			t.Fatalf("the selection outlived its ask:\n%s", strings.Join(c.lines, "\n"))
		}
		// The race the other way (Enter first): the reply is refused as the server refuses it.
		c.Update(answeredMsg{err: &NotPendingError{CodeAskNotPending, "session ses_1 has no pending ask ask_1"}})
		if !strings.Contains(strings.Join(c.lines, "\n"), "! the answer was not recorded: ask_not_pending") {
			t.Fatal("a refused reply is not shown with its code")
		}
	})
}

func questionReq(id string, items ...string) *app.QuestionRequest {
	r := &app.QuestionRequest{}
	r.RequestID, r.SessionID = id, "ses_1"
	for _, it := range items {
		r.Items = append(r.Items, events.QuestionItem{ID: it, Question: "Which " + it + "?",
			Options: []events.QuestionOption{{Label: "SQLite"}, {Label: "Postgres"}}})
	}
	return r
}

// Questions: an answer is a line begun after the item was shown for the guard, and its Enter.
func TestQuestionNotFromTypeAhead(t *testing.T) {
	t.Run("a line begun before the question is a message", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.typ("use the ")
		c.Update(questionMsg{Req: questionReq("qst_1", "db")})
		c.wait(time.Second)
		c.typ("2")
		if c.shows("answer>") || !c.shows("begun before it") {
			t.Fatalf("the line was taken for an answer:\n%s", c.View().Content)
		}
		c.typ("\r")
		if len(c.question) != 1 || len(c.question[0].answers) != 0 || c.question[0].item != 0 {
			t.Fatal("type-ahead answered the question")
		}
	})
	t.Run("keys and Enter in the moment it appears do not answer or skip", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.Update(questionMsg{Req: questionReq("qst_1", "db")})
		c.typ("\r") // a stray Enter: no skip
		c.typ("2\r")
		if len(c.question) != 1 || c.question[0].item != 0 {
			t.Fatal("type-ahead skipped or answered the item")
		}
	})
	t.Run("answered once shown: each item has its own guard", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.Update(questionMsg{Req: questionReq("qst_1", "db", "cache")})
		c.wait(readGuard)
		c.typ("2\r1\r") // the second item's "1" was typed before it was shown
		qs := c.question[0]
		if qs.item != 1 || len(qs.answers) != 1 || qs.answers[0].Selected[0] != "Postgres" {
			t.Fatalf("answers %+v at item %d", qs.answers, qs.item)
		}
		c.wantInput("")
		c.wait(readGuard)
		c.typ("1\r")
		if len(c.question) != 0 || len(qs.answers) != 2 || qs.answers[1].Selected[0] != "SQLite" {
			t.Fatalf("answers %+v", qs.answers)
		}
	})
	t.Run("an ask arriving while an answer is typed waits behind it", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.Update(questionMsg{Req: questionReq("qst_1", "db")})
		c.wait(readGuard)
		c.typ("Post")
		c.ask("ask_1", "p1", true)
		if !c.shows("Which db?") || c.shows("wants permission") {
			t.Fatalf("the ask displaced the question being answered:\n%s", c.View().Content)
		}
		c.typ("gres\r")
		if len(c.question) != 0 {
			t.Fatal("the answer did not reach its question")
		}
		c.typ("o\r") // the ask is shown now: its guard starts; this "o" is a message
		c.wantReplies()
		c.wait(readGuard)
		c.typ("o\r")
		c.wantReplies("p1: once")
	})
	t.Run("an answer whose question went is not sent anywhere", func(t *testing.T) {
		c := newConfirmScreen(t)
		c.Update(questionMsg{Req: questionReq("qst_1", "db")})
		c.wait(readGuard)
		c.typ("2")
		c.Update(questionCheckMsg{request: "qst_1", open: false})
		if c.shows("answer>") {
			t.Fatal("the line still says it answers a question that went")
		}
		c.typ("\r")
		c.wantInput("2")
		if !strings.Contains(strings.Join(c.lines, "\n"), "the line was not sent") {
			t.Fatal("the orphaned answer was sent")
		}
	})
}

// A line typed while a turn runs steers it; the outcome is shown from Steer's answer and the
// log (docs/tui.md, "Steering").
func TestSteerLines(t *testing.T) {
	var got []any
	e := NewEngine(Config{Session: "ses_1"}, func(m any) { got = append(got, m) })
	m := &screen{ctx: context.Background(), e: e}
	e.running = true
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	m.Update(steeredMsg{Text: "also b", Steered: app.Steered{Delivery: app.DeliverySteering, InputID: "input_1", Status: "queued"}})
	m.Update(steeredMsg{Text: "later", Steered: app.Steered{Delivery: app.DeliveryTurn}})
	m.Update(steerTakenMsg{InputID: "input_1", Text: "also b"})
	text := strings.Join(m.lines, "\n")
	for _, want := range []string{"» steer queued for the turn's next tool boundary: also b",
		"· no turn open to steer: queued for the next turn: later", "» steer consumed: the turn reads it now: also b"} {
		if !strings.Contains(text, want) {
			t.Fatalf("missing %q in\n%s", want, text)
		}
	}
	if len(m.queued) != 1 || m.queued[0] != "later" {
		t.Fatalf("queued %q", m.queued)
	}
	// The log tells the chat its steer was taken: only its own input, on its session's stream.
	e.steers["input_1"] = "also b"
	w := watch{Observer: turn.NopObserver{}, e: e, session: "ses_1"}
	w.Recorded(events.Recorded{Stream: "session-ses_child"}, events.UserMessageAppended{InputID: "input_1"})
	w.Recorded(events.Recorded{Stream: "session-ses_1"}, events.UserMessageAppended{InputID: "input_other"})
	w.Recorded(events.Recorded{Stream: "session-ses_1"}, events.UserMessageAppended{InputID: "input_1"})
	w.Recorded(events.Recorded{Stream: "session-ses_1"}, events.UserMessageAppended{InputID: "input_1"})
	if len(got) != 1 || got[0] != (steerTakenMsg{InputID: "input_1", Text: "also b"}) {
		t.Fatalf("emitted %+v", got)
	}
	// Tab queues the line for the next turn instead; a /command is not queued.
	m.input, m.cursor = []rune("next one"), 8
	m.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	m.input, m.cursor = []rune("/goal"), 5
	m.Update(tea.KeyPressMsg{Code: tea.KeyTab})
	if len(m.queued) != 2 || m.queued[1] != "next one" || string(m.input) != "/goal" {
		t.Fatalf("queued %q, line %q", m.queued, string(m.input))
	}
}
