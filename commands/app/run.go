package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/zuno-run/zuno/domain/prompt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/google/uuid"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/tools"
)

// RunTurn is one user input for an agent: a new session (SessionID empty) or the next turn of
// one.
type RunTurn struct {
	// Meta.CommandID makes the turn idempotent: the same id returns the first outcome, and for
	// a new session names the same session.
	Meta      commands.Meta
	SessionID string
	Prompt    string
	// Model, Agent and Title override the defaults (the settings' model; the session's agent,
	// build for a new one; the prompt's first line).
	Model, Agent, Title string
	// Dir moves the session to another workspace; empty keeps the recorded one. Cwd is where a
	// session without a recorded workspace works.
	Dir, Cwd string
	// Recover settles the session's open turn even if its process seems to be running.
	Recover  bool
	Observer turn.Observer
	// Interactive says whether someone answers the turn's permission asks (through the
	// observer); otherwise an ask is a denial naming the rule to add.
	Interactive bool
	// Notice receives what the user should know before the turn runs (a shell that was not
	// assembled, commands running unconfined).
	Notice func(string)
	// Suspend: at an ask nobody has answered yet, the turn suspends (recorded) and RunTurn
	// returns, instead of waiting in this process (docs/turns.md, "Suspended turns").
	Suspend bool
	// Child, when set, runs the turn as a delegated child (docs/delegation.md): a new
	// session is created as Child.SessionID under its parent, and the tools are narrowed
	// to the parent attempt's (Child.Within).
	Child *ChildTurn
	// Report delivers a job's report from the session's inbox as the turn's input.
	Report *turn.Report
	// Editor, when set, is the file system of the editor driving the turn (an ACP client's,
	// docs/acp.md): the file tools read and write through it, behind the same gates.
	Editor *tools.Editor
}

// ChildTurn is what a child's turn inherits from the parent turn that delegated it.
type ChildTurn struct {
	SessionID, ParentSessionID string
	// New is true when the child session does not exist yet.
	New bool
	// Within are the tools the parent attempt was offered: the child is never offered
	// another (seeds 002 §5).
	Within []string
}

// TurnResult is a turn's outcome and where it ran.
type TurnResult struct {
	turn.Outcome
	// Directory is the workspace the turn ran in.
	Directory string
	// LastPosition is at or after the turn's last event (the log's head when it ended): a
	// query that must see the turn waits for it (Queries.WaitFor).
	LastPosition uint64
}

// RunTurn runs one turn. Everything that can be refused (the model, the agent, the tools
// config) is checked before anything is recorded, so a bad setting leaves no session behind.
func (c *Commands) RunTurn(ctx context.Context, in RunTurn) (TurnResult, error) {
	spec := in.Model
	if spec == "" {
		spec = c.settings.Model
	}
	choice, err := ParseModel(spec)
	if err != nil {
		return TurnResult{}, err
	}
	plan, err := c.placeTurn(ctx, in)
	if err != nil {
		return TurnResult{}, err
	}
	if plan.create == nil {
		// The session's delegated jobs first (seeds 002 §7.3): a crash may have left some.
		if err := c.jobs().Recover(ctx, plan.sessionID); err != nil {
			return TurnResult{}, err
		}
	}
	return c.drive(ctx, in, plan, choice, nil)
}

