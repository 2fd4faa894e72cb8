// Package catalog owns the tools of a session (docs/tools.md, "The catalogue"): which tools
// there are (read, glob, grep, write, apply_patch, shell and report_write from toolset, bg,
// and the plan and todo tools; the delegation, question and MCP tools of the next issues join
// here), their declarations, checked as one registry, and opening them for one session: the
// sandbox assembled for the session's own workspace, the session's view of its background
// tasks, and every tool wired to them. The host configures a Catalog once per process; the
// application opens a surface per turn (turn.OpenTools).
package catalog

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/zuno-run/zuno/adapters/mcp"
	adsandbox "github.com/zuno-run/zuno/adapters/sandbox"
	"github.com/zuno-run/zuno/adapters/tools/bg"
	"github.com/zuno-run/zuno/adapters/tools/contexttools"
	"github.com/zuno-run/zuno/adapters/tools/continuity"
	"github.com/zuno-run/zuno/adapters/tools/delegate"
	"github.com/zuno-run/zuno/adapters/tools/goaltools"
	"github.com/zuno-run/zuno/adapters/tools/memorytool"
	"github.com/zuno-run/zuno/adapters/tools/questiontools"
	"github.com/zuno-run/zuno/adapters/tools/skilltool"
	"github.com/zuno-run/zuno/adapters/tools/toolset"
	"github.com/zuno-run/zuno/adapters/tools/web/search"
	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/bounds"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/skills"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// Catalog is what opening a session's tools needs from the host.
type Catalog struct {
	// Sandbox is the sandbox layers merged; EnvExclude the host variables withheld from
	// commands; MaxBytes and MaxLines the tool output caps.
	Sandbox            sandbox.Config
	EnvExclude         []string
	MaxBytes, MaxLines int
	// MaxArtifactBytes and MaxSessionArtifactBytes are the disk caps of a shell command's (or
	// background task's) output and of the session's (tool_output.*, docs/config.md "Bounds").
	MaxArtifactBytes, MaxSessionArtifactBytes int64
	// DataDir holds each session's artifacts (DataDir/artifacts/<session>).
	DataDir string
	// Own is where Zuno's own files are for a workspace (protected in every sandbox mode).
	Own func(workspace string) sandbox.Locations
	// Work runs the plan and todo tools' commands (nil for a report that only reads the
	// declarations: the tools are there, and a call fails).
	Work worktools.Commands
	// Jobs runs the delegation tools' jobs (task, job, job_reconcile); nil for a report that
	// only reads the declarations (a call fails).
	Jobs delegate.Jobs
	// Questions is the QuestionPort the question tools publish through; nil for a report
	// that only reads the declarations (a call fails).
	Questions questiontools.Port
	// Continuity, when set (continuity.enabled, docs/config.md), adds the history and notes
	// tools over it; nil leaves them out.
	Continuity continuity.Backend
	// WebSearch, when set (web_search in a trusted layer, docs/web.md), adds web_search.
	WebSearch search.Provider
	// Skills, when its catalogue holds a skill, adds the skill tool under SkillBudgets
	// (docs/skills.md); Memory, when set (memory.enabled), adds memory_read and memory_update
	// over MemoryConfig (docs/memory.md).
	Skills       skills.Catalog
	SkillBudgets skills.Budgets
	Memory       memorytool.Backend
	MemoryConfig memorytool.Config
	// Supervisor runs the background tasks of every session of the process: they outlive
	// the turn that started them.
	Supervisor *bg.Supervisor
	// Probe, when set, replaces the probe of the sandbox's launcher (tests).
	Probe adsandbox.Probe
	// MCP is the MCP servers whose tools join the session's (docs/mcp.md).
	MCP MCP
}

// OpenTools is Open as the turn's port.
func (c *Catalog) OpenTools() turn.OpenTools { return c.Open }

