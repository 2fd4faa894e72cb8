package tui

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/zuno-run/zuno/commands/app"
)

// Run runs the chat full-screen at the terminal in and out are (docs/tui.md): the transcript
// above, what waits for an answer (an ask, a question, the session picker) below it, the
// input line at the bottom. interrupts are Ctrl-Cs that arrive as SIGINT (sent by another
// process: at the terminal Ctrl-C is a key). It returns when the person leaves, once the
// running turn, if any, has recorded its end.
func Run(ctx context.Context, cfg Config, in io.Reader, out io.Writer, interrupts <-chan struct{}) error {
	q := newQueue()
	e := NewEngine(cfg, q.put)
	defer e.Stop()
	m := &screen{ctx: ctx, e: e, width: 80, height: 24}
	e.OpenQuestions(ctx)
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out), tea.WithoutSignalHandler())
	go func() { // the Engine's messages, in order, and SIGINTs
		for {
			select {
			case <-q.signal:
				for _, msg := range q.take() {
					p.Send(msg)
				}
			case <-interrupts:
				p.Send(sigintMsg{})
			case <-ctx.Done():
				return
			}
		}
	}()
	_, err := p.Run()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

type sigintMsg struct{}

// answeredMsg is the outcome of recording an answer.
type answeredMsg struct {
	what string
	err  error
}

// noteLinesMsg is what a slash command returned.
type noteLinesMsg struct {
	lines []string
	err   error
}

// pickerMsg opens the session picker.
type pickerMsg struct {
	rows []SessionRow
	err  error
}

// questionCheckMsg: whether the shown request still takes an answer.
type questionCheckMsg struct {
	request string
	open    bool
}

type screen struct {
	ctx           context.Context
	e             *Engine
	width, height int

	lines    []string // the transcript; the last one may be open
	scroll   int      // lines scrolled back from the bottom
	input    []rune
	cursor   int
	hint     string
	queued   []string // prompts typed while a turn ran, sent in order as turns end
	asks     []askMsg
	shown    uint64    // the asks received so far (askMsg.shown)
	pasted   time.Time // the last paste: the panel takes no key for readGuard after it
	question []*questionState
	picker   *picker
	ctrlC    ctrlC

	// Answering only on a deliberate confirmation (confirm.go).
	now     func() time.Time // the clock (nil: time.Now)
	head    head             // what the panel shows, since when
	sel     *selection       // an ask's reply selected, not recorded yet
	lineFor string           // the question item the input line was begun for ("": a message)
}

type picker struct {
	rows []SessionRow
	sel  int
}

var (
	faint  = lipgloss.NewStyle().Faint(true)
	bold   = lipgloss.NewStyle().Bold(true)
	accent = lipgloss.NewStyle().Bold(true).Reverse(true)
)

func (m *screen) Init() tea.Cmd { return nil }

func (m *screen) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	return m, tea.Batch(cmd, m.track())
}

func (m *screen) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		return m.paste(msg)
	case sigintMsg:
		return m.interrupt()
	case transcriptMsg:
		m.append(Sanitize(string(msg)))
	case noteMsg:
		m.say(string(msg))
	case askMsg:
		m.shown++
		msg.shown = m.shown
		m.asks = append(m.asks, msg)
	case askSettledMsg:
		m.askSettled(msg)
	case questionMsg:
		if len(newQuestionState(msg.Req).items) == 0 {
			return nil
		}
		m.question = append(m.question, newQuestionState(msg.Req))
		if len(m.question) == 1 {
			return m.checkQuestion()
		}
	case questionCheckMsg:
		return m.questionChecked(msg)
	case steeredMsg:
		return m.steered(msg)
	case steerTakenMsg:
		m.say("» steer consumed: the turn reads it now: " + msg.Text)
	case turnDoneMsg:
		m.hint = ""
		if msg.Summary != "" {
			m.say(msg.Summary)
		}
		if msg.Err != nil {
			m.say(errLine(msg.Err))
		}
		m.next()
	case answeredMsg:
		if msg.err != nil {
			m.say("! the answer was not recorded: " + errLine(msg.err)[2:])
		} else if msg.what != "" {
			m.say(msg.what)
		}
	case noteLinesMsg:
		m.say(msg.lines...)
		if msg.err != nil {
			m.say(errLine(msg.err))
		}
	case pickerMsg:
		switch {
		case msg.err != nil:
			m.say(errLine(msg.err))
		case len(msg.rows) == 0:
			m.say("· no session yet")
		default:
			m.picker = &picker{rows: msg.rows}
		}
	case quitMsg:
		return tea.Quit
	}
	return nil
}

