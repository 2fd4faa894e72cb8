package tui

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/events"
)

// leaveWindow is how close two Ctrl-C must be to leave while a turn runs.
const leaveWindow = 2 * time.Second

// RunPlain runs the chat as plain lines (docs/tui.md, "Plain line mode"): for output that is
// not a terminal, nothing but text and line feeds is written. A line is read from in only
// when the chat needs one: a prompt or slash command while no turn runs, the answer to the
// ask or question it shows; a line typed while a turn runs waits for it. Each line read is
// echoed ("> …"), since input that is not a terminal shows nothing. interrupts are the
// Ctrl-Cs (SIGINT): the first interrupts the running turn, a second while idle or within 2 s
// leaves. End of input rejects a shown ask, skips a shown question, and leaves once the turn
// has ended.
func RunPlain(ctx context.Context, cfg Config, in io.Reader, out io.Writer, interrupts <-chan struct{}) error {
	q := newQueue()
	p := &plain{ctx: ctx, out: out, atLineStart: true}
	p.e = NewEngine(cfg, q.put)
	p.e.OpenQuestions(ctx)
	lines, want := readLines(in)
	defer p.e.Stop()
	var target *lineTarget // what the line asked for is for: it goes there even if that went meanwhile
	eof := false
	for {
		if p.done || (eof && !p.e.State().Running && len(p.asks) == 0 && len(p.questions) == 0) {
			return nil
		}
		if target == nil && !eof {
			if target = p.wants(); target != nil {
				if target.ask != nil || target.question != nil {
					p.discardTypeAhead(in)
				}
				want <- struct{}{}
			}
		}
		select {
		case <-q.signal:
			for _, m := range q.take() {
				p.handle(m)
			}
		case l, ok := <-lines:
			t := target
			target = nil
			if !ok {
				eof = true
				p.endOfInput()
				continue
			}
			p.ctrlC.typed()
			p.lineFor(t, l)
		case <-interrupts:
			p.interrupt()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// discardTypeAhead: the answer to what is shown now is read from what is typed after it was
// shown; lines a person typed ahead at the terminal are dropped, and the chat says so.
func (p *plain) discardTypeAhead(in io.Reader) {
	if n := discardTypeAhead(in); n > 0 {
		p.say(fmt.Sprintf("  (%d byte%s typed before this was shown: discarded, not taken as the answer)", n, plural(n)))
	}
}

// readLines reads a line of in each time one is wanted, so lines typed ahead stay unread
// until the chat needs them.
func readLines(in io.Reader) (<-chan string, chan<- struct{}) {
	lines, want := make(chan string), make(chan struct{})
	go func() {
		r := bufio.NewReader(in)
		for range want {
			l, err := r.ReadString('\n')
			if l == "" && err != nil {
				close(lines)
				return
			}
			lines <- strings.TrimRight(l, "\r\n")
		}
	}()
	return lines, want
}

type plain struct {
	ctx         context.Context
	e           *Engine
	out         io.Writer
	atLineStart bool
	asks        []askMsg
	questions   []*questionState
	ctrlC       ctrlC
	done        bool
}

// questionState is a question request being answered, item by item.
type questionState struct {
	req     *app.QuestionRequest
	items   []events.QuestionItem // the items still to answer
	item    int
	tries   int
	answers []events.QuestionItemAnswer
}

// newQuestionState puts a request's pending items (a partial answer's answered ones are final).
func newQuestionState(r *app.QuestionRequest) *questionState {
	qs := &questionState{req: r}
	pending := map[string]bool{}
	for _, id := range r.Pending() {
		pending[id] = true
	}
	for _, it := range r.Items {
		if pending[it.ID] {
			qs.items = append(qs.items, it)
		}
	}
	return qs
}

func (p *plain) needsLine() bool {
	return len(p.asks) > 0 || len(p.questions) > 0 || !p.e.State().Running
}

func (p *plain) write(s string) {
	if s == "" {
		return
	}
	io.WriteString(p.out, s)
	p.atLineStart = strings.HasSuffix(s, "\n")
}

// say writes whole lines, after ending a line the transcript left open.
func (p *plain) say(lines ...string) {
	if !p.atLineStart {
		p.write("\n")
	}
	for _, l := range lines {
		p.write(Sanitize(l) + "\n")
	}
}

func (p *plain) handle(m any) {
	switch m := m.(type) {
	case transcriptMsg:
		p.write(Sanitize(string(m)))
	case noteMsg:
		p.say(string(m))
	case askMsg:
		p.asks = append(p.asks, m)
		if len(p.asks) == 1 {
			p.showAsk()
		}
	case askSettledMsg:
		for i, a := range p.asks {
			if a.Ask.AskID == m.AskID {
				p.asks = append(p.asks[:i], p.asks[i+1:]...)
				if i == 0 {
					p.say("· " + m.AskID + " was answered elsewhere")
					p.next()
				}
				break
			}
		}
	case questionMsg:
		if len(newQuestionState(m.Req).items) == 0 {
			return
		}
		p.questions = append(p.questions, newQuestionState(m.Req))
		if len(p.asks) == 0 && len(p.questions) == 1 {
			p.showQuestion()
		}
	case turnDoneMsg:
		if m.Summary != "" {
			p.say("", m.Summary)
		}
		if m.Err != nil {
			p.say(errLine(m.Err))
		}
		st := p.e.State()
		if st.Session != "" {
			p.say("· session " + st.Session)
		}
	}
}

// next shows what waits for an answer after the one that was answered.
func (p *plain) next() {
	switch {
	case len(p.asks) > 0:
		p.showAsk()
	case len(p.questions) > 0:
		p.showQuestion()
	}
}

func (p *plain) showAsk() {
	a := p.asks[0]
	p.say("", fmt.Sprintf("? %s wants permission %q for %s", a.Ask.Tool, a.Ask.Key, a.Ask.Resource))
	for _, l := range a.View {
		p.say("    " + l)
	}
	p.say("  "+a.Why+"; mode "+a.Ask.Mode, askChoices(a.Ask)+"?")
}

func askChoices(a events.PermissionAsked) string {
	if a.Always == "" {
		return "  [o]nce  [r]eject"
	}
	return fmt.Sprintf("  [o]nce  [a]lways (this session: %s %s)  [r]eject", a.Key, a.Always)
}

// askReply reads a typed reply; "" when it is not one the ask takes.
func askReply(a events.PermissionAsked, line string) string {
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "o", "once", "y", "yes":
		return "once"
	case "a", "always":
		if a.Always != "" {
			return "always"
		}
	case "r", "reject", "n", "no":
		return "reject"
	}
	return ""
}

func (p *plain) showQuestion() {
	qs := p.questions[0]
	if qs.item == 0 {
		p.say("", fmt.Sprintf("? %s asks %s (%s)", orDefault(qs.req.Agent, "the agent"), orDefault(qs.req.Title, "a question"), qs.req.RequestID))
	}
	p.say(itemLines(qs.items[qs.item])...)
}

func itemLines(it events.QuestionItem) []string {
	out := []string{fmt.Sprintf("  [%s] %s", it.ID, it.Question)}
	for i, o := range it.Options {
		l := fmt.Sprintf("    %d) %s", i+1, o.Label)
		if o.Description != "" {
			l += " — " + o.Description
		}
		out = append(out, l)
	}
	hint := "answer"
	if len(it.Options) > 0 {
		hint = "number or label"
		if it.Custom {
			hint += ", or your own answer"
		}
	}
	return append(out, "  "+hint+" (empty: skip)?")
}

// lineTarget is what a line is read for: the shown ask, the shown question, or (neither) a
// prompt or slash command.
type lineTarget struct {
	ask      *askMsg
	question *questionState
}

// wants is what the next line is for; nil while a turn runs and nothing waits for an answer.
func (p *plain) wants() *lineTarget {
	switch {
	case len(p.asks) > 0:
		// A copy: p.asks shifts when an ask is answered elsewhere, and a pointer into it
		// would then name the next ask, which the line was not typed for.
		a := p.asks[0]
		return &lineTarget{ask: &a}
	case len(p.questions) > 0:
		return &lineTarget{question: p.questions[0]}
	case !p.e.State().Running:
		return &lineTarget{}
	}
	return nil
}

// lineFor handles a line read for t. An answer to an ask another face answered meanwhile is
// still sent, and refused as the server refuses a second reply (ask_not_pending).
func (p *plain) lineFor(t *lineTarget, l string) {
	switch {
	case t.ask != nil:
		a := *t.ask
		shown := len(p.asks) > 0 && p.asks[0].Ask.AskID == a.Ask.AskID && p.asks[0].Ask.SessionID == a.Ask.SessionID
		reply := askReply(a.Ask, l)
		if reply == "" {
			p.say("> "+l, "  (not a reply this ask takes)")
			if shown {
				p.say(askChoices(a.Ask) + "?")
			}
			return
		}
		p.say("> " + reply)
		if shown {
			p.asks = p.asks[1:]
		}
		p.answerAsk(a, reply)
		if shown {
			p.next()
		}
	case t.question != nil:
		p.say("> " + l)
		if len(p.questions) > 0 && p.questions[0] == t.question {
			p.answerItem(l)
		}
	default:
		p.command(l)
	}
}

func (p *plain) answerAsk(a askMsg, reply string) {
	if err := p.e.AnswerAsk(p.ctx, a.Ask.SessionID, a.Ask.AskID, reply); err != nil {
		p.say("! the answer was not recorded: " + errLine(err)[2:])
	}
}

func (p *plain) answerItem(l string) {
	qs := p.questions[0]
	it := qs.items[qs.item]
	if strings.TrimSpace(l) != "" {
		a, ok := QuestionOption(it, l)
		if !ok && qs.tries < 2 {
			qs.tries++
			p.say("  (not one of the options)", "  number or label (empty: skip)?")
			return
		}
		if ok {
			qs.answers = append(qs.answers, a)
		}
	}
	qs.item, qs.tries = qs.item+1, 0
	if qs.item < len(qs.items) {
		p.showQuestion()
		return
	}
	p.questions = p.questions[1:]
	p.finishQuestion(qs)
	p.next()
}

func (p *plain) finishQuestion(qs *questionState) {
	if err := p.e.AnswerQuestion(p.ctx, qs.req, qs.answers); err != nil {
		p.say("! the answer was not recorded: " + errLine(err)[2:])
	} else if len(qs.answers) == 0 {
		p.say("  (later: no answer; the request stays open)")
	}
}

func (p *plain) command(l string) {
	if strings.TrimSpace(l) == "" {
		return
	}
	p.say("> " + l)
	prompt, s, err := ParseLine(l)
	switch {
	case err != nil:
		p.say(errLine(err))
	case s == nil:
		if err := p.e.Submit(p.ctx, prompt); err != nil {
			p.say(errLine(err))
		}
	case s.Name == "queue" && strings.TrimSpace(s.Arg) == "":
		p.say(errLine(usage("/queue TEXT: the prompt to send when the running turn ends")))
	case s.Name == "queue": // a line is read only while no turn runs: the next turn is now
		if err := p.e.Submit(p.ctx, s.Arg); err != nil {
			p.say(errLine(err))
		}
	case s.Name == "quit":
		p.done = true
	case s.Name == "resume" && s.Arg == "":
		p.listSessions()
	default:
		out, err := p.e.Run(p.ctx, s)
		p.say(out...)
		if err != nil {
			p.say(errLine(err))
		}
	}
}

func (p *plain) listSessions() {
	rows, err := p.e.Sessions(p.ctx)
	if err != nil {
		p.say(errLine(err))
		return
	}
	if len(rows) == 0 {
		p.say("· no session yet")
		return
	}
	for _, r := range rows {
		p.say(fmt.Sprintf("  %s  %-8s %-12s %s", r.ID, r.Agent, r.Status, r.Title))
	}
	p.say("· /resume ses_… continues one")
}

// endOfInput: nobody is left to answer, so a shown ask is rejected (as zuno run does) and a
// shown question skipped.
func (p *plain) endOfInput() {
	for len(p.asks) > 0 {
		a := p.asks[0]
		p.asks = p.asks[1:]
		p.say("  (end of input: rejected)")
		p.answerAsk(a, "reject")
	}
	for len(p.questions) > 0 {
		qs := p.questions[0]
		p.questions = p.questions[1:]
		p.finishQuestion(qs)
	}
}

// interrupt is a Ctrl-C (ctrlC says what it does).
func (p *plain) interrupt() {
	running := p.e.State().Running
	switch p.ctrlC.press(running, time.Now()) {
	case leave:
		p.say("· leaving")
		p.done = true
	case interruptTurn:
		p.e.Interrupt(p.ctx)
	default:
		p.say("· press Ctrl-C again to leave")
	}
}

// ctrlC decides what a Ctrl-C does (docs/tui.md, "Keys"): it interrupts a running turn; while
// no turn runs the first one arms and the second leaves; and two within leaveWindow leave
// whatever runs. A line typed in between disarms.
type ctrlC struct {
	last  time.Time
	armed bool
}

type ctrlCAction int

const (
	arm ctrlCAction = iota
	interruptTurn
	leave
)

func (c *ctrlC) press(running bool, now time.Time) ctrlCAction {
	quick := !c.last.IsZero() && now.Sub(c.last) < leaveWindow
	c.last = now
	switch {
	case quick || (!running && c.armed):
		return leave
	case running:
		return interruptTurn
	}
	c.armed = true
	return arm
}

// typed disarms: the person went on.
func (c *ctrlC) typed() { c.armed, c.last = false, time.Time{} }