// drive runs a placed turn, new or resumed: the session's configuration resolved for its
// workspace, its agent, provider, tools and gate opened, and the driver run.
func (c *Commands) drive(ctx context.Context, in RunTurn, plan turnPlan, choice ModelChoice, resume *turn.Resume) (TurnResult, error) {
	// The session's workspace decides its configuration, whoever runs the turn from where.
	sc, err := c.ports.Configure(plan.dir)
	if err != nil {
		return TurnResult{}, err
	}
	c.noticeNew(in.Notice, sc)
	set := sc.Settings
	ag, err := agent.Resolve(plan.agent, set.Agents, in.Child == nil) // a subagent runs only as a child
	if err != nil {
		return TurnResult{}, err
	}
	skillLane, memory, err := contextLanes(ctx, sc, ag, set.ContextWindow)
	if err != nil {
		return TurnResult{}, err
	}
	prov, err := c.ports.OpenProvider(choice.Spec)
	if err != nil {
		return TurnResult{}, err
	}
	surface, err := sc.OpenTools(turn.ToolsRequest{Dir: plan.dir, SessionID: plan.sessionID, ReadOnly: ag.ReadOnly, RequiredSkills: ag.RequiredSkills,
		Editor: in.Editor})
	if err != nil {
		return TurnResult{}, err
	}
	defer surface.Close()
	conf := surface.Confinement()
	policy, err := set.Policy(ag, conf)
	if err != nil {
		return TurnResult{}, err
	}
	avail := surface.Tools()
	if in.Child != nil {
		if avail, err = childTools(ag, avail, set.Tools, in.Child.Within, policy.Hidden); err != nil {
			return TurnResult{}, err
		}
	}
	offered, err := agent.Offer(ag, avail, set.Tools)
	if err != nil {
		return TurnResult{}, err
	}
	noticeConfinement(in.Notice, conf)
	global, project, err := c.ports.Instructions(plan.dir)
	if err != nil {
		return TurnResult{}, fmt.Errorf("read AGENTS.md: %w", err)
	}
	if plan.create != nil {
		if err := c.create(ctx, in, *plan.create); err != nil {
			return TurnResult{}, err
		}
	}
	spec := in.Model
	if spec == "" {
		spec = c.settings.Model
	}
	done := c.jobs().composed(plan.sessionID, composition{model: spec, agent: ag, offered: toolNames(offered.Tools),
		dir: plan.dir, interactive: in.Interactive, observer: in.Observer})
	defer done()
	move := ""
	if plan.dir != plan.recorded {
		move = plan.dir // only a requested move (or a first workspace) is recorded, never a stale read of it
	}
	out, err := c.ports.Driver.Run(ctx, turn.Request{Meta: in.Meta, SessionID: plan.sessionID, Text: in.Prompt, Agent: ag,
		Provider: prov, ProviderName: choice.Name, Retry: retryOf(prov), Model: model.ModelInfo{ID: choice.Model, ContextWindow: set.ContextWindow},
		MaxTokens: set.MaxTokens, Tools: avail, ToolsConfig: set.Tools, ToolCalls: set.ToolCalls, Config: sc.Files, Bounds: set.Bounds,
		Directory: move, GlobalAgents: global, ProjectAgents: project, Skills: skillLane, Memory: memory, Observer: in.Observer, ForceRecover: in.Recover,
		Gate: c.gateFor(policy, set, plan.dir, offered.Tools, conf, in.Interactive, in.Child != nil), Inbox: c.inbox(),
		Suspend: in.Suspend, Resume: resume, Report: in.Report, Inputs: c.jobs()})
	// The turn's position, whatever happened: a caller that reads the read models next waits
	// for it (read-your-writes by position).
	head, herr := c.ports.Log.LastPosition(context.WithoutCancel(ctx))
	if herr != nil && err == nil {
		err = fmt.Errorf("turn recorded, but reading the log's head failed: %w", herr)
	}
	out.SessionID = plan.sessionID
	if err == nil && out.Duplicate && in.Observer != nil && resume == nil {
		err = c.replay(ctx, in, plan.sessionID)
	}
	return TurnResult{Outcome: out, Directory: plan.dir, LastPosition: head}, err
}

// contextLanes are the turn's skill and memory lanes, resolved before anything is recorded:
// a required skill that is missing or over budget fails the turn before any request
// (docs/skills.md, docs/memory.md).
func contextLanes(ctx context.Context, sc SessionConfig, ag agent.Agent, window int64) (*prompt.SkillsPrompt, *prompt.MemoryPrompt, error) {
	skills, err := skillLanes(sc, ag, window)
	if err != nil {
		return nil, nil, err
	}
	memory, err := memoryLane(ctx, sc)
	return skills, memory, err
}