// paste puts pasted text into the line: a paste is never a reply (a pasted "o" and line feed
// included).
func (m *screen) paste(msg tea.PasteMsg) tea.Cmd {
	m.ctrlC.typed()
	m.unselect()
	m.insert(strings.ReplaceAll(Sanitize(msg.Content), "\n", " "))
	// Keys that arrive with a paste are the paste's (a page's text can end a bracketed
	// paste early and go on as keys): the panel takes none for readGuard (confirm.go).
	m.pasted = m.clock()
	k := m.head.key
	return tea.Tick(readGuard, func(time.Time) tea.Msg { return guardMsg{k} })
}

// askSettled drops an ask another face answered.
func (m *screen) askSettled(msg askSettledMsg) {
	for i, a := range m.asks {
		if a.Ask.AskID == msg.AskID {
			m.asks = append(m.asks[:i], m.asks[i+1:]...)
			m.say("· " + msg.AskID + " was answered elsewhere")
			return
		}
	}
}

// next starts the first queued prompt, if no turn runs.
func (m *screen) next() {
	if len(m.queued) > 0 && !m.e.State().Running {
		next := m.queued[0]
		m.queued = m.queued[1:]
		m.submit(next)
	}
}

// quitMsg leaves once the running turn has recorded its end.
type quitMsg struct{}

func (m *screen) leave() tea.Cmd {
	m.hint = "leaving…"
	return func() tea.Msg { m.e.Stop(); return quitMsg{} }
}

// interrupt is a Ctrl-C (ctrlC in plain.go says what it does).
func (m *screen) interrupt() tea.Cmd {
	if m.sel != nil {
		m.say(fmt.Sprintf("· not recorded: the selection %s for %s (Ctrl-C)", m.sel.reply, m.sel.askID))
		m.sel = nil
	}
	switch m.ctrlC.press(m.e.State().Running, time.Now()) {
	case leave:
		return m.leave()
	case interruptTurn:
		m.e.Interrupt(m.ctx)
		if len(m.queued) > 0 {
			m.say(fmt.Sprintf("· %d queued prompt%s dropped", len(m.queued), plural(len(m.queued))))
			m.queued = nil
		}
		m.hint = "interrupting: Ctrl-C again within 2 s leaves"
	default:
		if len(m.input) > 0 {
			m.input, m.cursor = nil, 0
		}
		m.hint = "press Ctrl-C again to leave"
	}
	return nil
}

func (m *screen) key(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "ctrl+c":
		return m.interrupt()
	case "ctrl+d":
		if len(m.input) == 0 && m.picker == nil && len(m.asks) == 0 && len(m.question) == 0 {
			return m.leave()
		}
	case "pgup":
		m.scroll += max(1, m.bodyHeight()-1)
		return nil
	case "pgdown":
		m.scroll = max(0, m.scroll-max(1, m.bodyHeight()-1))
		return nil
	}
	m.ctrlC.typed()
	m.hint = ""
	switch {
	case m.picker != nil:
		return m.pickerKey(k)
	case m.sel != nil:
		return m.selectionKey(k)
	case m.showsAsk() && len(m.input) == 0:
		if cmd, took := m.askKey(k); took {
			return cmd
		}
	}
	// Keys typed into a line stay in it: the "a" of "also" never answers an ask (confirm.go).
	return m.editKey(k)
}

