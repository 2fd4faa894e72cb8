package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain/goal"
)

// Slash is a chat line that starts with "/": the chat's own command, never the model's input
// (docs/tui.md, "Slash commands"). "//text" is the prompt "/text".
type Slash struct {
	Name string // goal, resume, agent, model, new, queue, help, quit
	Arg  string // the rest of the line, trimmed
}

// slashNames are the commands a line may name.
var slashNames = map[string]bool{"goal": true, "resume": true, "agent": true, "model": true, "new": true, "help": true,
	"quit": true, "exit": true, "queue": true}

// CodeUnknownCommand: a chat line names a slash command the chat does not have.
const CodeUnknownCommand = "unknown_chat_command"

// ParseLine splits a typed line into a prompt or a slash command. A line that starts with one
// "/" is a command (an unknown one is refused, not sent to the model); "//" escapes a prompt
// that starts with "/". Surrounding white space does not count.
func ParseLine(line string) (prompt string, cmd *Slash, err error) {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "//") {
		return t[1:], nil, nil
	}
	body, ok := strings.CutPrefix(t, "/")
	if !ok {
		return line, nil, nil
	}
	fields := strings.Fields(body)
	name, arg := "", ""
	if len(fields) > 0 && strings.HasPrefix(body, fields[0]) { // "/ goal" names no command
		name, arg = strings.ToLower(fields[0]), strings.Join(fields[1:], " ")
	}
	if !slashNames[name] {
		return "", nil, &chatError{CodeUnknownCommand, fmt.Sprintf("/%s is not a chat command: /help lists them (start the line with // to send it as a prompt)", name)}
	}
	if name == "exit" {
		name = "quit"
	}
	if name == "queue" { // a prompt: sent as typed
		arg = strings.TrimSpace(body[len(fields[0]):])
	}
	return "", &Slash{Name: name, Arg: arg}, nil
}

// errLine is an error as the chat shows it: its stable code first (docs/errors.md).
func errLine(err error) string {
	msg, code := err.Error(), app.CodeOf(err)
	if code == "" || strings.HasPrefix(msg, code+": ") {
		return "! " + msg
	}
	return "! " + code + ": " + msg
}

type chatError struct{ code, msg string }

func (c *chatError) Error() string { return c.code + ": " + c.msg }
func (c *chatError) Code() string  { return c.code }

// CodeChatUsage: a slash command's argument is wrong.
const CodeChatUsage = "chat_usage"

func usage(format string, a ...any) error {
	return &chatError{CodeChatUsage, fmt.Sprintf(format, a...)}
}

// helpText lists the chat's keys and commands.
var helpText = []string{
	"Enter sends the line as the next turn's prompt; while a turn runs (full screen) it steers",
	"that turn, and Tab queues the line for the next turn instead. An ask's o/a/r selects a",
	"reply and Enter records it (Esc clears). Ctrl-C interrupts the running turn, and a second",
	"Ctrl-C while idle (or two within 2 s) leaves; PgUp/PgDn scroll.",
	"/goal                     show the session's Goal",
	"/goal complete | resume   complete or resume it (as zuno goal complete|resume)",
	"/goal answer TEXT         answer the Goal's open input request",
	"/resume                   pick a session from the log; /resume ses_… continues that one",
	"/agent [NAME]             show or set the agent of the next turns (build, deep, plan, …)",
	"/model [SPEC]             show or set the model of the next turns (provider/model, scripted:FILE)",
	"/new                      the next prompt starts a new session",
	"/queue TEXT               TEXT is the next turn's prompt, sent when the running turn ends",
	"/quit                     leave (a running turn is interrupted first)",
}

// SessionRow is one session of the picker.
type SessionRow struct {
	ID, Title, Agent, Status string
	Messages                 string
}

// Sessions lists the live root sessions, newest first, for the picker.
func (e *Engine) Sessions(ctx context.Context) ([]SessionRow, error) {
	t, err := e.cfg.App.Queries.Sessions(ctx, 200)
	if err != nil {
		return nil, err
	}
	col := map[string]int{}
	for i, c := range t.Columns {
		col[c] = i
	}
	get := func(r []any, name string) string {
		if i, ok := col[name]; ok && i < len(r) && r[i] != nil {
			return fmt.Sprint(r[i])
		}
		return ""
	}
	var out []SessionRow
	for _, r := range t.Rows {
		if get(r, "parent_session_id") != "" {
			continue // a delegated child: its parent is the one to continue
		}
		out = append(out, SessionRow{ID: get(r, "id"), Title: get(r, "title"), Agent: get(r, "agent"),
			Status: get(r, "status"), Messages: get(r, "message_count")})
	}
	return out, nil
}

// Run carries out a slash command that is not the face's own (quit, and /resume without an
// argument, which opens the picker) and returns what to show.
func (e *Engine) Run(ctx context.Context, s *Slash) ([]string, error) {
	switch s.Name {
	case "help":
		return helpText, nil
	case "agent":
		return e.setAgent(s.Arg)
	case "model":
		return e.setModel(s.Arg)
	case "new":
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.running {
			return nil, usage("a turn is running: interrupt it first")
		}
		e.session = ""
		defer e.emit(stateMsg{})
		return []string{"· the next prompt starts a new session"}, nil
	case "resume":
		return e.Resume(ctx, s.Arg)
	case "goal":
		return e.goal(ctx, s.Arg)
	}
	return nil, usage("/%s is the face's to handle", s.Name)
}

