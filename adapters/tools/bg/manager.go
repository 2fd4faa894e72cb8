// Package bg runs Zuno's background commands and reads output back in
// bounded windows: the output of a background task (bg output, bg wait) and
// output withheld from the conversation for crossing tool_output caps
// (bg artifact). Both share one cursor contract: cursor is an absolute byte
// offset, a window reports where it starts (windowFrom) and where the next
// one starts (cursor), and a limit is clamped, never rejected.
//
// A task keeps its most recent 2 MiB in memory and its complete output, raw,
// in a log file, so the start of a long run stays readable. Tasks run in their
// own process group, outlive the tool call that started them, and are stopped
// as a group by Cancel or Close.
package bg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/shell"
)

// StartRequest is one background command.
type StartRequest struct {
	// Command runs as `bash [options] -c Command` (shell.Argv).
	Command string
	// Dir is the working directory, resolved like a shell call's.
	Dir string
	// Env holds KEY=VALUE entries applied after scrubbing ZUNO_*.
	Env        []string
	ExitPolicy shell.ExitPolicy
	// SessionID and CallID record which call started the task.
	SessionID, CallID string
}

// TaskInfo is a snapshot of one task.
type TaskInfo struct {
	ID           string     `json:"taskID"`
	SessionID    string     `json:"sessionID,omitempty"`
	CallID       string     `json:"callID,omitempty"`
	Command      string     `json:"command"`
	Dir          string     `json:"dir"`
	LogPath      string     `json:"logPath"`
	Status       Status     `json:"status"`
	Started      time.Time  `json:"started"`
	Ended        *time.Time `json:"ended,omitempty"`
	TotalWritten int64      `json:"totalWritten"`
	ExitCode     *int       `json:"exitCode,omitempty"`
	Signal       string     `json:"signal,omitempty"`
	// GuardFailed: the command's guard failed (exit 125 from the guard itself): whether the
	// command ran and what it changed is unknown. NeverStarted: the guard could not start the
	// program (126, 127). See shell.Result.
	GuardFailed  bool `json:"guardFailed,omitempty"`
	NeverStarted bool `json:"neverStarted,omitempty"`
	// OutputDetached: a process outside the group kept the output pipe open
	// after the task ended; capture stopped there.
	OutputDetached bool `json:"outputDetached,omitempty"`
}

// Option configures a Manager.
type Option func(*Manager)

// WithArtifactRoots sets the directories ReadArtifact may read from.
func WithArtifactRoots(roots ...string) Option {
	return func(m *Manager) { m.ArtifactRoots = append(m.ArtifactRoots, roots...) }
}

// WithEnvExclude withholds names matching shell.env.exclude's patterns from every task, on
// top of the ZUNO_* namespace (shell.Environ; docs/tools.md).
func WithEnvExclude(patterns []string) Option {
	return func(m *Manager) { m.runner.Exclude = patterns }
}

// WithLauncher runs every task through the session's sandbox launcher (see
// shell.Launcher); nil runs bash directly.
func WithLauncher(l shell.Launcher) Option {
	return func(m *Manager) { m.runner.Launcher = l }
}

// Manager owns the background tasks of one process. It is safe for
// concurrent use.
type Manager struct {
	// ArtifactRoots are the directories whose files ReadArtifact serves. Set
	// them (or use WithArtifactRoots) before the manager is shared.
	ArtifactRoots []string

	dir   string
	grace time.Duration // SIGTERM to SIGKILL
	// runner places commands: its Bash, Root and BaseEnv are used, not its caps (read-back
	// is already bounded). The zero Runner: the shell tool hands over an absolute Dir
	// already resolved inside the workspace.
	runner   shell.Runner
	ringSize int

	mu     sync.Mutex
	tasks  map[string]*task
	seq    uint64
	closed bool
}