func (m *screen) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "up", "k":
		m.picker.sel = max(0, m.picker.sel-1)
	case "down", "j":
		m.picker.sel = min(len(m.picker.rows)-1, m.picker.sel+1)
	case "esc", "q":
		m.picker = nil
	case "enter":
		id := m.picker.rows[m.picker.sel].ID
		m.picker = nil
		return func() tea.Msg {
			lines, err := m.e.Resume(m.ctx, id)
			return noteLinesMsg{lines, err}
		}
	}
	return nil
}

// editKey edits the input line; Enter sends it (a question's item answer while one is shown).
func (m *screen) editKey(k tea.KeyPressMsg) tea.Cmd {
	defer func() {
		if len(m.input) == 0 {
			m.lineFor = ""
		}
	}()
	switch k.String() {
	case "enter":
		return m.enter()
	case "tab":
		if m.lineFor == "" {
			m.queue(string(m.input))
		}
	case "backspace":
		if m.cursor > 0 {
			m.input = append(m.input[:m.cursor-1], m.input[m.cursor:]...)
			m.cursor--
		}
	case "delete":
		if m.cursor < len(m.input) {
			m.input = append(m.input[:m.cursor], m.input[m.cursor+1:]...)
		}
	case "left":
		m.cursor = max(0, m.cursor-1)
	case "right":
		m.cursor = min(len(m.input), m.cursor+1)
	case "home", "ctrl+a":
		m.cursor = 0
	case "end", "ctrl+e":
		m.cursor = len(m.input)
	case "ctrl+u":
		m.input, m.cursor = m.input[m.cursor:], 0
	default:
		if k.Text != "" {
			m.insert(Sanitize(k.Text))
		}
	}
	return nil
}

// enter sends the line where it was begun for: the shown question's item (an empty line
// skips it, once the item has been on screen for the guard), else the turn or the next one.
func (m *screen) enter() tea.Cmd {
	line, target := string(m.input), m.lineFor
	if len(m.input) == 0 && m.showsQuestion() && m.ready() {
		target = m.head.key
	}
	m.input, m.cursor, m.lineFor = nil, 0, ""
	switch {
	case target != "" && target == m.questionKey():
		return m.answerItem(line)
	case target != "":
		// The item it answered went (answered elsewhere): the line is kept, sent nowhere.
		m.input, m.cursor = []rune(line), len([]rune(line))
		m.say("· the question this line answered is gone: the line was not sent (Enter sends it as a message, Ctrl-U clears it)")
		return nil
	}
	return m.send(line)
}

// insert types s into the line. A line begun on an empty input takes its purpose then: the
// shown question's answer if the question has been on screen for the guard, else a message.
func (m *screen) insert(s string) {
	if s == "" {
		return
	}
	if len(m.input) == 0 {
		m.lineFor = ""
		if m.showsQuestion() && m.ready() {
			m.lineFor = m.head.key
		}
	}
	r := []rune(s)
	m.input = append(m.input[:m.cursor], append(r, m.input[m.cursor:]...)...)
	m.cursor += len(r)
}

// send handles a typed line: a slash command or the next turn's prompt.
func (m *screen) send(line string) tea.Cmd {
	if strings.TrimSpace(line) == "" {
		return nil
	}
	m.scroll = 0
	prompt, s, err := ParseLine(line)
	switch {
	case err != nil:
		m.say(errLine(err))
	case s == nil && m.e.State().Running:
		// A line typed while the turn runs steers it (docs/tui.md, "Steering").
		return func() tea.Msg {
			st, err := m.e.Steer(m.ctx, prompt)
			return steeredMsg{Text: prompt, Steered: st, Err: err}
		}
	case s == nil:
		m.submit(prompt)
	case s.Name == "queue" && strings.TrimSpace(s.Arg) == "":
		m.say(errLine(usage("/queue TEXT: the prompt to send when the running turn ends")))
	case s.Name == "queue":
		m.say("> " + line)
		m.queue(s.Arg)
	case s.Name == "quit":
		return m.leave()
	case s.Name == "resume" && s.Arg == "":
		return func() tea.Msg {
			rows, err := m.e.Sessions(m.ctx)
			return pickerMsg{rows, err}
		}
	default:
		m.say("> " + line)
		return func() tea.Msg {
			lines, err := m.e.Run(m.ctx, s)
			return noteLinesMsg{lines, err}
		}
	}
	return nil
}

