// Package shell is the execution core of Zuno's shell tool: it runs one
// model-assembled command under bash in its own process group, binds the
// command's whole process tree to the call (timeout, cancellation and exit
// all stop the group), scrubs Zuno's private environment namespace, captures
// the raw combined output in order, and reports whether that output exceeds
// the inline caps so the caller can withhold it to an artifact.
//
// The policies that interpret the result (verification receipts, exit-policy
// analysis of the command text) are pure code elsewhere; this package only
// executes and reports facts.
package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ExitPolicy selects which shell options decide the command's exit status
// (the shell tool's exitPolicy argument).
type ExitPolicy string

const (
	// PolicyPipefail (default): any failing pipeline stage fails the command.
	PolicyPipefail ExitPolicy = "pipefail"
	// PolicyAll additionally stops at the first failing command (errexit).
	PolicyAll ExitPolicy = "all"
	// PolicyLast is the POSIX default: only the last stage decides.
	PolicyLast ExitPolicy = "last"
)

// Defaults: tool_output.max_bytes / max_lines (see "Output caps and artifacts" in
// docs/tools.md).
const (
	DefaultMaxBytes  = 51200
	DefaultMaxLines  = 2000
	DefaultKillGrace = 2 * time.Second
)

// Request is one shell invocation.
type Request struct {
	// Command is the model-assembled command text, run as `bash -c Command`.
	Command string
	// Dir is the working directory. Relative paths resolve against the
	// Runner's Root (or the process working directory when Root is empty).
	Dir string
	// Timeout is the hard limit; zero means only ctx bounds the run.
	Timeout time.Duration
	// Env holds KEY=VALUE entries applied after scrubbing: this is the host
	// hook through which a deployment may deliberately put values back.
	Env []string
	// ExitPolicy defaults to PolicyPipefail.
	ExitPolicy ExitPolicy
	// KillGrace is the delay between SIGTERM and SIGKILL; zero uses the
	// Runner's (or DefaultKillGrace).
	KillGrace time.Duration
	// MaxKeep bounds the bytes of output kept, in memory and on disk (0: no bound): the
	// artifact disk cap (docs/config.md, "Bounds"). A command whose output reaches it is
	// stopped like a timed-out one, and Result.Capped says so.
	MaxKeep int64
	// WatchPaths are statically determined paths from the command text; each
	// is observed before and after the run and reported in WrittenPaths only
	// if the two observations differ (writtenPaths is a lower bound; see docs/tools.md).
	WatchPaths []string
}

// Withheld says the output crossed an inline cap. The full output is still
// in Result.Output, or in the file Result.Spool when it is over the byte cap;
// the caller stores it as an artifact and shows a notice.
type Withheld struct {
	Bytes    int64  `json:"bytes"`
	Lines    int    `json:"lines"`
	Limit    string `json:"limit"` // "max_bytes" or "max_lines" (the first one crossed, bytes checked first)
	MaxBytes int    `json:"maxBytes"`
	MaxLines int    `json:"maxLines"`
}

