package bg

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/zuno-run/zuno/domain/bgtask"
	"github.com/zuno-run/zuno/events"
)

// A task this process does not hold is known from the session's log only: it was started by
// an earlier process (a turn that ran there), or by another one still running. Its facts are
// its record (docs/tools.md, "Background commands"): its completion receipt when one is
// recorded; else lost when the process that held it is gone (the task died with it, and this
// process records that, so every reader agrees); else unknown, never running, since nothing
// here can see it run. Its output is read from its log file.

// loggedTask is a task known from the log, with what this process can tell of it.
type loggedTask struct {
	info TaskInfo
	// total is how much of the log file is the task's output: its recorded size once
	// completed, else what the file holds now.
	total int64
	// readable: the recorded log is this supervisor's file for the task (ownLog).
	readable bool
}

// loggedPoll is how often a wait on a task held elsewhere reads the log again.
const loggedPoll = 250 * time.Millisecond

// loggedTasks are the session's tasks as the log has them, lost ones recorded as lost.
func (m *Manager) loggedTasks(ctx context.Context) ([]loggedTask, error) {
	j := m.journal()
	if j == nil {
		return nil, nil
	}
	st, err := j.Tasks(ctx, m.session)
	if err != nil {
		return nil, &Error{Code: CodeUnavailable, Message: "the session's record of background tasks could not be read; tasks of earlier turns are not listed", Err: err}
	}
	if m.settleLost(ctx, st) {
		// Read again whether or not this process's record landed: when another reader
		// recorded the loss first, its receipt is the one that stands.
		if st, err = j.Tasks(ctx, m.session); err != nil {
			return nil, &Error{Code: CodeUnavailable, Message: "the session's record of background tasks could not be read", Err: err}
		}
	}
	out := make([]loggedTask, 0, len(st.Tasks()))
	for _, t := range st.Tasks() {
		out = append(out, m.fromLog(t))
	}
	return out, nil
}

// logged is one task known from the log; not_found when the log has no such task either.
func (m *Manager) logged(ctx context.Context, id string) (loggedTask, error) {
	ts, err := m.loggedTasks(ctx)
	if err != nil {
		return loggedTask{}, err
	}
	for _, t := range ts {
		if t.info.ID == id {
			return t, nil
		}
	}
	return loggedTask{}, notFound("taskID", "no background task has id %q; list tasks with action list to see the valid ids", id)
}

// settleLost records as lost each task with no completion whose holder is known gone, and
// reports whether it tried to. One reader at a time in this process (bg list, output and wait
// may run in parallel): the others then find the loss recorded. A record that fails (another
// process recorded it first) leaves the log to say what stands.
func (m *Manager) settleLost(ctx context.Context, st bgtask.State) bool {
	if len(m.lost(st)) == 0 {
		return false
	}
	m.sup.lostMu.Lock()
	defer m.sup.lostMu.Unlock()
	if fresh, err := m.journal().Tasks(ctx, m.session); err == nil {
		st = fresh // what an earlier reader of this process recorded meanwhile
	}
	for _, s := range m.lost(st) {
		_ = m.journal().Completed(ctx, events.BackgroundCompleted{SessionID: s.SessionID, TaskID: s.TaskID,
			CallID: s.CallID, Status: events.BackgroundLost, TotalWritten: m.ownLogSize(s),
			LogPath: s.LogPath, Holder: m.sup.cfg.Holder, EndedAt: time.Now().UTC().Format(time.RFC3339Nano)})
	}
	return true
}

// lost are the recorded tasks without a completion whose holder, another process, is gone.
func (m *Manager) lost(st bgtask.State) []events.BackgroundStarted {
	gone := m.sup.cfg.HolderGone
	var out []events.BackgroundStarted
	for _, t := range st.Tasks() {
		h := t.Started.Holder
		if t.Completion == nil && gone != nil && h != "" && h != m.sup.cfg.Holder && gone(h) {
			out = append(out, t.Started)
		}
	}
	return out
}