// queue keeps text as the next turn's prompt (Tab, /queue): sent when the running turn ends,
// at once when none runs. Ctrl-C drops what is queued.
func (m *screen) queue(text string) {
	if strings.TrimSpace(text) == "" {
		m.hint = "nothing to queue: type the next turn's prompt, then Tab"
		return
	}
	if _, s, err := ParseLine(text); err != nil || s != nil {
		m.hint = "Tab queues a prompt; a /command runs with Enter"
		return
	}
	m.input, m.cursor, m.lineFor = nil, 0, ""
	m.queued = append(m.queued, text)
	if m.e.State().Running {
		m.say("· queued for when the turn ends: " + text)
	}
	m.next()
}

// steered shows where a line typed during the turn went.
func (m *screen) steered(s steeredMsg) tea.Cmd {
	switch {
	case s.Err != nil:
		m.say("! the steer was not sent: " + errLine(s.Err)[2:])
	case s.Steered.Delivery == app.DeliverySteering:
		m.say(fmt.Sprintf("» steer %s for the turn's next tool boundary: %s", s.Steered.Status, s.Text))
	default: // no turn was open to steer: the next turn's prompt
		m.queued = append(m.queued, s.Text)
		if m.e.State().Running {
			m.say("· no turn open to steer: queued for the next turn: " + s.Text)
		}
		m.next()
	}
	return nil
}

func (m *screen) submit(prompt string) {
	if err := m.e.Submit(m.ctx, prompt); err != nil {
		m.say(errLine(err))
		return
	}
	m.say("", "> "+prompt)
}

func (m *screen) answerItem(line string) tea.Cmd {
	qs := m.question[0]
	it := qs.items[qs.item]
	if strings.TrimSpace(line) != "" {
		a, ok := QuestionOption(it, line)
		if !ok {
			m.hint = "not one of the options: a number, a label, or empty to skip"
			return nil
		}
		qs.answers = append(qs.answers, a)
		m.say(fmt.Sprintf("· [%s] %s", it.ID, Sanitize(strings.Join(append(a.Selected, a.Text), ""))))
	}
	qs.item++
	if qs.item < len(qs.items) {
		return nil
	}
	m.question = m.question[1:]
	var next tea.Cmd
	if len(m.question) > 0 {
		next = m.checkQuestion()
	}
	record := func() tea.Msg {
		err := m.e.AnswerQuestion(m.ctx, qs.req, qs.answers)
		if err == nil && len(qs.answers) == 0 {
			return answeredMsg{what: "· later: no answer; the request stays open"}
		}
		return answeredMsg{err: err}
	}
	return tea.Batch(record, next)
}

// checkQuestion asks, every second while a request is shown, whether it still takes an
// answer: another face may have answered it.
func (m *screen) checkQuestion() tea.Cmd {
	r := m.question[0].req
	return tea.Tick(time.Second, func(time.Time) tea.Msg {
		return questionCheckMsg{request: r.RequestID, open: m.e.QuestionOpen(m.ctx, r)}
	})
}

func (m *screen) questionChecked(c questionCheckMsg) tea.Cmd {
	if len(m.question) == 0 || m.question[0].req.RequestID != c.request {
		return nil
	}
	if c.open {
		return m.checkQuestion()
	}
	m.question = m.question[1:]
	m.say("· " + c.request + " was answered elsewhere")
	if len(m.question) > 0 {
		return m.checkQuestion()
	}
	return nil
}

// keptLines is how much transcript the screen keeps to scroll back through (the log keeps
// everything: zuno events read, or /resume, shows it again).
const keptLines = 10_000

// append adds turn output to the transcript.
func (m *screen) append(s string) {
	parts := strings.Split(s, "\n")
	if len(m.lines) == 0 {
		m.lines = []string{""}
	}
	m.lines[len(m.lines)-1] += parts[0]
	m.lines = append(m.lines, parts[1:]...)
	m.trim()
}

func (m *screen) trim() {
	if over := len(m.lines) - keptLines; over > 0 {
		m.lines = append(m.lines[:0:0], m.lines[over:]...)
	}
}