// Open opens one session's tools over req.Dir. A sandbox that cannot be assembled leaves
// the shell out and every command refused (fail closed); the refusal is the surface's
// confinement, which the turn records.
func (c *Catalog) Open(req turn.ToolsRequest) (turn.Surface, error) {
	workspace, sessionID := req.Dir, req.SessionID
	var own sandbox.Locations
	if c.Own != nil {
		own = c.Own(workspace)
	}
	sb, refused := adsandbox.Assemble(context.Background(), c.Sandbox, adsandbox.Request{Workspace: workspace,
		ReadOnlyAgent: req.ReadOnly, WorkspaceGone: req.Gone != nil, Own: own}, c.Probe)
	launcher := sb.Launcher
	if refused != nil {
		launcher = refusedLauncher{refused} // fail closed: nothing runs unconfined by accident
	}
	artifacts := filepath.Join(c.DataDir, "artifacts", sessionID)
	perCall, perSession := bounds.ArtifactBytes.Effective(c.MaxArtifactBytes), bounds.SessionBytes.Effective(c.MaxSessionArtifactBytes)
	mgr, err := c.Supervisor.Manager(sessionID, bg.WithArtifactRoots(artifacts), bg.WithLauncher(launcher),
		bg.WithEnvExclude(c.EnvExclude), bg.WithDiskCaps(perCall, perSession))
	if err != nil {
		return nil, err
	}
	set, err := toolset.New(toolset.Config{Root: workspace, ArtifactDir: artifacts, SessionID: sessionID,
		MaxBytes: c.MaxBytes, MaxLines: c.MaxLines, Background: backgroundStarter{mgr},
		MaxArtifactBytes: perCall, MaxSessionArtifactBytes: perSession, UsageDirs: []string{mgr.LogDir()},
		EnvExclude: c.EnvExclude, Gone: req.Gone, Protected: sb.Protected, Editor: editorBeside(req.Editor, sb.Resolution, refused, c.Sandbox.Mode), ReadOnly: c.Sandbox.Mode == sandbox.ModeReadOnly,
		Sandbox: &toolset.ShellSandbox{Resolution: sb.Resolution, Launcher: sb.Launcher, Refused: refused}})
	if err != nil {
		mgr.Close()
		return nil, err
	}
	all := set.Tools()
	if refused == nil {
		all = append(all, bg.NewTool(mgr))
	}
	all = append(all, worktools.New(c.Work)...)
	all = append(all, contexttools.New(contextCommands(c.Work))...)
	all = append(all, goaltools.New(goalCommands(c.Work))...)
	all = append(all, delegate.New(c.Jobs)...)
	all = append(all, questiontools.New(c.Questions)...)
	if c.Continuity != nil {
		all = append(all, continuity.New(c.Continuity)...)
	}
	all = append(all, c.webTools(set)...)
	if len(c.Skills.Skills) > 0 {
		all = append(all, skilltool.New(c.Skills, c.SkillBudgets, req.RequiredSkills, set.CapResult))
	}
	if c.Memory != nil {
		all = append(all, memorytool.New(c.Memory, c.MemoryConfig, set.CapResult)...)
	}
	pool := c.openMCP(req, artifacts, sb, refused)
	all = append(append(all, pool.Tools()...), mcp.NewToolSearch(pool))
	s := &surface{tools: all, bg: mgr, confinement: confinement(sb, refused), mcp: pool}
	if err := checkDeclarations(all); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// contextCommands are the task_context tool's commands: the work commands carry them
// (commands.WorkCommands, *commands.Handlers), so the host wires nothing more. Work commands
// without them (nil, for a report that only reads the declarations) leave the tool declared and
// every call failing.
func contextCommands(work worktools.Commands) contexttools.Commands {
	if c, ok := work.(contexttools.Commands); ok {
		return c
	}
	return nil
}

// goalCommands are the Goal's commands of the work commands (commands.WorkCommands has
// them): the Goal lives in the work stream, so one port serves both tool sets. nil when work
// does not have them (a report that only reads the declarations).
func goalCommands(work worktools.Commands) goaltools.Commands {
	if g, ok := work.(goaltools.Commands); ok {
		return g
	}
	return nil
}

// checkDeclarations holds the session's tools to one registry: unique names, valid
// declarations. A tool named at run time (an MCP server's) that clashes with another is
// refused here, before any model sees it.
func checkDeclarations(all []tools.Tool) error {
	decls := make([]tools.Declaration, len(all))
	for i, t := range all {
		decls[i] = t.Declaration()
	}
	if _, err := tools.NewRegistry(decls...); err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	return nil
}

// refusedLauncher runs nothing: the sandbox could not be assembled.
type refusedLauncher struct{ err error }

func (l refusedLauncher) Wrap([]string, string) ([]string, error) { return nil, l.err }

// confinement is the sandbox resolution as the turn records it.
func confinement(sb adsandbox.Session, refused error) turn.Confinement {
	if refused != nil {
		return turn.Confinement{Refusal: refused}
	}
	r := sb.Resolution
	warning := r.Warning
	for _, w := range []string{sb.Unenforced, sb.GitWarning} {
		if w != "" {
			warning = strings.TrimSpace(warning + "\n" + w)
		}
	}
	return turn.Confinement{ForcesAllowAll: r.ForcesAllowAll, Warning: warning,
		Resolution: &events.SandboxResolution{RequestedMode: r.RequestedMode, Network: r.Network,
			EffectiveAuthority: r.EffectiveAuthority, ResolutionKind: string(r.ResolutionKind), Backend: r.Backend,
			Reason: string(r.Reason.Code)}}
}

// surface is a session's tools and its view of the session's background tasks.
type surface struct {
	tools       []turn.Tool
	bg          *bg.Manager
	confinement turn.Confinement
	mcp         *mcp.Pool
}

func (s *surface) Tools() []turn.Tool            { return s.tools }
func (s *surface) Confinement() turn.Confinement { return s.confinement }

// Close drops the view, and shuts the MCP servers down; the session's background tasks run on
// under the supervisor.
func (s *surface) Close() error {
	s.closeMCP()
	return s.bg.Close()
}

// backgroundStarter lets the shell tool's background option start bg tasks.
type backgroundStarter struct{ m *bg.Manager }

func (b backgroundStarter) StartBackground(ctx context.Context, req toolset.BackgroundRequest) (string, error) {
	info, err := b.m.Start(ctx, bg.StartRequest{Command: req.Command, Dir: req.Dir, ExitPolicy: req.ExitPolicy,
		SessionID: req.SessionID, CallID: req.CallID})
	return info.ID, err
}

// editorBeside is the editor's file system the file tools may use beside this surface's
// commands (docs/acp.md, "Only where no confined command can move a name"). The editor opens
// files by name, on the host, after Zuno checked them; under a sandbox that lets the session's
// commands write the workspace, a command (a background task, a delegated child's shell) can
// swap a checked directory for a link while the editor resolves the name, and the editor
// would read or write outside the sandbox through it. ACP has no handle-relative access, so
// there the editor is not used and the tools read and write the disk by handle. It is kept
// where that gives the agent nothing its commands lack: commands that run unconfined (the
// native backend, danger-full-access, the fallback), that cannot write (read-only), or that
// do not run at all (a refused sandbox).
func editorBeside(e *tools.Editor, res sandbox.Resolution, refused error, mode string) *tools.Editor {
	if e == nil || refused != nil || !res.Enforced || mode == sandbox.ModeReadOnly {
		return e
	}
	return nil
}
