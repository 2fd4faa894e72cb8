// Package bg runs Zuno's background commands and reads output back in
// bounded windows: the output of a background task (bg output, bg wait) and
// output withheld from the conversation for crossing tool_output caps
// (bg artifact). Both share one cursor contract: cursor is an absolute byte
// offset, a window reports where it starts (windowFrom) and where the next
// one starts (cursor), and a limit is clamped, never rejected.
//
// A task keeps its most recent 2 MiB in memory and its complete output, raw,
// in a log file, so the start of a long run stays readable. Tasks run in their
// own process group under the process's Supervisor, per session: they outlive
// the tool call and the turn that started them, are stopped as a group by Cancel
// or when the Supervisor closes, and die with the process (the guard's lifeline).
// With a Journal each task's start and completion are recorded in the session's
// log, and a later process reports a task it does not hold from that record
// (docs/tools.md, "Background commands").
package bg

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/events"
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
	// Completion is the task's completion receipt as recorded in the session's log (nil
	// while it runs, or without a journal); CompletionError says why it could not be
	// recorded.
	Completion      *events.BackgroundCompleted `json:"completion,omitempty"`
	CompletionError string                      `json:"completionError,omitempty"`
	// HeldBy names the process that ran the task when it is not this one: the task is known
	// from the log only.
	HeldBy string `json:"heldBy,omitempty"`
}

// Option configures a Manager.
type Option func(*Manager)

// WithArtifactRoots sets the directories ReadArtifact may read from.
func WithArtifactRoots(roots ...string) Option {
	return func(m *Manager) { m.ArtifactRoots = append(m.ArtifactRoots, roots...) }
}

// WithDiskCaps bounds the disk a task's log may fill (perTask) and what the session's logs
// and artifact roots may hold together (session) when a task starts; 0 is no bound
// (docs/config.md, "Bounds"). A task whose log reaches its cap is stopped (StatusCapped).
func WithDiskCaps(perTask, session int64) Option {
	return func(m *Manager) { m.maxTask, m.maxSession = perTask, session }
}

// LogDir is where the session's task logs are kept: what counts toward its disk cap beside
// the artifact roots.
func (m *Manager) LogDir() string { return filepath.Join(m.sup.cfg.Dir, m.session) }

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

// Manager is one tool surface's view of a session's background tasks: it starts them with
// the surface's sandbox and environment, and reads them back. The tasks themselves belong to
// the Supervisor, so they outlive the surface (and the turn) that started them. It is safe
// for concurrent use.
type Manager struct {
	// ArtifactRoots are the directories whose files ReadArtifact serves. Set
	// them (or use WithArtifactRoots) before the manager is shared.
	ArtifactRoots []string

	sup     *Supervisor
	session string
	// owned: the manager was made by NewManager and its supervisor is its own; Close stops
	// the tasks. A view from Supervisor.Manager closes without touching them.
	owned bool

	grace time.Duration // SIGTERM to SIGKILL
	// runner places commands: its Bash, Root and BaseEnv are used, not its caps (read-back
	// is already bounded). The zero Runner: the shell tool hands over an absolute Dir
	// already resolved inside the workspace.
	runner   shell.Runner
	ringSize int
	// maxTask and maxSession are the disk caps (WithDiskCaps; 0: none).
	maxTask, maxSession int64
}

// NewManager returns a manager of its own, with no session and no journal, that writes full
// task logs to dir (created if missing); Close stops its tasks.
func NewManager(dir string, opts ...Option) (*Manager, error) {
	sup, err := NewSupervisor(SupervisorConfig{Dir: dir})
	if err != nil {
		return nil, err
	}
	m, err := sup.Manager("", opts...)
	if err != nil {
		return nil, err
	}
	m.owned = true
	return m, nil
}

// defaultGrace is the wait from SIGTERM to SIGKILL when stopping a task.
const defaultGrace = shell.DefaultKillGrace

// Start launches a background command. The process is not bound to ctx: it
// outlives the call (and the turn) that started it and ends on its own, by Cancel, or when
// the supervisor closes. ctx only stops a start that was already abandoned. With a journal,
// the task is recorded before its command runs: a task the log does not know never runs.
func (m *Manager) Start(ctx context.Context, req StartRequest) (TaskInfo, error) {
	l, err := m.prepare(ctx, req)
	if err != nil {
		return TaskInfo{}, err
	}
	// The child holds its own copies once started; every other path ends here too. The
	// status reporter's end is the guard's once the guard exists (closing twice is harmless).
	defer shell.CloseFiles(l.files)
	launched := false
	defer func() {
		if !launched && l.status != nil {
			l.status.Close()
		}
	}()
	keep, err := m.diskBudget()
	if err != nil {
		return TaskInfo{}, err
	}
	r, err := m.reserve(req, l)
	if err != nil {
		return TaskInfo{}, err
	}
	r.keep = keep
	if err := m.recordStart(ctx, r); err != nil {
		_ = os.Remove(r.logPath)
		return TaskInfo{}, &Error{Code: CodeUnavailable, Message: "the task could not be recorded in the session's log, so it was not started; try again", Err: err}
	}
	t, pr, err := m.launch(r, l)
	if err != nil {
		m.recordNeverStarted(r)
		return TaskInfo{}, err
	}
	launched = true
	readDone := make(chan struct{})
	go t.pump(pr, readDone)
	go t.monitor(pr, readDone)
	return t.info(), nil
}