// say adds whole lines, after ending an open one.
func (m *screen) say(lines ...string) {
	if n := len(m.lines); n > 0 && m.lines[n-1] != "" {
		m.lines = append(m.lines, "")
	}
	if len(m.lines) == 0 {
		m.lines = []string{""}
	}
	for _, l := range lines {
		m.lines[len(m.lines)-1] = Sanitize(l)
		m.lines = append(m.lines, "")
	}
	m.trim()
}

func (m *screen) bodyHeight() int { return max(1, m.height-3-len(m.fittedPanel())) }

// fittedPanel is the panel wrapped to the width, cut to leave the header, a line of
// transcript, the hint and the input.
func (m *screen) fittedPanel() []string {
	var rows []string
	for _, l := range m.panel() {
		rows = append(rows, strings.Split(ansi.Hardwrap(l, max(20, m.width), true), "\n")...)
	}
	return fitPanel(rows, max(0, m.height-4))
}

// fitPanel keeps a panel within rows: its first line and its last two (the question and the
// choices) are kept, the middle (an edit's change) is cut.
func fitPanel(panel []string, rows int) []string {
	if len(panel) <= rows {
		return panel
	}
	if rows < 4 {
		return panel[len(panel)-max(0, rows):]
	}
	cut := len(panel) - rows + 1
	out := append([]string{}, panel[:rows-3]...)
	out = append(out, fmt.Sprintf("    … %d more lines", cut))
	return append(out, panel[len(panel)-2:]...)
}

// View lays the screen out: header, transcript, panel, hint, input.
func (m *screen) View() tea.View {
	w := max(20, m.width)
	st := m.e.State()
	state := "idle"
	switch {
	case m.showsAsk() || m.showsQuestion():
		state = "waiting for you"
	case st.Running:
		state = "running"
	}
	// The state first: it is what changes, and a narrow terminal cuts the end.
	header := fmt.Sprintf(" %s │ %s │ %s │ %s", state, orDefault(st.Agent, "build"), orDefault(st.Model, "default model"),
		orDefault(st.Session, "new session"))
	panel := m.fittedPanel()
	body := m.body(w, m.bodyHeight())
	out := make([]string, 0, m.height)
	out = append(out, accent.Render(fit(Sanitize(header), w)))
	out = append(out, body...)
	for _, l := range panel {
		out = append(out, fit(l, w))
	}
	hint := m.hint
	switch {
	case hint != "":
	case m.scroll > 0:
		hint = fmt.Sprintf("scrolled back %d lines · PgDn", m.scroll)
	case m.picker != nil:
		hint = "↑/↓ choose · Enter continue · Esc close"
	case m.sel != nil:
		hint = "Enter records " + m.sel.reply + " · Esc clears · Ctrl-C interrupt the turn"
	case m.showsAsk() && len(m.input) > 0:
		hint = "an ask waits: Enter sends the line as a message; clear it (Ctrl-U) to answer"
	case m.showsAsk():
		hint = choiceKeys(m.asks[0]) + ", then Enter · Ctrl-C interrupt the turn"
	case m.showsQuestion() && len(m.input) > 0 && m.lineFor == "":
		hint = "a question waits: this line was begun before it: Enter sends it as a message"
	case m.showsQuestion():
		hint = "Enter answer (a number, a label, or empty to skip) · Ctrl-C interrupt"
	case st.Running:
		hint = "Enter steer the turn · Tab queue for the next · Ctrl-C interrupt"
	default:
		hint = "Enter send · Ctrl-C interrupt · Ctrl-C twice leave · /help"
	}
	out = append(out, faint.Render(fit(hint, w)))
	prompt, line, cur := m.inputLine(w)
	out = append(out, bold.Render(prompt)+line)
	v := tea.NewView(strings.Join(out, "\n"))
	v.AltScreen = true
	v.Cursor = tea.NewCursor(cur, len(out)-1)
	v.WindowTitle = "zuno chat"
	return v
}