// Result is a settled run. A timed-out or cancelled command is a Result, not
// an error.
type Result struct {
	Argv       []string   `json:"argv"`
	Dir        string     `json:"dir"`
	ExitPolicy ExitPolicy `json:"exitPolicy"`

	// Output is every byte the command wrote to stdout and stderr, raw and
	// in write order (both streams share one pipe), when there are at most
	// MaxBytes of them. More is never held in memory: it is all in Spool.
	Output []byte `json:"-"`
	// Spool is the file holding every byte of an output over MaxBytes ("" when
	// Output holds it). It belongs to the caller, which keeps it as the
	// artifact or removes it (RemoveSpool).
	Spool string `json:"-"`
	// SpoolErr is why an output over MaxBytes could not be kept on disk: the
	// bytes were counted but are lost, and Spool is "".
	SpoolErr   error     `json:"-"`
	TotalBytes int64     `json:"totalBytes"`
	TotalLines int       `json:"totalLines"`
	Withheld   *Withheld `json:"withheldOutput,omitempty"`
	// Capped: the output reached Request.MaxKeep, so Zuno stopped the command; Kept bytes
	// (the first ones) are in Output or Spool, the rest of TotalBytes was dropped.
	Capped bool  `json:"capped,omitempty"`
	Kept   int64 `json:"kept,omitempty"`
	// OutputDetached is set when some process outside the group kept the
	// output pipe open after the group was stopped; capture was abandoned.
	OutputDetached bool `json:"outputDetached,omitempty"`

	// HasExitCode: the command (or, with GuardFailed or NeverStarted, its guard) exited
	// with ExitCode. A command that itself exits 125, 126 or 127 keeps its own status: only
	// the guard's report, which the command cannot write, makes a reserved code the guard's.
	HasExitCode bool `json:"hasExitCode"`
	ExitCode    int  `json:"exitCode"` // meaningful only if HasExitCode
	// Signal names the signal that killed the command ("SIGKILL"): it has no exit code and
	// its end is no verdict on the work.
	Signal string `json:"signal,omitempty"`
	// GuardFailed: exit 125 reported by the guard itself. Whether the command ran and what it
	// changed is unknown: an uncertain outcome, never replayed (docs/shell-execution.md).
	GuardFailed bool `json:"guardFailed,omitempty"`
	// NeverStarted: the guard could not start the program (126: it exists but cannot be
	// executed; 127: not found). Nothing ran, so the code is recorded without authority.
	NeverStarted bool `json:"neverStarted,omitempty"`
	// GuardDiagnostic is the guard's own line when GuardFailed or NeverStarted; the same
	// line is in the output.
	GuardDiagnostic string `json:"guardDiagnostic,omitempty"`

	Duration time.Duration `json:"duration"`
	// TimedOut: the hard limit (Request.Timeout) ran out. Cancelled: the context ended.
	TimedOut  bool `json:"timedOut"`
	Cancelled bool `json:"cancelled"`
	// Killed: Zuno's stop (timeout or cancellation) reached a command that had not ended;
	// whatever status it then shows is the kill's, not a verdict.
	Killed bool `json:"killed"`
	// ExitedBeforeCancel: the call was cancelled or timed out, but the command had already
	// ended with its own status; that status stands and the run is only marked cancelled.
	ExitedBeforeCancel bool `json:"exitedBeforeCancel,omitempty"`
	// Unsettled: the command reported a status but the output capture failed (SpoolErr), so
	// the run cannot be settled: under a cancellation or timeout it counts as no verdict.
	Unsettled bool `json:"unsettled,omitempty"`
	// Authoritative reports whether the exit status is the command's own verdict: false
	// when Zuno killed it, when a signal killed it, when the guard failed or never started
	// the program, and for a stopped call whose capture could not be settled.
	Authoritative bool `json:"authoritative"`

	WrittenPaths []string `json:"writtenPaths,omitempty"`
}

// InlineText is the text shown inline: "(no output)" for an empty capture,
// the output when it fits the caps, and "" when it is withheld (the caller
// renders its own notice pointing at the artifact).
func (r Result) InlineText() string {
	if r.Withheld != nil {
		return ""
	}
	if len(r.Output) == 0 {
		return "(no output)"
	}
	return string(r.Output)
}

// Code is a stable error category.
type Code string

const (
	CodeInvalidArguments Code = "invalid_arguments"
	CodeUnavailable      Code = "unavailable"
	CodeExecFailed       Code = "exec_failed"
	// CodeSandboxFailed: the session's launcher could not wrap the command; nothing ran
	// (never a reason to run it unconfined instead).
	CodeSandboxFailed Code = "sandbox_failed"
)

