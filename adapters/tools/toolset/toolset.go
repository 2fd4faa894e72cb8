// Package toolset binds the tool adapters (files, search, shell) to the tool surface the
// model sees: read, glob, grep, write, apply_patch, shell and report_write. Each tool has a
// declaration (side effect, replay, concurrency), a spec (description and JSON Schema), a
// strict argument validator and an Execute that maps the adapter's answer onto a
// tools.Result: the text the model reads and the typed metadata (writtenPaths, outputPaths,
// withheldOutput, details) everything downstream reads instead of parsing that text.
//
// A Set is per session: its files.Workspace holds the session's read credentials, so a read
// in one call is what lets apply_patch edit the file in a later call of the same session.
// A session outlives a process, so read, write and apply_patch are tools.Restorers: a Set
// built for a later turn rebuilds those credentials from the session's recorded results
// (restore.go).
//
// Outcomes follow one rule, "a refusal is an outcome, not a failure" (see "Outcomes" in
// docs/tools.md): a refusal where nothing changed is OutcomeError with the adapter's stable
// code; a failure after writing began is OutcomeUncertain; a command that ran is
// OutcomeCompleted whatever its exit status, and a timeout is a completed result that says
// its effect may be partial. Output over the
// tool_output caps is never cut: all of it goes to an artifact file and the model gets a
// notice saying how to read it back.
package toolset

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/files"
	"github.com/zuno-run/zuno/adapters/tools/search"
	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/bounds"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/tools"
)

// Tool is one tool of the surface (the contract is domain/tools.Tool).
type Tool = tools.Tool

// Code is a stable error code this package adds to the adapters' own (which pass through
// unchanged: read_required, stale_read, context_mismatch, identical_replay, not_found,
// invalid_arguments, unavailable, exec_failed, ...). Codes reach the persisted results, so
// they never change meaning.
type Code string

const (
	// CodeCancelled: the call was stopped before it had any effect (the context ended).
	CodeCancelled Code = "cancelled"
	// CodeInterrupted: a shell command was killed because the context ended while it ran;
	// what it had done by then is unknown (OutcomeUncertain).
	CodeInterrupted Code = "interrupted"
	// CodeTimedOut: a shell command was still running when its hard limit (timeoutMs) ran
	// out and was killed there; what it had done by then is unknown (OutcomeUncertain).
	CodeTimedOut Code = "timed_out"
	// CodeGuardFailed: the shell command's process guard failed (exit 125 reported by the
	// guard itself); whether the command ran is unknown (OutcomeUncertain, never replayed).
	CodeGuardFailed Code = "guard_failed"
	// CodeUnavailable: the capability is not wired in this session (background shell
	// without a BackgroundStarter). The adapters use the same word for rg or bash missing.
	CodeUnavailable Code = "unavailable"
	// CodeFailed: an I/O or implementation failure with no more specific code; nothing
	// was changed.
	CodeFailed Code = "failed"
	// CodeArtifactFailed: output over the caps could not be stored, so it cannot be shown
	// (a read-only call is then an error; a shell command that ran stays completed).
	CodeArtifactFailed Code = "artifact_failed"
	// CodeArtifactCapReached: a shell command's output reached the per-call disk cap
	// (tool_output.max_artifact_bytes) or what the session's cap had left, so Zuno stopped the
	// command; the first bytes are kept and the result says where, how many and their digest
	// (OutcomeUncertain: the command was stopped while it ran).
	CodeArtifactCapReached Code = "artifact_cap_reached"
	// CodeSessionArtifactCap: the session's withheld output and background logs already
	// fill tool_output.max_session_artifact_bytes; the command was not run.
	CodeSessionArtifactCap Code = "session_artifact_cap"
	// CodeBackgroundFailed: the BackgroundStarter refused or failed to start the command.
	CodeBackgroundFailed Code = "background_failed"
	// CodeReportExists: report_write's path is taken (the same call id and name again);
	// reports are never overwritten.
	CodeReportExists Code = "report_exists"
	// CodeUnsafeReportPath: .zuno or .zuno/reports is a symbolic link or not a directory.
	CodeUnsafeReportPath Code = "unsafe_report_path"
	// CodeUncertain is files.UncertainError's code, repeated here for readers of this
	// package: writing began and then failed.
	CodeUncertain Code = Code(files.CodeUncertain)
)

// Defaults and bounds.
const (
	DefaultMaxBytes     = 51200 // tool_output.max_bytes
	DefaultMaxLines     = 2000  // tool_output.max_lines
	DefaultShellTimeout = 2 * time.Minute
	MaxShellTimeout     = 10 * time.Minute
)