// placeTurn is where and as whom the turn runs, its workspace resolved and checked: never
// where Zuno's log or data lie (docs/sandbox.md, "The log outside the agent's reach").
func (c *Commands) placeTurn(ctx context.Context, in RunTurn) (turnPlan, error) {
	plan, err := c.planTurn(ctx, in)
	if err != nil {
		return plan, err
	}
	if plan.dir, err = workspace(plan.dir, plan.recorded); err != nil {
		return plan, err
	}
	if err := c.settings.Own.OutsideWorkspace(filepath.ToSlash(plan.dir)); err != nil {
		return plan, err
	}
	if plan.create != nil {
		plan.create.Directory = plan.dir
	}
	return plan, nil
}

// noticeConfinement tells the caller, when it listens, that the shell is not offered or runs
// with a weaker confinement than asked (docs/sandbox.md).
func noticeConfinement(notice func(string), conf turn.Confinement) {
	if notice == nil {
		return
	}
	if conf.Refusal != nil {
		notice("the shell is not offered: " + conf.Refusal.Error())
	}
	if conf.Warning != "" {
		notice(conf.Warning)
	}
}

// retryOf is how a provider opened from configuration is retried; none for any other.
func retryOf(prov model.Provider) model.RetryPolicy {
	if d, ok := prov.(model.Described); ok {
		return d.Describe().Retry
	}
	return model.RetryPolicy{}
}

// replay shows a re-sent turn's observer what the first delivery recorded, so a caller that
// retries after a lost reply sees the outcome it missed.
func (c *Commands) replay(ctx context.Context, in RunTurn, sessionID string) error {
	recs, err := c.queries.Events(ctx, commands.SessionStream(sessionID), 0, 0)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if rec.Metadata.CommandID != in.Meta.CommandID {
			continue
		}
		p, err := c.ports.Driver.Registry.Decode(rec)
		if err != nil {
			return err
		}
		in.Observer.Recorded(rec, p)
	}
	return nil
}

// CodeWorkspaceNotFound: a turn's workspace is missing or is not a directory.
const CodeWorkspaceNotFound = "workspace_not_found"

// workspace resolves the directory a turn works in to the real directory behind any symbolic
// link, so the log names where the tools really worked and re-pointing a link later cannot
// move a session silently. recorded is the session's recorded workspace ("" for none).
func workspace(dir, recorded string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	problem := "does not exist"
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(real); err == nil && !fi.IsDir() {
			err, problem = errors.New("not a directory"), "is not a directory"
		}
	}
	if err != nil {
		fix := "pass --dir with an existing directory"
		if dir == recorded {
			fix = "the session's recorded workspace is gone: pass --dir to move the session to another directory"
		}
		e := domain.NewError(CodeWorkspaceNotFound, fmt.Sprintf("workspace %s %s", dir, problem), fix)
		e.ID = dir
		return "", e
	}
	return real, nil
}

// turnPlan is where and as whom a turn runs; recorded is the session's recorded workspace.
type turnPlan struct {
	sessionID, agent, dir, recorded string
	create                          *NewSession
}

func (c *Commands) planTurn(ctx context.Context, in RunTurn) (turnPlan, error) {
	if ch := in.Child; ch != nil && ch.New {
		return turnPlan{sessionID: ch.SessionID, agent: in.Agent, dir: in.Dir, create: &NewSession{SessionID: ch.SessionID,
			Title: DefaultTitle(in.Title), Agent: in.Agent, Directory: in.Dir, ParentSessionID: ch.ParentSessionID}}, nil
	}
	if in.SessionID == "" {
		p := turnPlan{sessionID: NewSessionID(in.Meta.CommandID), agent: in.Agent, dir: in.Dir}
		if p.agent == "" {
			p.agent = "build"
		}
		if p.dir == "" {
			p.dir = in.Cwd
		}
		title := in.Title
		if title == "" {
			title = DefaultTitle(in.Prompt)
		}
		p.create = &NewSession{SessionID: p.sessionID, Title: title, Agent: p.agent, Directory: p.dir}
		return p, nil
	}
	info, err := c.queries.Place(ctx, in.SessionID)
	if err != nil {
		return turnPlan{}, err
	}
	if info.Pruned != "" { // refused before anything is opened or recorded; the driver's decision holds it too
		return turnPlan{}, session.PrunedError(in.SessionID, info.Pruned)
	}
	p := turnPlan{sessionID: in.SessionID, agent: in.Agent, dir: in.Dir, recorded: info.Directory}
	if p.agent == "" {
		p.agent = info.Agent
	}
	if p.dir == "" {
		p.dir = info.Directory
	}
	if p.dir == "" { // a session created without a workspace works where it is run
		p.dir = in.Cwd
	}
	return p, nil
}