// fit cuts a line to the width (a line of the panel or the header never wraps).
func fit(s string, w int) string {
	if ansi.StringWidth(s) <= w {
		return s + strings.Repeat(" ", w-ansi.StringWidth(s))
	}
	return ansi.Truncate(s, w, "…")
}

// body is the transcript's last h rows (scrolled back by scroll), wrapped to w. Only the lines
// that can be shown are wrapped, from the end, so a frame costs the screen's size, not the
// session's length (BenchmarkView).
func (m *screen) body(w, h int) []string {
	lines := m.lines
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1] // the open line, empty: nothing to show yet
	}
	var rows []string // backwards: the last row first
	for i := len(lines) - 1; i >= 0 && len(rows) < h+m.scroll; i-- {
		wrapped := []string{""}
		if lines[i] != "" {
			wrapped = strings.Split(ansi.Hardwrap(lines[i], w, true), "\n")
		}
		for j := len(wrapped) - 1; j >= 0; j-- {
			rows = append(rows, wrapped[j])
		}
	}
	m.scroll = min(m.scroll, max(0, len(rows)-h))
	out := make([]string, 0, h)
	for i := min(len(rows), m.scroll+h) - 1; i >= m.scroll; i-- {
		out = append(out, rows[i])
	}
	for len(out) < h {
		out = append(out, "")
	}
	return out
}

// panel is what waits for the person, shown between the transcript and the input.
func (m *screen) panel() []string {
	rule := strings.Repeat("─", max(20, m.width))
	switch {
	case m.picker != nil:
		out := []string{rule, "Sessions (↑/↓, Enter continues, Esc closes):"}
		first := max(0, min(m.picker.sel-4, len(m.picker.rows)-8))
		for i := first; i < len(m.picker.rows) && i < first+8; i++ {
			r := m.picker.rows[i]
			mark := "  "
			if i == m.picker.sel {
				mark = "▸ "
			}
			out = append(out, Sanitize(fmt.Sprintf("%s%s  %-8s %-10s %s", mark, r.ID, r.Agent, r.Status, r.Title)))
		}
		return out
	case m.showsAsk():
		a := m.asks[0]
		out := []string{rule, Sanitize(fmt.Sprintf("? %s wants permission %q for %s", a.Ask.Tool, a.Ask.Key, a.Ask.Resource))}
		for _, l := range a.View {
			out = append(out, "    "+Sanitize(l))
		}
		choices := askChoices(a.Ask) + "?"
		if m.sel != nil {
			choices += "  ▸ " + m.sel.reply
		}
		out = append(out, "  "+Sanitize(a.Why)+"; mode "+a.Ask.Mode, choices)
		if n := len(m.asks) - 1; n > 0 {
			out = append(out, fmt.Sprintf("  (%d more waiting)", n))
		}
		return out
	case m.showsQuestion():
		qs := m.question[0]
		out := []string{rule, Sanitize(fmt.Sprintf("? %s asks %s (%s)", orDefault(qs.req.Agent, "the agent"),
			orDefault(qs.req.Title, "a question"), qs.req.RequestID))}
		for _, l := range itemLines(qs.items[qs.item]) {
			out = append(out, Sanitize(l))
		}
		return out
	}
	return nil
}

// inputLine is the prompt and the part of the input that fits, and the cursor's column.
func (m *screen) inputLine(w int) (string, string, int) {
	// The prompt says what Enter does with the line (confirm.go).
	prompt := "> "
	switch {
	case m.picker != nil:
		prompt = "pick> "
	case m.sel != nil:
		prompt = m.sel.reply + "? Enter> "
	case len(m.input) > 0 && m.lineFor != "" && m.lineFor == m.questionKey():
		prompt = "answer> "
	case len(m.input) > 0 || !m.ready():
	case m.showsAsk():
		prompt = "o/a/r> "
	case m.showsQuestion():
		prompt = "answer> "
	}
	room := max(1, w-len(prompt)-1)
	start := max(0, m.cursor-room)
	end := min(len(m.input), start+room)
	shown := Sanitize(string(m.input[start:end]))
	return prompt, shown, len(prompt) + ansi.StringWidth(string(m.input[start:m.cursor]))
}
