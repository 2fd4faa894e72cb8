package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/commands"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/events"
)

func newRunCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [--format json] [--model M] [--agent A] [--title T] [--session S] PROMPT | - | --file F",
		Short: "Run an agent turn: a new session, or the next turn of --session",
		Long: `Runs one agent turn on PROMPT in the current directory (or --dir) and records every step.

Models: openai/<model> (OPENAI_API_KEY, OPENAI_BASE_URL), anthropic/<model>
(ANTHROPIC_API_KEY), or scripted:<file>, a recorded list of model turns. Default: model
in the config file or ZUNO_MODEL.

Human output streams the answer and one line per tool call with its outcome, followed by a
preview of its result of at most 8 lines (a command's first and last output lines, a patch's
diffstat and first hunk, the path and size read or written); --quiet leaves previews out. --format json
prints every recorded event as one JSON line, each with the session id.
An interrupted run (Ctrl-C, or a killed process) is recorded; the next run of the session
settles calls that were cut short as uncertain and never re-runs them.

Approvals for this run (the CLI layer of permission.mode and permission.rules):
--permission-mode standard|strict|allow_all, --allow TOOL[:PATTERN] and --deny
TOOL[:PATTERN], repeatable, every --deny after every --allow. Without a terminal an ask is a
denial that says which rule would allow the call; a destructive shell command runs headless
only when an allow rule names it (--allow 'shell:rm -rf build*'), never a catastrophic one.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("the prompt is one argument, and %d were given: quote it, as in zuno run 'fix the failing test'", len(args))
			}
			return nil
		},
		RunE: runRun,
	}
	cmd.Flags().String("format", "text", "output format: text or json (one event per line)")
	cmd.Flags().String("file", "", "read the prompt from this file (PROMPT - reads it from standard input)")
	cmd.Flags().String("model", "", "openai/<model>, anthropic/<model> or scripted:<file>")
	cmd.Flags().String("agent", "", "agent: build (default), deep, plan or orchestrator")
	cmd.Flags().String("title", "", "title of the new session (default: the prompt's first line)")
	cmd.Flags().String("session", "", "continue this session (ses_…) instead of creating one")
	cmd.Flags().String("dir", "", "workspace directory the tools work in (default: the session's recorded workspace; a new session's is the current directory)")
	addCommandIDFlag(cmd)
	cmd.Flags().Bool("continue", false, "continue the latest session working in this directory (--session last: the latest of all)")
	cmd.Flags().Bool("quiet", false, "text output: one line per tool call, without the preview of its result")
	cmd.Flags().Bool("recover", false, "settle the session's unfinished turn although its process seems alive on another host (which cannot be checked from here); a process on this host that still runs is never overruled")
	addApprovalFlags(cmd)
	cmd.Flags().String("asks", "", "what a permission ask does: ask (at the terminal; the default at one), deny (the default without one), wait (for zuno session answer from another process) or suspend (the turn suspends and this process exits; zuno session resume goes on)")
	return cmd
}

// runRun reads zuno run's prompt and flags and runs the turn (or the /goal line it is).
func runRun(cmd *cobra.Command, args []string) error {
	format, _ := cmd.Flags().GetString("format")
	if format != "json" && format != "text" {
		return usagef("--format %q: use text or json", format)
	}
	file, _ := cmd.Flags().GetString("file")
	text, err := promptText(cmd.InOrStdin(), args, file)
	if err != nil {
		return err
	}
	opts, err := runFlags(cmd, format, text)
	if err != nil {
		return err
	}
	terminal := interactive() && !(len(args) == 1 && args[0] == "-")
	if opts.Asks, err = asksMode(cmd, terminal); err != nil {
		return err
	}
	if opts.Asks == "ask" {
		opts.Ask = &terminalAsker{in: bufio.NewReader(cmd.InOrStdin()), out: cmd.ErrOrStderr()}
	}
	if line, ok := goalLine(text); ok {
		return runGoalLine(cmd, opts, line)
	}
	return withApp(cmd, func(ctx context.Context, a *app) error {
		ctx, out, stop := watchOutput(ctx, cmd.OutOrStdout())
		defer stop()
		_, err := runTurn(ctx, out, a, opts)
		return err
	})
}

// runFlags is zuno run's options from its flags, the combinations that make no sense refused.
func runFlags(cmd *cobra.Command, format, text string) (runOptions, error) {
	opts := runOptions{Format: format, Prompt: text, Stderr: cmd.ErrOrStderr()}
	opts.Model, _ = cmd.Flags().GetString("model")
	opts.Agent, _ = cmd.Flags().GetString("agent")
	opts.Title, _ = cmd.Flags().GetString("title")
	opts.Session, _ = cmd.Flags().GetString("session")
	opts.Dir, _ = cmd.Flags().GetString("dir")
	opts.Recover, _ = cmd.Flags().GetBool("recover")
	opts.CommandID, _ = cmd.Flags().GetString("command-id")
	opts.Continue, _ = cmd.Flags().GetBool("continue")
	opts.Quiet, _ = cmd.Flags().GetBool("quiet")
	if opts.Continue && opts.Session != "" {
		return opts, usagef("--continue picks the latest session of this workspace; drop it or --session")
	}
	if opts.Recover && opts.Session == "" && !opts.Continue {
		return opts, usagef("--recover needs --session: it settles that session's unfinished turn")
	}
	return opts, nil
}

// asksMode is --asks, checked: ask needs a terminal (the default at one), deny is the default
// without one (docs/turns.md, "Suspended turns").
func asksMode(cmd *cobra.Command, terminal bool) (string, error) {
	mode, _ := cmd.Flags().GetString("asks")
	switch mode {
	case "":
		if terminal {
			return "ask", nil
		}
		return "deny", nil
	case "ask":
		if !terminal {
			return "", usagef("--asks ask needs a terminal on standard input and standard error: use wait or suspend to answer from another process")
		}
		return mode, nil
	case "deny", "wait", "suspend":
		return mode, nil
	}
	return "", usagef("--asks %q: use ask, deny, wait or suspend", mode)
}

// promptText is the prompt of zuno run: its argument, standard input for "-", or --file. It
// must be UTF-8 text that says something: the message is recorded as given, so bytes that
// JSON would have to replace are refused rather than silently changed.
func promptText(stdin io.Reader, args []string, file string) (string, error) {
	var (
		b   []byte
		err error
	)
	switch {
	case file != "" && len(args) > 0:
		return "", usagef("give the prompt once: as PROMPT, as - (standard input) or with --file, not both")
	case file != "":
		if b, err = os.ReadFile(file); err != nil {
			return "", usagef("--file: %v", err)
		}
	case len(args) == 0:
		return "", usagef("no prompt: give it as PROMPT, as - to read standard input, or with --file F")
	case args[0] == "-":
		if b, err = io.ReadAll(stdin); err != nil {
			return "", fmt.Errorf("read the prompt from standard input: %w", err)
		}
	default:
		b = []byte(args[0])
	}
	if !utf8.Valid(b) {
		return "", usagef("the prompt is not valid UTF-8 text; convert it (e.g. iconv -t UTF-8) and run again")
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", usagef("PROMPT is empty: say what the agent should do")
	}
	return string(b), nil
}

// pickSession names the session a run continues: --session S, --session last (the latest of all),
// --continue (the latest working in the current directory), or none for a new one.
func pickSession(ctx context.Context, a *app, o runOptions, cwd string) (string, error) {
	switch {
	case o.Continue:
		if real, err := filepath.EvalSymlinks(cwd); err == nil {
			cwd = real // recorded workspaces are real directories
		}
		return a.Queries.LatestSession(ctx, cwd)
	case o.Session == "last":
		return a.Queries.LatestSession(ctx, "")
	}
	return o.Session, nil
}

// runOptions is one `zuno run`.
type runOptions struct {
	Format, Prompt                    string
	Model, Agent, Title, Session, Dir string
	CommandID                         string
	// Continue picks the latest session of the current directory.
	Continue bool
	// Recover settles the session's open turn even if its process seems to be running.
	Recover bool
	// Quiet hides the previews of tool results in text output.
	Quiet bool
	// Ask puts permission asks at the terminal; nil when there is none (an ask is then a
	// denial that names the rule to add, unless Asks says wait or suspend).
	Ask *terminalAsker
	// Asks is --asks: ask, deny, wait or suspend.
	Asks string
	// Stderr receives notes said before the turn runs (a shell that was not assembled).
	Stderr io.Writer
}

// runTurn runs one turn and returns the session it ran in.
func runTurn(ctx context.Context, w io.Writer, a *app, o runOptions) (string, error) {
	if (o.Session != "" || o.Continue) && o.Title != "" {
		return "", usagef("--title names a new session: drop it when you continue one with --session")
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if o.Session, err = pickSession(ctx, a, o, cwd); err != nil {
		return "", err
	}
	dir := o.Dir
	if dir != "" {
		if dir, err = filepath.Abs(dir); err != nil {
			return "", err
		}
	}
	if o.CommandID == "" {
		o.CommandID = zapp.NewID("cmd_")
	}
	obs := newRunObserver(w, o.Format, o.Quiet)
	obs.dir = askWorkspace(ctx, a, o.Session, dir, cwd)
	if o.Ask != nil {
		o.Ask.answer = func(e events.PermissionAsked, reply string) error {
			res, err := a.Commands.AnswerPermission(ctx, commands.Meta{CommandID: zapp.NewID("cmd_"), Actor: "user"},
				e.SessionID, e.AskID, e.CallID, reply)
			if err == nil {
				err = res.Err()
			}
			return err
		}
		obs.asker = o.Ask
		obs.questions = &terminalQuestions{ctx: ctx, asker: o.Ask, port: a.Commands.Questions()}
	}
	res, err := a.Commands.RunTurn(ctx, zapp.RunTurn{Meta: commands.Meta{CommandID: o.CommandID, Actor: "user"},
		SessionID: o.Session, Prompt: o.Prompt, Model: o.Model, Agent: o.Agent, Title: o.Title, Dir: dir, Cwd: cwd,
		Recover: o.Recover, Observer: obs, Interactive: o.Ask != nil || o.Asks == "wait" || o.Asks == "suspend",
		Suspend: o.Asks == "suspend", Notice: func(s string) { fmt.Fprintln(o.Stderr, "zuno: note: "+s) }})
	if err == nil {
		// The run ends when the work its turn delegated has been delivered, not while a
		// child still runs (docs/delegation.md).
		res.LastPosition, err = a.Commands.SettleJobs(ctx)
	}
	return res.SessionID, finishTurn(ctx, a, obs, res, err)
}

// finishTurn waits until the read models hold the turn, whatever its outcome (this process
// projects it, or waits for the deployment's leader to: docs/storage.md, "Read-your-writes by
// position"), then prints its summary.
func finishTurn(ctx context.Context, a *app, obs *runObserver, res zapp.TurnResult, err error) error {
	if res.LastPosition > 0 && ctx.Err() == nil {
		if werr := a.Queries.WaitFor(ctx, res.LastPosition); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		return err
	}
	obs.summary(res)
	return res.Err()
}

// runObserver prints a turn as it happens.
type runObserver struct {
	// mu serialises what the turns of a run print: a parent and its children record at
	// the same time (docs/delegation.md).
	mu    sync.Mutex
	root  string // the run's session, once known: another session's events are a child's
	w     io.Writer
	asker *terminalAsker
	// questions puts the run's question requests at the terminal (nil without one).
	questions *terminalQuestions
	json      bool
	enc       *json.Encoder
	midLine   bool
	// quiet hides tool result previews; patches holds each apply_patch call's envelope, by
	// call id, from the recorded response, for its preview.
	quiet   bool
	patches map[string]string
	// edits holds each write and apply_patch call's arguments, by call id, and dir the run's
	// workspace, for the diff an ask about the call shows (askview.go).
	edits map[string]string
	dir   string
}

func newRunObserver(w io.Writer, format string, quiet bool) *runObserver {
	return &runObserver{w: w, json: format == "json", enc: json.NewEncoder(w), quiet: quiet, patches: map[string]string{},
		edits: map[string]string{}}
}

type runEventLine struct {
	SessionID string          `json:"sessionId"`
	Position  uint64          `json:"position"`
	Revision  uint64          `json:"revision"`
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
}

func (o *runObserver) Recorded(rec events.Recorded, p events.Payload) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.root == "" {
		o.root = strings.TrimPrefix(rec.Stream, "session-")
	}
	if o.delegation(rec, p) {
		return
	}
	if o.json {
		o.enc.Encode(runEventLine{SessionID: strings.TrimPrefix(rec.Stream, "session-"), Position: rec.Position,
			Revision: rec.StreamRevision, Type: rec.Type, Data: rec.Data})
	}
	if e, ok := p.(events.ToolStarted); ok && zapp.AsksUser(e.Tool) && rec.Stream == "session-"+o.root {
		switch {
		case o.questions != nil:
			o.questions.started(e)
		case !o.json: // nobody at a terminal: say how to answer from elsewhere
			o.line(fmt.Sprintf("? %s %s asks the user: zuno question list --session %s (request %s)",
				e.Tool, e.CallID, e.SessionID, zapp.RequestID(e.SessionID, e.CallID)))
		}
	}
	if e, ok := p.(events.PermissionAsked); ok && o.asker != nil {
		if o.midLine {
			o.line("")
		}
		o.asker.ask(e, o.askView(e))
		return
	}
	if e, ok := p.(events.PermissionAsked); ok && !o.json {
		o.line(fmt.Sprintf("? %s %s asks permission %q for %s (%s): zuno session answer %s %s %s",
			e.Tool, e.CallID, e.Key, e.Resource, askedBy(e), e.SessionID, e.AskID, replies(e)))
		for _, l := range o.askView(e) {
			o.line(previewIndent + previewLine(l))
		}
		return
	}
	switch e := p.(type) {
	case events.ProviderRequest:
		o.noteEdits(e.Response)
	case events.DirectoryChanged:
		o.dir = e.Directory
	}
	if o.json {
		return
	}
	switch e := p.(type) {
	case events.ToolSettled:
		o.line(fmt.Sprintf("· %s %s → %s%s%s", e.Tool, e.CallID, e.Outcome, codeSuffix(e.ErrorCode, e.Outcome), exitSuffix(e.Metadata)))
		o.preview(e)
	case events.ToolBlocked:
		o.line(fmt.Sprintf("· %s %s → blocked (%s): %s", e.Tool, e.CallID, e.Category, e.Message))
		if e.Fix != "" { // what the gate recorded to do about it, as the model reads it
			o.line(previewIndent + "fix: " + e.Fix)
		}
	case events.ProviderRequest:
		o.notePatches(e.Response)
		if e.Status == events.RequestFailed && e.Error != nil && e.RetryInMs > 0 {
			o.line(fmt.Sprintf("· provider request %d failed: %s: %s; retrying in %s", e.Step, e.Error.Code, e.Error.Message,
				time.Duration(e.RetryInMs)*time.Millisecond))
		} else if e.Status == events.RequestFailed && e.Error != nil {
			o.line(fmt.Sprintf("! provider request %d failed: %s: %s", e.Step, e.Error.Code, e.Error.Message))
		}
		if e.Status == events.RequestStarted && e.StepLimitFinalization != nil {
			o.line(fmt.Sprintf("· step limit %d reached: tools closed, asking for a final summary", e.StepLimitFinalization.Limit))
		}
		if e.Status == events.RequestStarted && e.Purpose == events.PurposeCompaction {
			o.line(fmt.Sprintf("· the conversation no longer fits the context window: step %d summarises it", e.Step))
		}
	case events.TranscriptCompacted:
		o.line(fmt.Sprintf("· compaction %d: %d messages summarised, %d kept", e.Window, e.Through, e.KeptMessages))
	}
}

// notePatches keeps the apply_patch envelopes of a response until their calls settle.
func (o *runObserver) notePatches(r *events.ProviderResponse) {
	if r == nil || o.quiet {
		return
	}
	for _, c := range r.ToolCalls {
		var a struct {
			Patch string `json:"patch"`
		}
		if c.Name == "apply_patch" && json.Unmarshal([]byte(c.Arguments), &a) == nil {
			o.patches[c.ID] = a.Patch
		}
	}
}

// preview prints a bounded view of a settled call's result under its line (preview.go).
func (o *runObserver) preview(e events.ToolSettled) {
	if o.quiet {
		return
	}
	if notice, ok := withheldNotice(e); ok {
		o.line(previewIndent + printable(notice, 0))
	}
	for _, l := range toolPreview(e, o.patches[e.CallID]) {
		o.line(previewIndent + previewLine(l))
	}
	delete(o.patches, e.CallID)
}

// exitSuffix shows a command's exit status, which a person reading the run needs to see.
func exitSuffix(md events.ToolMetadata) string {
	var d struct {
		ExitCode *int `json:"exitCode"`
		TimedOut bool `json:"timedOut"`
	}
	if len(md.Details) == 0 || json.Unmarshal(md.Details, &d) != nil {
		return ""
	}
	switch {
	case d.TimedOut:
		return " (timed out)"
	case d.ExitCode != nil:
		return fmt.Sprintf(" (exit %d)", *d.ExitCode)
	}
	return ""
}

func codeSuffix(code, outcome string) string {
	if code == "" || code == outcome {
		return ""
	}
	return " (" + code + ")"
}

func (o *runObserver) TextDelta(text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.json || text == "" {
		return
	}
	fmt.Fprint(o.w, text)
	o.midLine = !strings.HasSuffix(text, "\n")
}

func (o *runObserver) line(s string) {
	if o.midLine {
		fmt.Fprintln(o.w)
		o.midLine = false
	}
	fmt.Fprintln(o.w, s)
}

// delegation prints what a run's delegation records, the children's starts and ends and the
// reports delivered, and reports whether it printed the event (a child's other events are
// shown only in JSON).
func (o *runObserver) delegation(rec events.Recorded, p events.Payload) bool {
	session := strings.TrimPrefix(rec.Stream, "session-")
	child := session != o.root
	if o.json {
		if child {
			o.enc.Encode(runEventLine{SessionID: session, Position: rec.Position, Revision: rec.StreamRevision, Type: rec.Type, Data: rec.Data})
		}
		return child
	}
	switch e := p.(type) {
	case events.SessionCreated:
		if e.ParentSessionID != "" {
			o.line(fmt.Sprintf("→ child %s (%s): %s", e.SessionID, e.Agent, e.Title))
		}
	case events.TurnFinished:
		if child {
			o.line(fmt.Sprintf("← child %s finished: %s", session, e.Reason))
		}
	case events.UserMessageAppended:
		if r := e.TaskReport; r != nil {
			o.line(fmt.Sprintf("⇐ report of job %s (%s, child %s): %s", r.JobID, r.Agent, r.SessionID, r.Status))
		}
		if m := e.PeerMessage; m != nil {
			o.line(fmt.Sprintf("⇐ message from session %s (%s): %s", m.FromSessionID, m.FromAgent, m.Title))
		}
	}
	return child
}

func (o *runObserver) summary(out zapp.TurnResult) {
	if o.json {
		return
	}
	if out.Duplicate { // nothing streamed: the answer is the recorded one
		if out.Text != "" {
			o.line(out.Text)
		}
		o.line("(this command was handled before: its first outcome, nothing ran again)")
	}
	o.line(fmt.Sprintf("\n[session %s · %s · %d provider request%s · tokens in %d out %d]", out.SessionID, out.Reason, out.Steps,
		plural(out.Steps), out.Usage.InputTokens, out.Usage.OutputTokens))
	for _, w := range out.Awaiting {
		o.line(fmt.Sprintf("waiting for an answer to %s (call %s): zuno session answer %s %s once|always|reject; then zuno session resume %s",
			w.AskID, w.CallID, out.SessionID, w.AskID, out.SessionID))
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
