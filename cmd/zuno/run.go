package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/adapters/tools/bg"
	"github.com/zuno-run/zuno/adapters/tools/toolset"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

func newRunCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run [--format json] [--model M] [--agent A] [--title T] [--session S] PROMPT",
		Short: "Run an agent turn: a new session, or the next turn of --session",
		Long: `Runs one agent turn on PROMPT in the current directory (or --dir) and records every step.

Models: openai/<model> (OPENAI_API_KEY, OPENAI_BASE_URL), anthropic/<model>
(ANTHROPIC_API_KEY), or scripted:<file>, a recorded list of model turns. Default: model
in the config file or ZUNO_MODEL.

Human output streams the answer and one line per tool call with its outcome. --format json
prints every recorded event as one JSON line, each with the session id.
An interrupted run (Ctrl-C, or a killed process) is recorded; the next run of the session
settles calls that were cut short as uncertain and never re-runs them.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, _ := cmd.Flags().GetString("format")
			if format != "json" && format != "text" {
				return usagef("--format %q: use text or json", format)
			}
			text := args[0]
			if strings.TrimSpace(text) == "" {
				return usagef("PROMPT is empty: say what the agent should do")
			}
			opts := runOptions{Format: format, Prompt: text}
			opts.Model, _ = cmd.Flags().GetString("model")
			opts.Agent, _ = cmd.Flags().GetString("agent")
			opts.Title, _ = cmd.Flags().GetString("title")
			opts.Session, _ = cmd.Flags().GetString("session")
			opts.Dir, _ = cmd.Flags().GetString("dir")
			opts.Recover, _ = cmd.Flags().GetBool("recover")
			if opts.Recover && opts.Session == "" {
				return usagef("--recover needs --session: it settles that session's unfinished turn")
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				_, err := runTurn(ctx, cmd.OutOrStdout(), a, opts)
				return err
			})
		},
	}
	cmd.Flags().String("format", "text", "output format: text or json (one event per line)")
	cmd.Flags().String("model", "", "openai/<model>, anthropic/<model> or scripted:<file>")
	cmd.Flags().String("agent", "", "agent: build (default), deep, plan or orchestrator")
	cmd.Flags().String("title", "", "title of the new session (default: the prompt's first line)")
	cmd.Flags().String("session", "", "continue this session (ses_…) instead of creating one")
	cmd.Flags().String("dir", "", "workspace directory the tools work in (default: the current directory)")
	cmd.Flags().Bool("recover", false, "settle the session's unfinished turn even if its process seems alive (another host, a reused pid)")
	return cmd
}

// runOptions is one `zuno run`.
type runOptions struct {
	Format, Prompt                    string
	Model, Agent, Title, Session, Dir string
	// Recover settles the session's open turn even if its process seems to be running.
	Recover bool
}

// thisProcess is the owner recorded on the turns this process drives.
func thisProcess() *events.TurnOwner {
	host, _ := os.Hostname()
	return &events.TurnOwner{Host: host, PID: os.Getpid()}
}

// processAlive reports whether a turn's owner may still be running: a process on another
// host cannot be checked, so it counts as alive (--recover overrides).
func processAlive(o events.TurnOwner) bool {
	host, _ := os.Hostname()
	if o.Host != host {
		return true
	}
	if o.PID <= 0 || o.PID == os.Getpid() {
		return false
	}
	err := syscall.Kill(o.PID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// runTurn runs one turn and returns the session it ran in.
func runTurn(ctx context.Context, w io.Writer, a *app, o runOptions) (string, error) {
	modelFlag, agentName, title, sessionID, dir := o.Model, o.Agent, o.Title, o.Session, o.Dir
	if modelFlag == "" {
		modelFlag = a.cfg.Model
	}
	choice, err := parseModel(modelFlag)
	if err != nil {
		return "", err
	}
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return "", err
	}
	if sessionID != "" && title != "" {
		return "", usagef("--title names a new session: drop it when you continue one with --session")
	}
	prov, err := provider.Open(choice.Spec)
	if err != nil {
		return "", err
	}

	// Everything that can be refused is checked before the session is created, so a bad
	// agent or tools config records nothing.
	newSession := sessionID == ""
	if newSession {
		if agentName == "" {
			agentName = "build"
		}
		if title == "" {
			title = defaultTitle(o.Prompt)
		}
		sessionID = newID("ses_")
	} else if agentName == "" {
		if agentName, err = sessionAgent(ctx, a, sessionID); err != nil {
			return "", err
		}
	}
	ag, err := agent.Resolve(agentName, a.cfg.Agents, true)
	if err != nil {
		return "", err
	}
	rt, err := newRuntimeTools(a.cfg, dir, sessionID)
	if err != nil {
		return "", err
	}
	defer rt.Close()
	global, project, err := instructionFiles(dir)
	if err != nil {
		return "", fmt.Errorf("read AGENTS.md: %w", err)
	}
	obs := newRunObserver(w, o.Format, sessionID)
	if newSession {
		created := session.Create{SessionID: sessionID, Title: title, Agent: agentName, Directory: dir}
		res, err := a.send(ctx, &commands.CreateSession{Meta: commands.Meta{CommandID: newID("cmd_"), Actor: "user", CorrelationID: sessionID},
			Create: created})
		if err != nil {
			return "", err
		}
		obs.created(res, created)
	}
	driver := &turn.Driver{Store: a.store, Registry: a.registry, Clock: commands.SystemClock{}, Owner: thisProcess(), Alive: processAlive,
		Metrics: turn.NewMetrics(a.metrics)}
	out, err := driver.Run(ctx, turn.Request{
		SessionID: sessionID, MessageID: newID("msg_"), Text: o.Prompt, Agent: ag,
		Provider: prov, ProviderName: choice.Name,
		Model:     model.ModelInfo{ID: choice.Model, ContextWindow: a.cfg.ContextWindow},
		MaxTokens: a.cfg.MaxTokens, Tools: rt.tools, ToolCalls: a.cfg.Concurrency.ToolCalls,
		GlobalAgents: global, ProjectAgents: project, Observer: obs, ForceRecover: o.Recover,
	})
	// Bring the read models up to the turn's events whatever happened, so zuno db and
	// zuno debug prompt see it (read-your-writes).
	if _, cerr := a.runner.CatchUp(context.WithoutCancel(ctx)); cerr != nil && err == nil {
		err = fmt.Errorf("turn recorded, but the read models did not catch up: %w", cerr)
	}
	if err != nil {
		return sessionID, err
	}
	obs.summary(out)
	return sessionID, out.Err()
}

// defaultTitle is the prompt's first line, shortened.
func defaultTitle(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	if r := []rune(line); len(r) > 80 {
		line = string(r[:77]) + "..."
	}
	return line
}

// sessionAgent is the agent a session was created with.
func sessionAgent(ctx context.Context, a *app, sessionID string) (string, error) {
	recs, err := a.store.ReadStream(ctx, commands.SessionStream(sessionID), 0, 1)
	if err != nil {
		return "", err
	}
	if len(recs) == 0 {
		e := domain.NewError(domain.CodeSessionNotFound, fmt.Sprintf("session %s does not exist", sessionID),
			"check the id with zuno session list, or run without --session to start a new one")
		e.ID = sessionID
		return "", e
	}
	p, err := a.registry.Decode(recs[0])
	if err != nil {
		return "", err
	}
	created, ok := p.(*events.SessionCreated)
	if !ok {
		return "", fmt.Errorf("session %s: first event is %s, not %s", sessionID, recs[0].Type, events.TypeSessionCreated)
	}
	return created.Agent, nil
}

// runtimeTools is the tool surface of one session's run: the core tools and bg, with the
// tools config applied.
type runtimeTools struct {
	tools []turn.Tool
	bg    *bg.Manager
}

func (r *runtimeTools) Close() error { return r.bg.Close() }

// dataDir is where Zuno keeps files beside its database: artifacts and background output.
func dataDir(cfg config) string { return filepath.Dir(cfg.DB) }

func newRuntimeTools(cfg config, dir, sessionID string) (*runtimeTools, error) {
	artifacts := filepath.Join(dataDir(cfg), "artifacts", sessionID)
	mgr, err := bg.NewManager(filepath.Join(dataDir(cfg), "bg", sessionID), bg.WithArtifactRoots(artifacts))
	if err != nil {
		return nil, err
	}
	set, err := toolset.New(toolset.Config{Root: dir, ArtifactDir: artifacts, SessionID: sessionID,
		MaxBytes: cfg.ToolOutput.MaxBytes, MaxLines: cfg.ToolOutput.MaxLines, Background: backgroundStarter{mgr}})
	if err != nil {
		mgr.Close()
		return nil, err
	}
	all := append(set.Tools(), bg.NewTool(mgr))
	rt := &runtimeTools{bg: mgr}
	var decls []tools.Declaration
	for _, t := range all {
		decls = append(decls, t.Declaration())
	}
	reg, err := tools.NewRegistry(decls...)
	if err == nil {
		reg, err = reg.Configure(cfg.Tools)
	}
	if err != nil {
		mgr.Close()
		return nil, &configError{fmt.Sprintf("tools: %v", err)}
	}
	enabled := map[string]bool{}
	for _, d := range reg.Enabled() {
		enabled[d.Name] = true
	}
	for _, t := range all {
		if enabled[t.Declaration().Name] {
			rt.tools = append(rt.tools, t)
		}
	}
	return rt, nil
}

// backgroundStarter lets the shell tool's background option start bg tasks.
type backgroundStarter struct{ m *bg.Manager }

func (b backgroundStarter) StartBackground(ctx context.Context, req toolset.BackgroundRequest) (string, error) {
	info, err := b.m.Start(ctx, bg.StartRequest{Command: req.Command, Dir: req.Dir, ExitPolicy: req.ExitPolicy,
		SessionID: req.SessionID, CallID: req.CallID})
	return info.ID, err
}

// runObserver prints a turn as it happens.
type runObserver struct {
	w         io.Writer
	json      bool
	sessionID string
	enc       *json.Encoder
	midLine   bool
}

func newRunObserver(w io.Writer, format, sessionID string) *runObserver {
	return &runObserver{w: w, json: format == "json", sessionID: sessionID, enc: json.NewEncoder(w)}
}

type runEventLine struct {
	SessionID string          `json:"sessionId"`
	Position  uint64          `json:"position"`
	Revision  uint64          `json:"revision"`
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
}

// created prints the session's creation, which the bus recorded before the turn began.
func (o *runObserver) created(res commands.Result, c session.Create) {
	if !o.json {
		return
	}
	data, _ := json.Marshal(events.SessionCreated{SessionID: c.SessionID, Title: c.Title, Agent: c.Agent, Directory: c.Directory})
	o.enc.Encode(runEventLine{SessionID: o.sessionID, Position: res.LastPosition, Revision: uint64(max(res.Revision, 0)),
		Type: events.TypeSessionCreated, Data: data})
}

func (o *runObserver) Recorded(rec events.Recorded, p events.Payload) {
	if o.json {
		o.enc.Encode(runEventLine{SessionID: o.sessionID, Position: rec.Position, Revision: rec.StreamRevision, Type: rec.Type, Data: rec.Data})
		return
	}
	switch e := p.(type) {
	case events.ToolSettled:
		o.line(fmt.Sprintf("· %s %s → %s%s%s", e.Tool, e.CallID, e.Outcome, codeSuffix(e.ErrorCode, e.Outcome), exitSuffix(e.Metadata)))
	case events.ToolBlocked:
		o.line(fmt.Sprintf("· %s %s → blocked (%s): %s", e.Tool, e.CallID, e.Category, e.Message))
	case events.ProviderRequest:
		if e.Status == events.RequestFailed && e.Error != nil {
			o.line(fmt.Sprintf("! provider request %d failed: %s: %s", e.Step, e.Error.Code, e.Error.Message))
		}
		if e.Status == events.RequestStarted && e.StepLimitFinalization != nil {
			o.line(fmt.Sprintf("· step limit %d reached: tools closed, asking for a final summary", e.StepLimitFinalization.Limit))
		}
	}
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

func (o *runObserver) summary(out turn.Outcome) {
	if o.json {
		return
	}
	o.line(fmt.Sprintf("\n[session %s · %s · %d provider request%s · tokens in %d out %d]", out.SessionID, out.Reason, out.Steps,
		plural(out.Steps), out.Usage.InputTokens, out.Usage.OutputTokens))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