// Config is what a Set is built from.
type Config struct {
	// Root is the workspace root.
	Root string
	// ArtifactDir is where withheld output is stored; it is created on first use. Required:
	// the artifact paths are persisted on results, so the host decides where they live.
	ArtifactDir string
	// SessionID names the session (report_write's file names are derived from it when an
	// Invocation carries none).
	SessionID string
	// MaxBytes and MaxLines are tool_output.max_bytes / max_lines; 0 means the defaults.
	MaxBytes, MaxLines int
	// MaxArtifactBytes bounds the disk one shell command's output may take
	// (tool_output.max_artifact_bytes), MaxSessionArtifactBytes what ArtifactDir and
	// UsageDirs may hold together (tool_output.max_session_artifact_bytes); 0: the defaults
	// (domain/bounds). UsageDirs are the session's other output directories (background logs).
	MaxArtifactBytes, MaxSessionArtifactBytes int64
	UsageDirs                                 []string
	// ShellTimeout is a shell call's timeout when it names none; 0 means 2 minutes. A call
	// may ask for up to MaxShellTimeout with timeoutMs.
	ShellTimeout time.Duration
	// RG is the rg executable; "" looks rg up in PATH (on first use, not here).
	RG string
	// Background starts background shell commands; nil makes shell's background option
	// answer "unavailable".
	Background BackgroundStarter
	// EnvExclude are shell.env.exclude's patterns: host variables withheld from shell
	// commands on top of the ZUNO_* namespace (docs/tools.md). The host gives the same list
	// to the background manager (bg.WithEnvExclude).
	EnvExclude []string
	// Sandbox is how the session's shell runs (adapters/sandbox.Assemble builds the parts);
	// nil runs commands natively with no recorded resolution.
	Sandbox *ShellSandbox
	// GitPreflightBudget is the time all the repository reads of one shell call's git
	// pre-flight share; 0 is 30 s (docs/shell-execution.md).
	GitPreflightBudget time.Duration
	// Gone, when set, opens the tools over a Root that no longer exists, for a replay
	// (docs/replay.md, "A workspace that is gone"): declarations, validation and per-session
	// state work, paths inside Root are authorised by their spelling and reported to Gone, and
	// no tool can run (files.Detached).
	Gone func(path string)
	// Protected are the protected paths (sandbox.Protections, the list the shell's sandbox
	// mounts): read, write and apply_patch refuse to change any, or to read a hidden one.
	Protected []sandbox.Protection
	// Editor, when set, is the editor's file system (docs/acp.md): read, write and apply_patch
	// take and give a file's bytes through it once the path is placed and checked. Never
	// with Gone: a replay runs no tool.
	Editor *tools.Editor
	// ReadOnly: the user asked for sandbox.mode read-only. write, apply_patch and
	// report_write then refuse (sandbox_read_only). An agent's read-only contract is not
	// this: it hides write and apply_patch and keeps report_write (docs/sandbox.md).
	ReadOnly bool
}

// ShellSandbox is the session's sandbox as the shell tool uses it.
type ShellSandbox struct {
	// Resolution is recorded on the shell's call events (the shell tool's Sandbox method).
	Resolution sandbox.Resolution
	// Launcher wraps every foreground command; the host gives the same one to the
	// background manager (bg.WithLauncher). nil runs bash directly.
	Launcher shell.Launcher
	// Refused, when set, is why the shell is not assembled: the Set offers no shell tool and
	// ShellRefusal returns it (a *sandbox.Refusal's message is written for the user).
	Refused error
}

// BackgroundStarter starts a shell command that outlives the call. The host owns the task:
// its output, completion and cancellation go through the bg tool.
type BackgroundStarter interface {
	StartBackground(ctx context.Context, req BackgroundRequest) (taskID string, err error)
}

// BackgroundRequest is a background shell command, already validated.
type BackgroundRequest struct {
	Command string
	// Dir is the absolute working directory, resolved inside the workspace root.
	Dir        string
	ExitPolicy shell.ExitPolicy
	SessionID  string
	CallID     string
}

// Set is the tools of one session over one workspace.
type Set struct {
	cfg      Config
	root     string // absolute root as configured
	realRoot string // root with symbolic links resolved
	ws       *files.Workspace
	search   *search.Searcher
	shell    *shell.Runner
	art      *artifacts
	tools    []Tool
}