// NewManager returns a manager that writes full task logs to dir (created if
// missing).
func NewManager(dir string, opts ...Option) (*Manager, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("bg: log dir: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("bg: log dir: %w", err)
	}
	m := &Manager{dir: abs, grace: shell.DefaultKillGrace, ringSize: RingSize, tasks: map[string]*task{}}
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// Start launches a background command. The process is not bound to ctx: it
// outlives the call that started it and ends on its own, by Cancel, or by
// Close. ctx only stops a start that was already abandoned.
func (m *Manager) Start(ctx context.Context, req StartRequest) (TaskInfo, error) {
	l, err := m.prepare(ctx, req)
	if err != nil {
		return TaskInfo{}, err
	}
	// The child holds its own copies once started; every other path ends here too.
	defer shell.CloseFiles(l.files)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return TaskInfo{}, &Error{Code: CodeUnavailable, Message: "the background manager is shut down; no new tasks start"}
	}
	t, pr, err := m.startLocked(req, l)
	if err != nil {
		return TaskInfo{}, err
	}
	m.tasks[t.id] = t
	readDone := make(chan struct{})
	go t.pump(pr, readDone)
	go t.monitor(pr, readDone)
	return t.info(), nil
}

// launch is a background command ready to start.
type launch struct {
	argv  []string
	files []*os.File
	dir   string
	env   []string
}

// prepare checks the request and builds the command through the session's launcher.
func (m *Manager) prepare(ctx context.Context, req StartRequest) (launch, error) {
	args, err := checkStart(req)
	if err != nil {
		return launch{}, err
	}
	var l launch
	if l.dir, err = m.runner.ResolveDir(req.Dir); err != nil {
		return l, &Error{Code: CodeInvalidArguments, Field: "dir", Message: "the working directory is not usable; give an existing directory inside the workspace", Err: err}
	}
	if l.dir == "" {
		// Inherited directory: record it, so List says where the task runs.
		if wd, err := os.Getwd(); err == nil {
			l.dir = wd
		}
	}
	bash := m.runner.Bash
	if bash == "" {
		bash = "bash"
	}
	bashPath, err := exec.LookPath(bash)
	if err != nil {
		return l, &Error{Code: CodeUnavailable, Message: "bash is not available", Err: err}
	}
	if err := ctx.Err(); err != nil {
		return l, &Error{Code: CodeUnavailable, Message: "the call was cancelled before the command started", Err: err}
	}
	l.env, _ = m.runner.Environ()
	l.env = append(l.env, req.Env...)
	if l.argv, l.files, err = m.runner.Launch(bashPath, args, l.dir); err != nil {
		return l, &Error{Code: CodeSandboxFailed, Message: "the sandbox could not prepare the command; nothing ran", Err: err}
	}
	return l, nil
}

// checkStart refuses a request that names no runnable command and returns bash's arguments.
func checkStart(req StartRequest) ([]string, error) {
	if strings.TrimSpace(req.Command) == "" {
		return nil, invalid("command", "the command is empty; give the command to run")
	}
	if strings.IndexByte(req.Command, 0) >= 0 {
		return nil, invalid("command", "the command contains a NUL byte; remove it")
	}
	for _, kv := range req.Env {
		if !strings.Contains(kv, "=") || strings.IndexByte(kv, 0) >= 0 {
			return nil, invalid("env", "env entry %q is not KEY=VALUE", kv)
		}
	}
	policy := req.ExitPolicy
	if policy == "" {
		policy = shell.PolicyPipefail
	}
	args, err := shell.Argv(policy, req.Command)
	if err != nil {
		return nil, invalid("exitPolicy", "unknown exitPolicy %q; use pipefail, all or last", policy)
	}
	return args, nil
}

// startLocked draws the task's id, opens its log and starts the command; m.mu is held.
func (m *Manager) startLocked(req StartRequest, l launch) (*task, *os.File, error) {
	id, err := m.newIDLocked()
	if err != nil {
		return nil, nil, &Error{Code: CodeExecFailed, Message: "could not draw a task id", Err: err}
	}
	logPath := filepath.Join(m.dir, id+".log")
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, &Error{Code: CodeExecFailed, Message: "could not create the task's log file", Err: err}
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		logf.Close()
		return nil, nil, &Error{Code: CodeExecFailed, Message: "output pipe", Err: err}
	}
	cmd, guard, err := shell.GuardedCommand(l.argv, l.files)
	if err != nil {
		shell.CloseFiles(l.files)
		pr.Close()
		pw.Close()
		logf.Close()
		_ = os.Remove(logPath)
		return nil, nil, &Error{Code: CodeExecFailed, Message: "could not prepare the command's guard", Err: err}
	}
	cmd.Dir, cmd.Env = l.dir, l.env
	cmd.Stdout = pw // one pipe for both streams keeps their write order
	cmd.Stderr = pw
	cmd.SysProcAttr = m.runner.ProcAttr()
	err = cmd.Start()
	shell.CloseFiles(l.files)
	if err != nil {
		guard.Abandon()
		pr.Close()
		pw.Close()
		logf.Close()
		_ = os.Remove(logPath)
		return nil, nil, &Error{Code: CodeExecFailed, Message: "could not start the command's guard", Err: err}
	}
	guard.Started()
	pw.Close()
	m.seq++
	t := &task{
		id: id, seq: m.seq, sessionID: req.SessionID, callID: req.CallID,
		command: req.Command, dir: l.dir, logPath: logPath, started: time.Now(),
		pgid: cmd.Process.Pid, grace: m.grace, cmd: cmd, guard: guard, log: logf,
		exited: make(chan struct{}), done: make(chan struct{}),
		ring: newRing(m.ringSize),
	}
	return t, pr, nil
}

