package bg

import (
	"context"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"os"
	"sync"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/events"
)

// task is one background command. Its output flows pipe → log file → ring;
// a byte counts as written (total) only after it is in both, so every offset
// below total can be served from the ring or, if older, from the file.
type task struct {
	id        string
	seq       uint64
	sessionID string
	callID    string
	command   string
	dir       string
	logPath   string
	started   time.Time
	pgid      int // 0: the guard could not start the command (nothing to signal)
	grace     time.Duration

	proc *shell.Process
	log  *os.File // write side; readers open the path themselves

	// journal records the completion (nil: none); holder names this process in it.
	journal Journal
	holder  string
	// forget drops the task from its supervisor once its completion is recorded: from then
	// on the log and the log file answer for it, and its memory (the ring) is freed, so
	// nothing grows with the process's lifetime. nil keeps it (no journal).
	forget func()
	// digest hashes every byte of output in order; only pump writes it, and monitor reads
	// it after pump has returned.
	digest hash.Hash

	// keep is how many bytes of output the log may take (0: no bound); past it the task is
	// stopped as capped and the rest dropped.
	keep    int64
	dropped bool // output past keep was dropped (under mu)

	exited chan struct{} // closed when the leader (bash) has been waited for
	done   chan struct{} // closed when the task is settled: status final, output drained

	mu           sync.Mutex
	ring         *ring
	diskEnd      int64 // bytes known to be in the log file
	diskErr      error // first log write error; later bytes stay in the ring only
	leaderExited bool
	stopReason   Status    // StatusCancelled or StatusKilled once Zuno signalled a live leader
	stopSent     time.Time // when that signal was sent
	status       Status
	ended        time.Time
	exitCode     *int
	signal       string
	guardFailed  bool
	neverStarted bool
	detached     bool
	// completion is the recorded receipt; completionErr why recording it failed.
	completion    *events.BackgroundCompleted
	completionErr error
}

// write records one chunk of output. The file comes first so that any offset
// a reader sees below total is already readable from disk.
func (t *task) write(p []byte) {
	t.mu.Lock()
	failed := t.diskErr != nil
	if t.keep > 0 && t.ring.total+int64(len(p)) > t.keep {
		p = p[:t.keep-t.ring.total]
		if !t.dropped {
			t.dropped = true
			go t.stop(StatusCapped) // not here: stop waits for this pump to drain
		}
	}
	t.mu.Unlock()
	if len(p) == 0 {
		return
	}
	t.digest.Write(p)
	var werr error
	if !failed {
		_, werr = t.log.Write(p)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !failed && werr == nil {
		t.diskEnd += int64(len(p))
	} else if werr != nil {
		// Stop writing to the file at the first failure: a hole would
		// misalign every later offset.
		t.diskErr = werr
	}
	t.ring.write(p)
}

// pump copies the combined output until EOF or until the pipe is closed.
func (t *task) pump(pr *os.File, readDone chan<- struct{}) {
	defer close(readDone)
	buf := make([]byte, 32<<10)
	for {
		n, err := pr.Read(buf)
		if n > 0 {
			t.write(buf[:n])
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				t.mu.Lock()
				if t.diskErr == nil {
					t.diskErr = err
				}
				t.mu.Unlock()
			}
			return
		}
	}
}