func (e *Engine) setAgent(name string) ([]string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if name == "" {
		return []string{"· agent: " + orDefault(e.agent, "the session's (build for a new one)")}, nil
	}
	if strings.ContainsAny(name, " /") {
		return nil, usage("/agent %q: name one agent (build, deep, plan, orchestrator, or one of the configuration)", name)
	}
	e.agent = name
	defer e.emit(stateMsg{})
	return []string{"· agent " + name + " for the next turns"}, nil // an unknown one is refused when the turn starts
}

func (e *Engine) setModel(spec string) ([]string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if spec == "" {
		return []string{"· model: " + orDefault(e.model, "the configured default")}, nil
	}
	if _, err := app.ParseModel(spec); err != nil {
		return nil, &chatError{app.CodeOf(err), fmt.Sprintf("/model %s: write PROVIDER/<model> or scripted:<file> (zuno models lists them)", spec)}
	}
	e.model = spec
	defer e.emit(stateMsg{})
	return []string{"· model " + spec + " for the next turns"}, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Resume continues the session id (its next prompt is its next turn), and shows the end of
// its conversation.
func (e *Engine) Resume(ctx context.Context, id string) ([]string, error) {
	if id == "" {
		return nil, usage("/resume needs a session id (ses_…); the picker lists them")
	}
	info, err := e.cfg.App.Queries.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	if info.Pruned != "" {
		return nil, usage("session %s was pruned (%s): it takes no new turn", id, info.Pruned)
	}
	e.mu.Lock()
	if e.running {
		e.mu.Unlock()
		return nil, usage("a turn is running: interrupt it first")
	}
	e.session, e.agent = info.SessionID, info.Agent
	e.mu.Unlock()
	e.emit(stateMsg{})
	e.OpenQuestions(ctx)
	head := fmt.Sprintf("· continuing session %s: %s (%s, %d turns)", info.SessionID, info.Title, info.Agent, len(info.Turns))
	conv, err := e.cfg.App.Queries.Conversation(ctx, id)
	if err != nil {
		return []string{head}, nil // the history is a courtesy: the session continues without it
	}
	var out []string
	for _, m := range conv {
		if m.Role != "user" && m.Role != "assistant" {
			continue // tool results: zuno session show has them
		}
		text := strings.Join(strings.Fields(m.Text), " ")
		for _, c := range m.ToolCalls {
			text = strings.TrimSpace(text + " [" + c.Name + " " + c.ID + "]")
		}
		if text != "" {
			out = append(out, "  "+m.Role+": "+ansi.Truncate(text, 100, "…"))
		}
	}
	if len(out) > 6 {
		out = append([]string{fmt.Sprintf("  … %d earlier messages", len(out)-6)}, out[len(out)-6:]...)
	}
	return append(out, head), nil
}

// goal is /goal: show, complete, resume or answer the session's Goal, as zuno goal does.
func (e *Engine) goal(ctx context.Context, arg string) ([]string, error) {
	session := e.State().Session
	if session == "" {
		return nil, usage("/goal needs a session: send a prompt first, or /resume one")
	}
	verb, text, _ := strings.Cut(arg, " ")
	var view json.RawMessage
	switch verb {
	case "":
		g, err := e.cfg.App.Queries.Goal(ctx, session)
		if err != nil {
			return nil, err
		}
		return goalLines(g), nil
	case "complete":
		res, err := e.cfg.App.Commands.CompleteGoal(ctx, meta(), session, nil, nil)
		if err != nil {
			return nil, err
		}
		view = res.View
	case "resume":
		res, err := e.cfg.App.Commands.ResumeGoal(ctx, meta(), session, nil)
		if err != nil {
			return nil, err
		}
		view = res.View
	case "answer":
		g, err := e.cfg.App.Queries.Goal(ctx, session)
		if err != nil {
			return nil, err
		}
		if g == nil || g.Waiting == nil || strings.TrimSpace(text) == "" {
			return nil, usage("/goal answer TEXT answers the Goal's open input request, and there is none (or no TEXT)")
		}
		res, err := e.cfg.App.Commands.AnswerGoalInput(ctx, meta(), session, g.Waiting.RequestID, text)
		if err != nil {
			return nil, err
		}
		view = res.View
	default:
		return nil, usage("/goal %s: use /goal, /goal complete, /goal resume or /goal answer TEXT", verb)
	}
	var g *goal.View
	if err := json.Unmarshal(view, &g); err != nil {
		return nil, err
	}
	return goalLines(g), nil
}

// OpenQuestions puts the session's open question requests to the person (a question_async
// of an earlier turn, or one asked while no face was there), oldest first.
func (e *Engine) OpenQuestions(ctx context.Context) {
	session := e.State().Session
	if session == "" {
		return
	}
	rs, err := e.cfg.App.Commands.Questions().List(ctx, session, true)
	if err != nil {
		e.emit(noteMsg("! the open questions could not be read: " + err.Error()))
		return
	}
	for _, r := range rs {
		e.emit(questionMsg{Req: r})
	}
}

func goalLines(g *goal.View) []string {
	if g == nil {
		return []string{"· no goal"}
	}
	out := []string{fmt.Sprintf("· goal %s revision %d %s: %s", g.GoalID, g.Revision, g.Status, g.Objective)}
	for _, c := range g.Criteria {
		out = append(out, fmt.Sprintf("  - %s: %s", c.ID, c.Text))
	}
	if g.Waiting != nil {
		out = append(out, fmt.Sprintf("  waiting for input %s: %s (/goal answer TEXT)", g.Waiting.RequestID, g.Waiting.Question))
	}
	return out
}