// create records a new session and shows its creation to the observer as the turn's other
// events are shown: as recorded.
func (c *Commands) create(ctx context.Context, in RunTurn, s NewSession) error {
	meta := in.Meta
	meta.CommandID += "/create"
	meta.CorrelationID = s.SessionID
	if _, err := c.CreateSession(ctx, meta, s); err != nil {
		return err
	}
	if in.Observer == nil {
		return nil
	}
	recs, err := c.ports.Log.ReadStream(ctx, commands.SessionStream(s.SessionID), 0, 1)
	if err != nil || len(recs) == 0 {
		return err
	}
	p, err := c.ports.Driver.Registry.Decode(recs[0])
	if err != nil {
		return err
	}
	in.Observer.Recorded(recs[0], p)
	return nil
}

// NewSessionID names the session a run's command creates: derived from the command id, so a
// retried run (the same command id) finds its session instead of forking a new one.
func NewSessionID(commandID string) string {
	sum := sha256.Sum256([]byte("session\n" + commandID))
	return "ses_" + hex.EncodeToString(sum[:16])
}

// NewID returns a time-ordered id with a kind prefix, e.g. ses_0193….
func NewID(prefix string) string {
	return prefix + strings.ReplaceAll(uuid.Must(uuid.NewV7()).String(), "-", "")
}

// DefaultTitle is the prompt's first line, shortened, with control characters (a title is
// one line of text) turned into spaces; "untitled" when nothing printable is left.
func DefaultTitle(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, line)), " ")
	if r := []rune(line); len(r) > 80 {
		line = string(r[:77]) + "..."
	}
	if line == "" {
		return "untitled"
	}
	return line
}

// ModelChoice is a parsed model spec: which provider serves it and the model id to request.
type ModelChoice struct {
	// Spec is the provider spec OpenProvider takes; Name is how requests record it.
	Spec, Name, Model string
}

// ParseModel reads PROVIDER/<model> or scripted:<file>.
func ParseModel(s string) (ModelChoice, error) {
	if s == "" {
		return ModelChoice{}, &UsageError{"no model: pass --model (PROVIDER/<model>, e.g. openai/gpt-4.1, ollama/qwen3, or scripted:<file>) or set model in the config or ZUNO_MODEL"}
	}
	if file, ok := strings.CutPrefix(s, "scripted:"); ok {
		if file == "" {
			return ModelChoice{}, &UsageError{"--model scripted: names no script file; write scripted:<path to the script JSON>"}
		}
		return ModelChoice{Spec: s, Name: "scripted", Model: "scripted"}, nil
	}
	// The provider id is checked when it is opened (a family, or an id the configuration
	// names: docs/config.md, "Providers"); a model id may hold '/' itself (org/model on vLLM).
	prov, id, ok := strings.Cut(s, "/")
	if !ok || id == "" || prov == "" {
		return ModelChoice{}, &UsageError{fmt.Sprintf("--model %q: write PROVIDER/<model> (openai, anthropic, ollama, llamacpp, vllm, or a configured provider) or scripted:<file> (zuno models lists them)", s)}
	}
	return ModelChoice{Spec: prov, Name: prov, Model: id}, nil
}

// CodeUsage is the code of a request the caller must phrase differently.
const CodeUsage = "usage"

// UsageError is a request that cannot be run as given; a CLI exits 2 for it.
type UsageError struct{ Message string }

func (e *UsageError) Error() string { return e.Message }

// Code returns the stable code.
func (e *UsageError) Code() string { return CodeUsage }

// CodeOf is the stable code of an error the application returned, from whichever layer refused
// (every typed error is a domain.Coded); "" for an untyped one.
func CodeOf(err error) string { return domain.CodeOf(err) }