// fromLog is what this process can tell of a recorded task.
func (m *Manager) fromLog(t bgtask.Task) loggedTask {
	s := t.Started
	info := TaskInfo{ID: s.TaskID, SessionID: s.SessionID, CallID: s.CallID, Command: s.Command, Dir: s.Dir,
		LogPath: s.LogPath, Status: StatusUnknown}
	if s.Holder != m.sup.cfg.Holder {
		info.HeldBy = s.Holder // a task of this process that ended is no one else's
	}
	info.Started, _ = time.Parse(time.RFC3339Nano, s.StartedAt)
	lt := loggedTask{info: info}
	if path, ok := m.ownLog(s.TaskID, s.LogPath); ok {
		lt.readable, lt.total = true, fileSize(path)
	}
	if c := t.Completion; c != nil {
		lt.info.Status, lt.info.ExitCode, lt.info.Signal = Status(c.Status), c.ExitCode, c.Signal
		lt.info.GuardFailed, lt.info.NeverStarted, lt.info.OutputDetached = c.GuardFailed, c.NeverStarted, c.OutputDetached
		lt.info.Completion = c
		if ended, err := time.Parse(time.RFC3339Nano, c.EndedAt); err == nil {
			lt.info.Ended = &ended
		}
		if c.Status != events.BackgroundLost {
			lt.total = min(lt.total, c.TotalWritten)
		}
	}
	lt.info.TotalWritten = lt.total
	if c := t.Completion; c != nil && c.Status != events.BackgroundLost {
		lt.info.TotalWritten = c.TotalWritten // what was written, whether or not this process can read it
	}
	return lt
}

// ownLogSize is the size of a recorded task's log file if it is this supervisor's, else 0.
func (m *Manager) ownLogSize(s events.BackgroundStarted) int64 {
	if path, ok := m.ownLog(s.TaskID, s.LogPath); ok {
		return fileSize(path)
	}
	return 0
}

// fileSize is the size of the file at path, 0 when it cannot be read (a log on another
// host, or removed).
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// ownLog is where this supervisor keeps the log of the session's task id: a recorded log path
// is read only if it is that file. The record alone never names a file to read (a log
// written with another data directory, or altered, cannot point bg at any other file).
func (m *Manager) ownLog(taskID, recorded string) (string, bool) {
	if !taskIDPattern.MatchString(taskID) {
		return "", false
	}
	want := filepath.Join(m.sup.cfg.Dir, m.session, taskID+".log")
	return want, recorded == want
}

// taskIDPattern is a task id as newID draws it.
var taskIDPattern = regexp.MustCompile(`^bg_[0-9a-f]{12}$`)

// window reads one window of a logged task's output from its log file.
func (lt loggedTask) window(cursor *int64, limit int) (Window, error) {
	s, err := plan(cursor, limit, lt.total, true)
	if err != nil {
		return Window{}, err
	}
	if !lt.readable {
		return Window{}, &Error{Code: CodeUnavailable, Field: "taskID",
			Message: fmt.Sprintf("the output of task %s was kept under another data directory (%s), which this process does not read; its recorded facts stand (action list)", lt.info.ID, lt.info.LogPath)}
	}
	var data []byte
	if s.end > s.from {
		data, err = readFileRange(lt.info.LogPath, s.from, s.end)
	}
	if err != nil {
		return Window{}, &Error{Code: CodeUnavailable, Field: "taskID",
			Message: fmt.Sprintf("the log file of task %s could not be read; its recorded facts stand (action list)", lt.info.ID), Err: err}
	}
	w := settle(s, data, false)
	w.TaskID, w.FromDisk = lt.info.ID, true
	w.Status, w.ExitCode, w.Signal, w.Completion = lt.info.Status, lt.info.ExitCode, lt.info.Signal, lt.info.Completion
	return w, nil
}

// waitLogged waits for a task another process holds until its completion is recorded (or it
// is found lost), timeout passes or ctx is done, reading the log again every loggedPoll.
func (m *Manager) waitLogged(ctx context.Context, id string, timeout time.Duration, cursor *int64, limit int) (Window, error) {
	var deadline <-chan time.Time
	if timeout > 0 {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		deadline = timer.C
	}
	tick := time.NewTicker(loggedPoll)
	defer tick.Stop()
	for {
		lt, err := m.logged(ctx, id)
		if err != nil {
			return Window{}, err
		}
		if lt.info.Status != StatusUnknown {
			return lt.window(cursor, limit)
		}
		select {
		case <-tick.C:
		case <-deadline:
			return lt.window(cursor, limit)
		case <-ctx.Done():
			w, werr := lt.window(cursor, limit)
			if werr != nil {
				return Window{}, werr
			}
			return w, ctx.Err()
		}
	}
}