// New builds the tools of one session. It checks the configuration and the root; it does
// not look for rg (glob and grep discover it lazily, so a machine without rg still works).
func New(cfg Config) (*Set, error) {
	if cfg.Root == "" {
		return nil, errors.New("toolset: Config.Root is required")
	}
	if cfg.ArtifactDir == "" {
		return nil, errors.New("toolset: Config.ArtifactDir is required (withheld output is stored there)")
	}
	if cfg.MaxBytes < 0 || cfg.MaxLines < 0 {
		return nil, fmt.Errorf("toolset: MaxBytes (%d) and MaxLines (%d) must not be negative", cfg.MaxBytes, cfg.MaxLines)
	}
	if cfg.ShellTimeout < 0 || cfg.ShellTimeout > MaxShellTimeout {
		return nil, fmt.Errorf("toolset: ShellTimeout %v is outside 0..%v", cfg.ShellTimeout, MaxShellTimeout)
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxLines == 0 {
		cfg.MaxLines = DefaultMaxLines
	}
	if cfg.ShellTimeout == 0 {
		cfg.ShellTimeout = DefaultShellTimeout
	}
	if cfg.MaxArtifactBytes < 0 || cfg.MaxSessionArtifactBytes < 0 {
		return nil, fmt.Errorf("toolset: MaxArtifactBytes (%d) and MaxSessionArtifactBytes (%d) must not be negative", cfg.MaxArtifactBytes, cfg.MaxSessionArtifactBytes)
	}
	cfg.MaxArtifactBytes = bounds.ArtifactBytes.Effective(cfg.MaxArtifactBytes)
	cfg.MaxSessionArtifactBytes = bounds.SessionBytes.Effective(cfg.MaxSessionArtifactBytes)
	artDir, err := filepath.Abs(cfg.ArtifactDir)
	if err != nil {
		return nil, fmt.Errorf("toolset: artifact dir: %w", err)
	}
	ws, realRoot, srch, err := openRoot(cfg)
	if err != nil {
		return nil, err
	}
	ws.Protected = cfg.Protected
	if cfg.Gone == nil {
		ws.Editor = cfg.Editor
	}
	srch.RG, srch.MaxBytes, srch.MaxLines = cfg.RG, cfg.MaxBytes, cfg.MaxLines
	s := &Set{
		cfg:      cfg,
		root:     ws.Root,
		realRoot: realRoot,
		ws:       ws,
		search:   srch,
		shell: &shell.Runner{Root: ws.Root, MaxBytes: cfg.MaxBytes, MaxLines: cfg.MaxLines, Exclude: cfg.EnvExclude,
			SpoolDir: artDir},
		art: &artifacts{dir: artDir, maxBytes: cfg.MaxBytes, maxLines: cfg.MaxLines},
	}
	s.tools = []Tool{&readTool{s}, &globTool{s}, &grepTool{s}, &writeTool{s}, &applyPatchTool{s}}
	if sb := cfg.Sandbox; sb == nil || sb.Refused == nil {
		if sb != nil {
			s.shell.Launcher = sb.Launcher
		}
		s.tools = append(s.tools, &shellTool{s})
	}
	s.tools = append(s.tools, &reportTool{s})
	return s, nil
}

// openRoot opens the workspace and the searcher over cfg.Root: held by handle, or detached
// from a root that is gone (Config.Gone), which nothing then reads.
func openRoot(cfg Config) (*files.Workspace, string, *search.Searcher, error) {
	if cfg.Gone != nil {
		ws, err := files.Detached(cfg.Root, cfg.Gone)
		if err != nil {
			return nil, "", nil, fmt.Errorf("toolset: %w", err)
		}
		return ws, ws.Root, &search.Searcher{Root: ws.Root}, nil
	}
	ws, err := files.New(cfg.Root)
	if err != nil {
		return nil, "", nil, fmt.Errorf("toolset: %w", err)
	}
	realRoot, err := filepath.EvalSymlinks(ws.Root)
	if err != nil {
		return nil, "", nil, fmt.Errorf("toolset: workspace root: %w", err)
	}
	srch, err := search.New(cfg.Root)
	if err == nil {
		err = srch.Protect(cfg.Protected)
	}
	if err != nil {
		return nil, "", nil, fmt.Errorf("toolset: %w", err)
	}
	return ws, realRoot, srch, nil
}

// Tools returns read, glob, grep, write, apply_patch, shell and report_write, in that order;
// shell is left out when the sandbox refused to assemble it (ShellRefusal says why).
func (s *Set) Tools() []Tool { return append([]Tool(nil), s.tools...) }

// ShellRefusal is why the shell tool is not offered (nil when it is): the caller shows it to
// the user and on the transcript.
func (s *Set) ShellRefusal() error {
	if s.cfg.Sandbox == nil {
		return nil
	}
	return s.cfg.Sandbox.Refused
}

// Credentials is the session's read-credential store (what read issued, what write and
// apply_patch check).
func (s *Set) Credentials() *files.Credentials { return s.ws.Credentials }

// Policies of the surface (side effect, replay and concurrency; see "Declarations" in
// docs/tools.md): the read-only tools may be retried and may overlap; everything that
// changes state keeps the zero Policy, the strictest.
var (
	readOnlyPolicy = tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}
	mutatingPolicy = tools.Policy{} // SideEffecting, Never, Exclusive
)

// readOnlyRefusal is the answer of a tool that writes under the user's read-only sandbox
// mode: the shell cannot write there (the OS refuses), so neither can the file tools.
func (s *Set) readOnlyRefusal(tool string) (tools.Result, bool) {
	if !s.cfg.ReadOnly {
		return tools.Result{}, false
	}
	err := domain.NewError(sandbox.CodeReadOnlyMode,
		fmt.Sprintf("%s is refused: the sandbox mode is %s, which the user chose, so no tool may write", tool, sandbox.ModeReadOnly),
		"report what you would change instead; the user can run again with --sandbox workspace-write to allow writes")
	return failure(tool, err, true), true
}