// newIDLocked draws "bg_" plus 12 hex digits, unique among this manager's
// tasks and log files.
func (m *Manager) newIDLocked() (string, error) {
	var b [6]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		id := "bg_" + hex.EncodeToString(b[:])
		if _, dup := m.tasks[id]; dup {
			continue
		}
		if _, err := os.Lstat(filepath.Join(m.dir, id+".log")); err == nil {
			continue
		}
		return id, nil
	}
}

func (m *Manager) task(id string) (*task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t, ok := m.tasks[id]; ok {
		return t, nil
	}
	if strings.TrimSpace(id) == "" {
		return nil, invalid("taskID", "taskID is required; list tasks with action list to see their ids")
	}
	return nil, notFound("taskID", "no background task has id %q; list tasks with action list to see the valid ids", id)
}

// Output returns one window of a task's output. Without a cursor it is the
// latest window, ending at totalWritten.
func (m *Manager) Output(taskID string, cursor *int64, limit int) (Window, error) {
	t, err := m.task(taskID)
	if err != nil {
		return Window{}, err
	}
	return t.window(cursor, limit)
}

// Wait waits until the task ends, timeout passes (zero or less: no timeout)
// or ctx is done, then returns the window Output would; its Status says
// whether the task is still running. When ctx ends the wait, the window is
// returned together with ctx's error.
func (m *Manager) Wait(ctx context.Context, taskID string, timeout time.Duration, cursor *int64, limit int) (Window, error) {
	t, err := m.task(taskID)
	if err != nil {
		return Window{}, err
	}
	if cursor != nil && *cursor < 0 {
		// Refuse now rather than after the wait; a cursor past the current
		// end may become valid while waiting, so that is checked later.
		return Window{}, invalid("cursor", "cursor %d is negative; pass a cursor from an earlier window, or omit it", *cursor)
	}
	var timeoutC <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		timeoutC = timer.C
	}
	select {
	case <-t.done:
	case <-timeoutC:
	case <-ctx.Done():
		w, werr := t.window(cursor, limit)
		if werr != nil {
			return Window{}, werr
		}
		return w, ctx.Err()
	}
	return t.window(cursor, limit)
}

// List returns every task, oldest first.
func (m *Manager) List() []TaskInfo {
	m.mu.Lock()
	ts := make([]*task, 0, len(m.tasks))
	for _, t := range m.tasks {
		ts = append(ts, t)
	}
	m.mu.Unlock()
	sort.Slice(ts, func(i, j int) bool { return ts[i].seq < ts[j].seq })
	out := make([]TaskInfo, len(ts))
	for i, t := range ts {
		out[i] = t.info()
	}
	return out
}

// Cancel stops a task's whole process group (SIGTERM, SIGKILL after the
// grace) and returns once it has settled. On a task that already ended it
// reports the task as it is, without error.
func (m *Manager) Cancel(taskID string) (TaskInfo, error) {
	t, err := m.task(taskID)
	if err != nil {
		return TaskInfo{}, err
	}
	t.stop(StatusCancelled)
	return t.info(), nil
}

// Close stops every running task (status killed) and refuses new ones. The
// logs stay on disk and the tasks stay readable.
func (m *Manager) Close() error {
	m.mu.Lock()
	m.closed = true
	ts := make([]*task, 0, len(m.tasks))
	for _, t := range m.tasks {
		ts = append(ts, t)
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range ts {
		wg.Go(func() { t.stop(StatusKilled) })
	}
	wg.Wait()
	return nil
}