// Launcher wraps the argv of a command before it is executed: the session's sandbox
// (adapters/sandbox: bubblewrap, or native, which returns argv unchanged). dir is the
// resolved working directory.
type Launcher interface {
	Wrap(argv []string, dir string) ([]string, error)
}

// FileLauncher is a Launcher whose wrapped command needs open files (the sandbox's
// network-deny system-call filter): WrapFiles returns the argv and the files it expects at
// fd 3, 4, ... of the launched process (exec.Cmd.ExtraFiles, in this order). The runner
// prefers WrapFiles and closes the files once the command started or failed to; a
// FileLauncher's Wrap refuses commands that need files (fail closed).
type FileLauncher interface {
	Launcher
	WrapFiles(argv []string, dir string) ([]string, []*os.File, error)
}

// StatusLauncher is a FileLauncher that runs the command under a status reporter of its own,
// because the wrapped program's exit status does not tell how the command ended (bubblewrap
// with a private pid namespace exits 128+N for a command killed by signal N, the same number
// a command may exit with). WrapStatus returns, besides WrapFiles' argv and files, the read
// end of the reporter's pipe: one line in the guard's report format (docs/sandbox.md, "How
// a confined command ended"). The runner reads it once the command ended, and closes it.
type StatusLauncher interface {
	FileLauncher
	WrapStatus(argv []string, dir string) ([]string, []*os.File, *os.File, error)
}

// SessionLauncher is a Launcher whose commands start in a session of their own (setsid:
// no controlling terminal, so nothing inside can push input into the user's terminal). The
// leader's process group is still the one Zuno signals.
type SessionLauncher interface {
	Launcher
	NewSession() bool
}