// monitor waits for the leader, reaps the rest of the group (no orphans, as
// for a foreground shell call), drains the output, records the completion and settles the
// status. The task reads as ended only once its completion is recorded (or could not be), so
// whatever reports it ended reports the same receipt.
func (t *task) monitor(pr *os.File, readDone <-chan struct{}) {
	<-t.proc.Done()
	t.mu.Lock()
	t.leaderExited = true
	t.mu.Unlock()
	close(t.exited)

	if t.pgid > 0 {
		shell.ReapGroup(t.pgid, t.grace)
	}

	detached := false
	select {
	case <-readDone:
	case <-time.After(t.grace + time.Second):
		// A process that left the group still holds the pipe open.
		detached = true
		_ = pr.Close()
		<-readDone
	}
	_ = pr.Close()
	_ = t.log.Close()

	c := t.ending(detached)
	var recErr error
	if t.journal != nil {
		recErr = record(t.journal, c)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.detached, t.guardFailed, t.neverStarted, t.signal = c.OutputDetached, c.GuardFailed, c.NeverStarted, c.Signal
	t.exitCode, t.status = c.ExitCode, Status(c.Status)
	t.ended, _ = time.Parse(time.RFC3339Nano, c.EndedAt)
	if recErr != nil {
		t.completionErr = recErr
	} else if t.journal != nil {
		t.completion = &c
	}
	close(t.done)
	if t.completion != nil && t.forget != nil {
		go t.forget() // not under t.mu: the supervisor's lock is taken before a task's
	}
}

// ending is how the task ended, as its completion records it.
func (t *task) ending(detached bool) events.BackgroundCompleted {
	gs, _ := t.proc.Settle() // no status at all reads as the guard's failure (gs)
	t.mu.Lock()
	defer t.mu.Unlock()
	c := events.BackgroundCompleted{SessionID: t.sessionID, TaskID: t.id, CallID: t.callID, Status: string(StatusExited),
		Signal: gs.Signal, GuardFailed: gs.GuardFailed, NeverStarted: gs.NeverStarted, OutputDetached: detached,
		TotalWritten: t.ring.total, OutputSHA256: hex.EncodeToString(t.digest.Sum(nil)), LogPath: t.logPath,
		Holder: t.holder, EndedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	if gs.HasExitCode {
		code := gs.ExitCode
		c.ExitCode = &code
	}
	// A signal Zuno did not send (the OOM killer, the command's own kill)
	// is the command's own fate: exited, with Signal set. So is a stop that
	// reached a command which had already ended (the guard saw no signal first).
	if t.stopReason != "" && (gs.StoppedLive(t.stopSent) || gs.GuardFailed) {
		c.Status = string(t.stopReason)
	}
	if t.dropped {
		// The log holds only the first bytes, whether the stop found the command alive or not.
		c.Status = string(StatusCapped)
	}
	return c
}

// recordAttempts is how often a completion is offered to the journal before it is given up:
// a store that is briefly busy does not lose the receipt.
const recordAttempts = 3

// record records a completion, retrying a failed append (the command id derives from the task
// id, so a retry of an append that did land records nothing twice).
func record(j Journal, c events.BackgroundCompleted) error {
	var err error
	for attempt := range recordAttempts {
		if attempt > 0 {
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
		}
		ctx, cancel := context.WithTimeout(context.Background(), recordTimeout)
		err = j.Completed(ctx, c)
		cancel()
		if err == nil {
			return nil
		}
	}
	return err
}

// stop signals a live task's group (TERM, KILL after grace) and waits until
// it is settled. On a task whose leader already exited it only waits: its
// own status stands.
func (t *task) stop(reason Status) {
	t.mu.Lock()
	live := !t.leaderExited
	if live && t.stopReason == "" {
		t.stopReason, t.stopSent = reason, time.Now()
	}
	t.mu.Unlock()
	if live {
		// TERM, then KILL to the group and everything below the guard after the grace, then
		// the guard itself if it still does not report (it was stopped): as a shell call.
		t.proc.Stop(t.grace)
	}
	<-t.done
}

// info is a snapshot of the task for List and Cancel.
func (t *task) info() TaskInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	ti := TaskInfo{
		ID: t.id, SessionID: t.sessionID, CallID: t.callID,
		Command: t.command, Dir: t.dir, LogPath: t.logPath,
		Status: t.statusLocked(), Started: t.started,
		TotalWritten: t.ring.total, ExitCode: t.exitCode, Signal: t.signal,
		GuardFailed: t.guardFailed, NeverStarted: t.neverStarted, OutputDetached: t.detached,
		Completion: t.completion, CompletionError: errText(t.completionErr),
	}
	if !t.ended.IsZero() {
		e := t.ended
		ti.Ended = &e
	}
	return ti
}

func (t *task) statusLocked() Status {
	if t.status == "" {
		return StatusRunning
	}
	return t.status
}

// window reads one window of the task's output. The plan and a ring read
// happen under one lock, so the ring cannot move under the copy; a disk read
// happens outside it, which is safe because the file only grows and every
// byte below the planned end is already in it.
func (t *task) window(cursor *int64, limit int) (Window, error) {
	t.mu.Lock()
	s, err := plan(cursor, limit, t.ring.total, true)
	if err != nil {
		t.mu.Unlock()
		return Window{}, err
	}
	status := t.statusLocked()
	exitCode, signal := t.exitCode, t.signal
	completion, completionErr := t.completion, errText(t.completionErr)
	var data []byte
	fromDisk := s.from < t.ring.start()
	if !fromDisk {
		data = t.ring.read(s.from, s.end)
	} else if s.end > t.diskEnd {
		derr := t.diskErr
		t.mu.Unlock()
		return Window{}, &Error{Code: CodeUnavailable, Field: "cursor",
			Message: "these bytes are no longer in memory and the log file could not record them; read from a cursor at or after the memory window (omit cursor for the latest window)",
			Err:     derr}
	}
	t.mu.Unlock()

	if fromDisk {
		data, err = readFileRange(t.logPath, s.from, s.end)
		if err != nil {
			return Window{}, &Error{Code: CodeUnavailable, Field: "cursor",
				Message: "the task's log file could not be read; omit cursor for the latest window, which is kept in memory", Err: err}
		}
	}
	w := settle(s, data, status == StatusRunning)
	w.TaskID, w.FromDisk = t.id, fromDisk
	w.Status, w.ExitCode, w.Signal = status, exitCode, signal
	w.Completion, w.CompletionError = completion, completionErr
	return w, nil
}

// readFileRange reads exactly [from, end) of the file at path.
func readFileRange(path string, from, end int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRange(f, from, end)
}

func readRange(f *os.File, from, end int64) ([]byte, error) {
	buf := make([]byte, end-from)
	n, err := f.ReadAt(buf, from)
	if n == len(buf) {
		return buf, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, err
}

// errText is err's message, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
