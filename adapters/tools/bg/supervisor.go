package bg

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/zuno-run/zuno/domain/bgtask"
	"github.com/zuno-run/zuno/events"
)

// Journal records a session's background tasks in the log (stream bg-<sessionId>) and reads
// the record back (commands.BackgroundTasks). Started is recorded before the command runs;
// Completed once it ended, and it is the one completion receipt bg output, bg wait and a
// later turn's bg list all report (docs/tools.md, "Background commands").
type Journal interface {
	Started(ctx context.Context, e events.BackgroundStarted) error
	Completed(ctx context.Context, e events.BackgroundCompleted) error
	Tasks(ctx context.Context, sessionID string) (bgtask.State, error)
}

// SupervisorConfig configures a Supervisor.
type SupervisorConfig struct {
	// Dir holds the task logs, one directory per session.
	Dir string
	// Journal records tasks and their completions; nil records nothing (and a later
	// process knows nothing of this one's tasks).
	Journal Journal
	// Holder names this process in the records (host, pid and a random part).
	Holder string
	// HolderGone reports whether another process, named as a holder, is known to have
	// exited: its tasks died with it, so a task it recorded without a completion is lost.
	// nil: no holder is ever known gone.
	HolderGone func(holder string) bool
}

// recordTimeout bounds one record in the journal: a store that does not answer does not hold
// a task's completion (or the shutdown that waits for it) forever.
const recordTimeout = 15 * time.Second

// Supervisor owns the background tasks of one process, per session. Tasks outlive the tool
// surfaces (and turns) that started them; they end on their own, by Cancel, or when the
// Supervisor closes, and they die with the process (the guard's lifeline, docs/shell-execution.md).
type Supervisor struct {
	cfg SupervisorConfig

	// lostMu serializes recording tasks lost (settleLost).
	lostMu sync.Mutex

	mu       sync.Mutex
	sessions map[string]*sessionTasks
	seq      uint64
	closed   bool
}

// sessionTasks are one session's tasks in this process.
type sessionTasks struct {
	dir   string
	tasks map[string]*task
}

// NewSupervisor returns a supervisor that keeps task logs under cfg.Dir, created with a
// session's first surface (a process that opens none, such as zuno events, creates nothing).
func NewSupervisor(cfg SupervisorConfig) (*Supervisor, error) {
	abs, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("bg: log dir: %w", err)
	}
	cfg.Dir = abs
	return &Supervisor{cfg: cfg, sessions: map[string]*sessionTasks{}}, nil
}

// Manager is a view of sessionID's tasks for one tool surface; closing it leaves the tasks
// running. The empty session keeps its logs in Dir itself and records nothing.
func (s *Supervisor) Manager(sessionID string, opts ...Option) (*Manager, error) {
	if err := checkSessionID(sessionID); err != nil {
		return nil, err
	}
	// The session's log directory exists from its first surface on (docs/tools.md: the data
	// directory holds background output per session), whether or not a task starts.
	if err := os.MkdirAll(filepath.Join(s.cfg.Dir, sessionID), 0o700); err != nil {
		return nil, fmt.Errorf("bg: log dir: %w", err)
	}
	m := &Manager{sup: s, session: sessionID, grace: defaultGrace, ringSize: RingSize}
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// checkSessionID refuses an id that would place the session's logs outside Dir.
func checkSessionID(id string) error {
	if id == "" {
		return nil
	}
	if id == "." || id == ".." || strings.ContainsAny(id, "/\\\x00") {
		return invalid("sessionID", "session id %q cannot name a log directory; use the session's own id", id)
	}
	return nil
}

// sessionLocked is sessionID's task table, its log directory created; s.mu is held.
func (s *Supervisor) sessionLocked(sessionID string) (*sessionTasks, error) {
	if st, ok := s.sessions[sessionID]; ok {
		return st, nil
	}
	dir := s.cfg.Dir
	if sessionID != "" {
		dir = filepath.Join(dir, sessionID)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, &Error{Code: CodeExecFailed, Message: "could not create the session's log directory", Err: err}
	}
	st := &sessionTasks{dir: dir, tasks: map[string]*task{}}
	s.sessions[sessionID] = st
	return st, nil
}

// held is the task id of sessionID that this process holds.
func (s *Supervisor) held(sessionID, id string) (*task, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.sessions[sessionID]
	if !ok {
		return nil, false
	}
	t, ok := st.tasks[id]
	return t, ok
}

// heldTasks are sessionID's tasks in this process, in the order they started.
func (s *Supervisor) heldTasks(sessionID string) []*task {
	s.mu.Lock()
	st := s.sessions[sessionID]
	var ts []*task
	if st != nil {
		for _, t := range st.tasks {
			ts = append(ts, t)
		}
	}
	s.mu.Unlock()
	sortTasks(ts)
	return ts
}

// forget drops a task whose completion is recorded; a session left with none is dropped too.
func (s *Supervisor) forget(sessionID, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.sessions[sessionID]; ok {
		delete(st.tasks, id)
		if len(st.tasks) == 0 {
			delete(s.sessions, sessionID)
		}
	}
}

// Close stops every running task of every session (status killed), waits until each one's
// completion is recorded, and refuses new tasks. The logs stay on disk.
func (s *Supervisor) Close() error {
	s.mu.Lock()
	s.closed = true
	var ts []*task
	for _, st := range s.sessions {
		for _, t := range st.tasks {
			ts = append(ts, t)
		}
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range ts {
		wg.Go(func() { t.stop(StatusKilled) })
	}
	wg.Wait()
	return nil
}