// launch is a background command ready to start.
type launch struct {
	argv  []string
	files []*os.File
	// status is the sandbox's status reporter (shell.Runner.LaunchStatus), or nil; the
	// task's guard owns it once created.
	status *os.File
	dir    string
	env    []string
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
	if l.argv, l.files, l.status, err = m.runner.LaunchStatus(bashPath, args, l.dir); err != nil {
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

// reservation is a task id drawn and its log file created, before the task is recorded.
type reservation struct {
	id, sessionID, callID, logPath string
	command, dir                   string
	started                        time.Time
	logf                           *os.File
	keep                           int64 // diskBudget's answer
}

// reserve draws the task's id and creates its log file (O_EXCL: the file is the id's
// reservation among this session's tasks, in this process and any other).
func (m *Manager) reserve(req StartRequest, l launch) (reservation, error) {
	m.sup.mu.Lock()
	defer m.sup.mu.Unlock()
	if m.sup.closed {
		return reservation{}, &Error{Code: CodeUnavailable, Message: "the background supervisor is shut down; no new tasks start"}
	}
	st, err := m.sup.sessionLocked(m.session)
	if err != nil {
		return reservation{}, err
	}
	sessionID := m.session
	if sessionID == "" {
		sessionID = req.SessionID
	}
	for {
		id, err := newID()
		if err != nil {
			return reservation{}, &Error{Code: CodeExecFailed, Message: "could not draw a task id", Err: err}
		}
		if _, dup := st.tasks[id]; dup {
			continue
		}
		logPath := filepath.Join(st.dir, id+".log")
		logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return reservation{}, &Error{Code: CodeExecFailed, Message: "could not create the task's log file", Err: err}
		}
		return reservation{id: id, sessionID: sessionID, callID: req.CallID, logPath: logPath, command: req.Command,
			dir: l.dir, started: time.Now(), logf: logf}, nil
	}
}

// newID draws "bg_" plus 12 hex digits.
func newID() (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "bg_" + hex.EncodeToString(b[:]), nil
}

// journal is where this manager's tasks are recorded: none without a session.
func (m *Manager) journal() Journal {
	if m.session == "" {
		return nil
	}
	return m.sup.cfg.Journal
}

// recordStart records the reserved task in the session's log.
func (m *Manager) recordStart(ctx context.Context, r reservation) error {
	j := m.journal()
	if j == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	err := j.Started(ctx, events.BackgroundStarted{SessionID: r.sessionID, TaskID: r.id, CallID: r.callID, Command: r.command,
		Dir: r.dir, LogPath: r.logPath, Holder: m.sup.cfg.Holder, StartedAt: r.started.UTC().Format(time.RFC3339Nano)})
	if err != nil {
		r.logf.Close()
	}
	return err
}

// recordNeverStarted completes a recorded task whose command could not be started: nothing
// ran. If this record fails too, the task stays without completion until this process ends
// and a later one records it lost.
func (m *Manager) recordNeverStarted(r reservation) {
	j := m.journal()
	if j == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
	defer cancel()
	_ = j.Completed(ctx, events.BackgroundCompleted{SessionID: r.sessionID, TaskID: r.id, CallID: r.callID,
		Status: events.BackgroundExited, NeverStarted: true, LogPath: r.logPath, Holder: m.sup.cfg.Holder,
		EndedAt: time.Now().UTC().Format(time.RFC3339Nano)})
}

// launch starts the reserved task's command and adds it to the session's tasks.
func (m *Manager) launch(r reservation, l launch) (*task, *os.File, error) {
	m.sup.mu.Lock()
	defer m.sup.mu.Unlock()
	fail := func(err *Error) (*task, *os.File, error) {
		r.logf.Close()
		return nil, nil, err
	}
	if m.sup.closed {
		return fail(&Error{Code: CodeUnavailable, Message: "the background supervisor is shut down; no new tasks start"})
	}
	st, err := m.sup.sessionLocked(m.session)
	if err != nil {
		return fail(err.(*Error))
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return fail(&Error{Code: CodeExecFailed, Message: "output pipe", Err: err})
	}
	// The task holds a session guard from the pool for its whole life (one command per guard
	// keeps the subreaper exact: docs/shell-execution.md, "The session guard"), or a guard of
	// its own where none can take it.
	proc, err := m.runner.StartGuarded(shell.Spec{Argv: l.argv, Files: l.files, Status: l.status,
		Dir: l.dir, Env: l.env, Stdout: pw})
	pw.Close()
	if err != nil {
		pr.Close()
		return fail(&Error{Code: CodeExecFailed, Message: "could not start the command's guard", Err: err})
	}
	m.sup.seq++
	t := &task{
		id: r.id, seq: m.sup.seq, sessionID: r.sessionID, callID: r.callID,
		command: r.command, dir: r.dir, logPath: r.logPath, started: r.started,
		pgid: proc.Pgid(), grace: m.grace, proc: proc, log: r.logf,
		journal: m.journal(), holder: m.sup.cfg.Holder, digest: sha256.New(),
		exited: make(chan struct{}), done: make(chan struct{}),
		ring: newRing(m.ringSize), keep: r.keep,
	}
	if t.journal != nil {
		session := m.session
		t.forget = func() { m.sup.forget(session, t.id) }
	}
	st.tasks[t.id] = t
	return t, pr, nil
}

// held is the task of this manager's session that this process runs; found is false for a
// task it does not hold (see logged). An empty id is refused.
func (m *Manager) held(id string) (*task, bool, error) {
	if strings.TrimSpace(id) == "" {
		return nil, false, invalid("taskID", "taskID is required; list tasks with action list to see their ids")
	}
	t, ok := m.sup.held(m.session, id)
	return t, ok, nil
}

// Output returns one window of a task's output. Without a cursor it is the
// latest window, ending at totalWritten. A task this process does not hold (started by an
// earlier process, or another one) is read from its log file and its record.
func (m *Manager) Output(ctx context.Context, taskID string, cursor *int64, limit int) (Window, error) {
	t, ok, err := m.held(taskID)
	if err != nil {
		return Window{}, err
	}
	if !ok {
		lt, err := m.logged(ctx, taskID)
		if err != nil {
			return Window{}, err
		}
		return lt.window(cursor, limit)
	}
	return t.window(cursor, limit)
}

// Wait waits until the task ends, timeout passes (zero or less: no timeout)
// or ctx is done, then returns the window Output would; its Status says
// whether the task is still running. When ctx ends the wait, the window is
// returned together with ctx's error. A task that has ended has its completion recorded.
func (m *Manager) Wait(ctx context.Context, taskID string, timeout time.Duration, cursor *int64, limit int) (Window, error) {
	t, ok, err := m.held(taskID)
	if err != nil {
		return Window{}, err
	}
	if cursor != nil && *cursor < 0 {
		// Refuse now rather than after the wait; a cursor past the current
		// end may become valid while waiting, so that is checked later.
		return Window{}, invalid("cursor", "cursor %d is negative; pass a cursor from an earlier window, or omit it", *cursor)
	}
	if !ok {
		return m.waitLogged(ctx, taskID, timeout, cursor, limit)
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

// List returns every task of the session, oldest first: the ones this process runs, and the
// ones only the log knows (their completion as recorded, else lost or held elsewhere).
func (m *Manager) List(ctx context.Context) ([]TaskInfo, error) {
	held := m.sup.heldTasks(m.session)
	logged, err := m.loggedTasks(ctx)
	out := make([]TaskInfo, 0, len(held)+len(logged))
	// A task held when the list began is reported as held, even if it ended and was
	// forgotten since: once, not twice.
	seen := map[string]bool{}
	for _, t := range held {
		out = append(out, t.info())
		seen[t.id] = true
	}
	for _, lt := range logged {
		if !seen[lt.info.ID] {
			out = append(out, lt.info)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out, err
}

// Cancel stops a task's whole process group (SIGTERM, SIGKILL after the
// grace) and returns once it has settled and its completion is recorded. On a task that
// already ended it reports the task as it is, without error; a task another live process
// holds cannot be stopped from here.
func (m *Manager) Cancel(ctx context.Context, taskID string) (TaskInfo, error) {
	t, ok, err := m.held(taskID)
	if err != nil {
		return TaskInfo{}, err
	}
	if !ok {
		lt, err := m.logged(ctx, taskID)
		if err != nil {
			return TaskInfo{}, err
		}
		if lt.info.Status == StatusUnknown {
			return lt.info, &Error{Code: CodeUnavailable, Field: "taskID",
				Message: fmt.Sprintf("task %s runs under another Zuno process (%s); it can be cancelled only there, and ends when that process ends", taskID, lt.info.HeldBy)}
		}
		return lt.info, nil
	}
	t.stop(StatusCancelled)
	return t.info(), nil
}

// Close closes the manager. A manager of its own (NewManager) stops every running task
// (status killed) and refuses new ones; a supervisor's view leaves the session's tasks
// running: they outlive the surface and the turn. The logs stay on disk and the tasks stay
// readable.
func (m *Manager) Close() error {
	if m.owned {
		return m.sup.Close()
	}
	return nil
}

// sortTasks orders tasks by start.
func sortTasks(ts []*task) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].seq < ts[j].seq })
}