// Error is a typed failure to run the command at all.
type Error struct {
	Code Code
	Msg  string
	Err  error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("shell: %s: %s: %v", e.Code, e.Msg, e.Err)
	}
	return fmt.Sprintf("shell: %s: %s", e.Code, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the Code of a *Error in err's chain, or "".
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Runner holds configuration shared by calls. The zero value is usable.
type Runner struct {
	// Bash is the interpreter path; empty looks up "bash" in PATH.
	Bash string
	// Root, when set, is the workspace root: Dir must resolve inside it.
	Root string
	// BaseEnv returns the host environment; nil uses os.Environ.
	BaseEnv func() []string
	// Exclude are shell.env.exclude's name patterns, withheld on top of the ZUNO_*
	// namespace (Environ; docs/tools.md).
	Exclude []string
	// MaxBytes / MaxLines are the inline caps; zero uses the defaults.
	MaxBytes, MaxLines int
	// KillGrace is the default SIGTERM→SIGKILL delay.
	KillGrace time.Duration
	// Launcher wraps every command (the session's sandbox); nil runs bash directly.
	Launcher Launcher
	// SpoolDir is where output over MaxBytes is written as it arrives (Result.Spool);
	// the artifact directory, so keeping it is a rename. "" is the system's temporary
	// directory.
	SpoolDir string
}

// RemoveSpool removes the result's spool file, if any: for a caller that does not keep it.
func (r Result) RemoveSpool() {
	if r.Spool != "" {
		os.Remove(r.Spool)
	}
}

// launch is the argv that runs bash with args in dir, wrapped by the Launcher if any, and
// the files the wrapped command expects at fd 3, ... (exec.Cmd.ExtraFiles); the caller
// closes them (CloseFiles) once the command started or could not.
// With withStatus, a StatusLauncher's reporter pipe is returned too (nil otherwise); the
// caller reads and closes it.
func (r *Runner) launch(bashPath string, args []string, dir string, withStatus bool) ([]string, []*os.File, *os.File, error) {
	argv := append([]string{bashPath}, args...)
	if r.Launcher == nil {
		return argv, nil, nil, nil
	}
	var wrapped []string
	var files []*os.File
	var status *os.File
	var err error
	if sl, ok := r.Launcher.(StatusLauncher); ok && withStatus {
		wrapped, files, status, err = sl.WrapStatus(argv, dir)
	} else if fl, ok := r.Launcher.(FileLauncher); ok {
		wrapped, files, err = fl.WrapFiles(argv, dir)
	} else {
		wrapped, err = r.Launcher.Wrap(argv, dir)
	}
	if err != nil || len(wrapped) == 0 {
		CloseFiles(files)
		closeStatus(status)
	}
	if err != nil {
		return nil, nil, nil, &Error{Code: CodeSandboxFailed, Msg: "the sandbox could not prepare the command; nothing ran", Err: err}
	}
	if len(wrapped) == 0 {
		return nil, nil, nil, &Error{Code: CodeSandboxFailed, Msg: "the sandbox returned an empty command; nothing ran"}
	}
	return wrapped, files, status, nil
}

// CloseFiles closes the parent's copies of a launch's extra files.
func CloseFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// Argv returns the interpreter arguments for a policy (after the bash path).
func Argv(policy ExitPolicy, command string) ([]string, error) {
	switch policy {
	case "", PolicyPipefail:
		return []string{"-o", "pipefail", "-c", command}, nil
	case PolicyAll:
		return []string{"-o", "pipefail", "-o", "errexit", "-c", command}, nil
	case PolicyLast:
		return []string{"-c", command}, nil
	}
	return nil, &Error{Code: CodeInvalidArguments, Msg: fmt.Sprintf("unknown exitPolicy %q (want pipefail, all or last)", policy)}
}

// ScrubEnv removes Zuno's private namespace: every name that starts with
// ZUNO_ compared case-insensitively. There is no allow list; ZUNO and AGENT
// (outside the namespace) and everything else are inherited.
func ScrubEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(strings.ToUpper(name), "ZUNO_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// CountLines counts lines as a terminal shows them: a trailing fragment
// without a newline is a line.
func CountLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

func (r *Runner) resolveDir(dir string) (string, error) {
	root := r.Root
	if root != "" {
		abs, err := filepath.Abs(root)
		if err != nil {
			return "", &Error{Code: CodeInvalidArguments, Msg: "workspace root", Err: err}
		}
		if ev, err := filepath.EvalSymlinks(abs); err == nil {
			abs = ev
		}
		root = abs
	}
	if dir == "" {
		if root != "" {
			return root, nil
		}
		return "", nil
	}
	if !filepath.IsAbs(dir) && root != "" {
		dir = filepath.Join(root, dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", &Error{Code: CodeInvalidArguments, Msg: "dir", Err: err}
	}
	ev, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", &Error{Code: CodeInvalidArguments, Msg: fmt.Sprintf("dir %q does not exist", dir), Err: err}
	}
	fi, err := os.Stat(ev)
	if err != nil || !fi.IsDir() {
		return "", &Error{Code: CodeInvalidArguments, Msg: fmt.Sprintf("dir %q is not a directory", dir), Err: err}
	}
	if root != "" && !within(root, ev) {
		return "", &Error{Code: CodeInvalidArguments, Msg: fmt.Sprintf("dir %q is outside the workspace root", dir)}
	}
	return ev, nil
}

func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// Run executes req. It returns an error only when the command could not be
// run at all; timeouts, cancellation, signals and non-zero exits are Results.
func (r *Runner) Run(ctx context.Context, req Request) (Result, error) {
	if err := checkRequest(req); err != nil {
		return Result{}, err
	}
	p, err := r.prepare(ctx, req)
	if err != nil {
		return Result{}, err
	}
	watch := observe(p.dir, r.Root, req.WatchPaths)
	st, err := r.start(p, req.MaxKeep)
	if err != nil {
		return Result{}, err
	}
	res := Result{Argv: p.argv, Dir: p.dir, ExitPolicy: p.policy}
	r.supervise(ctx, req.Timeout, p.grace, st, &res)
	res.Duration = time.Since(st.began)
	res.Output = st.out.head
	res.TotalBytes, res.TotalLines = st.out.total, st.out.lines()
	res.Capped, res.Kept = st.out.over(), st.out.kept
	res.Spool, res.SpoolErr = st.out.finish()
	res.Withheld = withheld(res.TotalBytes, res.TotalLines, r.MaxBytes, r.MaxLines)
	if err := exitStatus(st, &res); err != nil {
		return res, err
	}
	res.WrittenPaths = watch.changed()
	return res, nil
}

// checkRequest refuses a request that cannot name a command to run.
func checkRequest(req Request) error {
	switch {
	case strings.TrimSpace(req.Command) == "":
		return &Error{Code: CodeInvalidArguments, Msg: "command is empty"}
	case strings.IndexByte(req.Command, 0) >= 0:
		return &Error{Code: CodeInvalidArguments, Msg: "command contains a NUL byte"}
	case req.Timeout < 0:
		return &Error{Code: CodeInvalidArguments, Msg: "timeout is negative"}
	case req.MaxKeep < 0:
		return &Error{Code: CodeInvalidArguments, Msg: "MaxKeep is negative"}
	}
	for _, kv := range req.Env {
		if !strings.Contains(kv, "=") || strings.IndexByte(kv, 0) >= 0 {
			return &Error{Code: CodeInvalidArguments, Msg: fmt.Sprintf("env entry %q is not KEY=VALUE", kv)}
		}
	}
	return nil
}

// prepared is a command ready to start: its argv (through the launcher), directory,
// environment, the files the launcher hands it, and how long a kill waits.
type prepared struct {
	argv   []string
	files  []*os.File
	status *os.File // the launcher's status reporter (StatusLauncher), or nil
	dir    string
	env    []string
	policy ExitPolicy
	grace  time.Duration
}

func (r *Runner) prepare(ctx context.Context, req Request) (prepared, error) {
	p := prepared{policy: req.ExitPolicy, grace: req.KillGrace}
	if p.policy == "" {
		p.policy = PolicyPipefail
	}
	args, err := Argv(p.policy, req.Command)
	if err != nil {
		return p, err
	}
	if p.dir, err = r.resolveDir(req.Dir); err != nil {
		return p, err
	}
	bash := r.Bash
	if bash == "" {
		bash = "bash"
	}
	bashPath, err := lookPath(bash)
	if err != nil {
		return p, &Error{Code: CodeUnavailable, Msg: "bash is not available", Err: err}
	}
	if err := ctx.Err(); err != nil {
		return p, &Error{Code: CodeInvalidArguments, Msg: "context already done before start", Err: err}
	}
	if p.grace <= 0 {
		p.grace = r.KillGrace
	}
	if p.grace <= 0 {
		p.grace = DefaultKillGrace
	}
	p.env, _ = r.Environ()
	p.env = append(p.env, req.Env...)
	p.argv, p.files, p.status, err = r.launch(bashPath, args, p.dir, true)
	return p, err
}

// started is a running command: its guard, the reader of its one output pipe and the
// capture that reader fills.
type started struct {
	proc     *Process
	pr       *os.File
	out      *capture
	readDone chan struct{}
	began    time.Time
	stopSent time.Time // when Zuno first signalled the group to stop (zero: never)
}

// start starts the command under the session guard, or under a guard of its own where the
// session guard cannot take it (docs/shell-execution.md, "The session guard").
func (r *Runner) start(p prepared, maxKeep int64) (*started, error) {
	pr, pw, err := outputPipe()
	if err != nil {
		CloseFiles(p.files)
		closeStatus(p.status)
		return nil, &Error{Code: CodeExecFailed, Msg: "output pipe", Err: err}
	}
	maxBytes := r.MaxBytes
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	st := &started{pr: pr, out: &capture{maxBytes: maxBytes, dir: r.SpoolDir, limit: maxKeep, capped: make(chan struct{})},
		readDone: make(chan struct{}), began: time.Now()}
	run, err := r.startGuarded(p, pw, nil)
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, err
	}
	st.proc = watch(run)
	st.takeOutput()
	return st, nil
}

// takeOutput reads the output: at once, when the command has ended and nothing holds the
// pipe any more (most short commands: a session guard's report comes with its start, and
// then no goroutine is started and nothing waits to be woken), else as it comes, in the
// background. Until the guard's first reply (its report, or "pid P" after
// guard.announceAfter) nothing reads: a command that fills the pipe in its first
// milliseconds waits that long at most.
func (st *started) takeOutput() {
	select {
	case <-st.proc.Done():
		if st.out.drainReady(st.pr) {
			close(st.readDone)
			return
		}
	default:
	}
	go func() {
		defer close(st.readDone)
		st.out.drain(st.pr)
	}()
}

// supervise waits for the command, its timeout or the context; stops the whole process
// group whatever ended it, and drains the output.
func (r *Runner) supervise(ctx context.Context, timeout, grace time.Duration, st *started, res *Result) {
	var timeoutC <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	exited := false
	select {
	case <-st.proc.Done():
		exited = true
	case <-ctx.Done():
		res.Cancelled = true
	case <-timeoutC:
		res.TimedOut = true
	case <-st.out.capped:
		// The disk cap: stopped as at a timeout; Run reads Capped from the capture.
	}
	pgid := st.proc.Pgid()
	if !exited && pgid > 0 {
		// The kill may race a command that already exited: if it has, its
		// own verdict stands and it is only marked cancelled.
		select {
		case <-st.proc.Done():
		default:
			res.Killed = true
			st.stopSent = time.Now()
			st.proc.Stop(grace)
		}
	}
	// No orphans: whatever is left in the group (background jobs, a
	// grandchild that outlived bash) is stopped before the call settles.
	if pgid > 0 {
		reapGroup(pgid, grace)
	}
	select {
	case <-st.readDone:
	default:
		// No timer unless the output is still being read (takeOutput read it at once).
		t := time.NewTimer(grace + time.Second)
		select {
		case <-st.readDone:
		case <-t.C:
			// A process that left the group still holds the pipe.
			res.OutputDetached = true
			st.pr.Close()
			<-st.readDone
		}
		t.Stop()
	}
	st.pr.Close()
}

// exitStatus records how the command ended, from its guard's report; only a wait that
// failed without a process state is an error.
func exitStatus(st *started, res *Result) error {
	gs, err := st.proc.Settle()
	if err != nil {
		return err
	}
	res.HasExitCode, res.ExitCode, res.Signal = gs.HasExitCode, gs.ExitCode, gs.Signal
	res.GuardFailed, res.NeverStarted, res.GuardDiagnostic = gs.GuardFailed, gs.NeverStarted, gs.Diagnostic
	if res.Killed && !gs.StoppedLive(st.stopSent) && !gs.GuardFailed {
		// Zuno's stop found the command already ended: its own verdict stands.
		res.Killed = false
	}
	stopped := res.Cancelled || res.TimedOut
	res.ExitedBeforeCancel = stopped && !res.Killed && !res.GuardFailed
	res.Unsettled = res.SpoolErr != nil
	res.Authoritative = res.HasExitCode && !res.Killed && !res.GuardFailed && !res.NeverStarted &&
		!(stopped && res.Unsettled)
	return nil
}

func withheld(n int64, lines, maxBytes, maxLines int) *Withheld {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if maxLines <= 0 {
		maxLines = DefaultMaxLines
	}
	w := &Withheld{Bytes: n, Lines: lines, MaxBytes: maxBytes, MaxLines: maxLines}
	switch {
	case n > int64(maxBytes):
		w.Limit = "max_bytes"
	case lines > maxLines:
		w.Limit = "max_lines"
	default:
		return nil
	}
	return w
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return fmt.Sprintf("signal %d", int(s))
}
