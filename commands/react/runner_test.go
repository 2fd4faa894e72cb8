package react_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/react"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// world is a real store and a real checkpoint table on one SQLite file, as zuno worker has
// them; its reaction turns each session titled "trigger" into a session of its own, created by
// a real handler under the reaction's derived command id.
type world struct {
	store    *sqlstore.Store
	rm       *readmodel.DB
	handlers *commands.Handlers
	registry *events.Registry
}

func openWorld(t *testing.T, path string) *world {
	t.Helper()
	ctx := context.Background()
	store, err := sqlstore.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := readmodel.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	reg := events.NewRegistry(events.AllPayloads()...)
	w := &world{store: store, rm: rm, registry: reg, handlers: commands.NewHandlers(store, reg, commands.SystemClock{}, nil)}
	t.Cleanup(func() { rm.Close(); store.Close() })
	return w
}

const echoReaction = "echo-trigger"

func echo() react.Reaction {
	return react.Reaction{Name: echoReaction, Types: []string{events.TypeSessionCreated},
		On: func(rec events.Recorded, p events.Payload) []react.Command {
			if c, ok := p.(events.SessionCreated); ok && c.Title == "trigger" {
				return []react.Command{{Kind: "echo", ID: react.CommandID(echoReaction, rec.ID), SessionID: c.SessionID, Trigger: rec.ID}}
			}
			return nil
		}}
}

// dispatch creates the echo session under the command's id: a second delivery returns the
// first result and records nothing.
func (w *world) dispatch(ctx context.Context, c react.Command) error {
	res, err := w.handlers.CreateSession(ctx, &commands.CreateSession{Meta: commands.Meta{CommandID: c.ID, Actor: "reaction"},
		Create: session.Create{SessionID: "echo_" + c.SessionID, Title: "echo", Agent: "build"}})
	if err == nil {
		err = res.Err()
	}
	return err
}

func (w *world) runner(dispatch func(context.Context, react.Command) error) *react.Runner {
	return &react.Runner{Log: w.store, Registry: w.registry, Checkpoints: projections.ReactionCheckpoints{DB: w.rm.Writer},
		Reactions: []react.Reaction{echo()}, Dispatch: dispatch, Batch: 2}
}

func (w *world) trigger(t *testing.T, ids ...string) {
	t.Helper()
	for _, id := range ids {
		res, err := w.handlers.CreateSession(context.Background(), &commands.CreateSession{Meta: commands.Meta{CommandID: "create/" + id, Actor: "user"},
			Create: session.Create{SessionID: id, Title: "trigger", Agent: "build"}})
		if err != nil || res.Err() != nil {
			t.Fatal(err, res.Err())
		}
	}
}

// echoes counts the echo sessions each trigger made.
func (w *world) echoes(t *testing.T, ids ...string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, id := range ids {
		recs, err := w.store.ReadStream(context.Background(), commands.SessionStream("echo_"+id), 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = len(recs)
	}
	return out
}

func TestRunnerIssuesEachCommandOnceAndRedeliveryChangesNothing(t *testing.T) {
	ctx := context.Background()
	w := openWorld(t, filepath.Join(t.TempDir(), "zuno.db"))
	ids := []string{"ses_a", "ses_b", "ses_c"}
	w.trigger(t, ids...)
	var issued []string
	count := func(ctx context.Context, c react.Command) error {
		issued = append(issued, c.ID)
		return w.dispatch(ctx, c)
	}
	if err := w.runner(count).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if len(issued) != 3 {
		t.Fatalf("issued %v, want one command per trigger", issued)
	}
	for id, n := range w.echoes(t, ids...) {
		if n != 1 {
			t.Errorf("%s: %d echo events, want 1", id, n)
		}
	}
	head, _ := w.store.LastPosition(ctx)
	cp, _ := (projections.ReactionCheckpoints{DB: w.rm.Writer}).Load(ctx, echoReaction)
	if cp != head {
		t.Errorf("checkpoint %d, want the head %d", cp, head)
	}
	// Caught up: nothing is issued again.
	issued = nil
	if err := w.runner(count).CatchUp(ctx); err != nil || len(issued) != 0 {
		t.Fatalf("a second catch-up issued %v (%v)", issued, err)
	}
	// Re-delivered from the start (the checkpoint lost): every command is issued again, and
	// its effect stays one.
	if _, err := w.rm.Writer.ExecContext(ctx, `DELETE FROM reaction_checkpoint`); err != nil {
		t.Fatal(err)
	}
	if err := w.runner(count).CatchUp(ctx); err != nil || len(issued) != 3 {
		t.Fatalf("a re-delivery issued %v (%v), want the three commands again", issued, err)
	}
	for id, n := range w.echoes(t, ids...) {
		if n != 1 {
			t.Errorf("%s after a re-delivery: %d echo events, want 1", id, n)
		}
	}
}

func TestRunnerKeepsATriggerWhoseCommandFailed(t *testing.T) {
	ctx := context.Background()
	w := openWorld(t, filepath.Join(t.TempDir(), "zuno.db"))
	w.trigger(t, "ses_a", "ses_b")
	fail := true
	flaky := func(ctx context.Context, c react.Command) error {
		if fail && c.SessionID == "ses_b" {
			return fmt.Errorf("store unavailable")
		}
		return w.dispatch(ctx, c)
	}
	if err := w.runner(flaky).CatchUp(ctx); err == nil {
		t.Fatal("a failed command was not reported")
	}
	if got := w.echoes(t, "ses_a", "ses_b"); got["ses_a"] != 1 || got["ses_b"] != 0 {
		t.Fatalf("echoes %v after a failure", got)
	}
	fail = false
	if err := w.runner(flaky).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if got := w.echoes(t, "ses_a", "ses_b"); got["ses_a"] != 1 || got["ses_b"] != 1 {
		t.Fatalf("echoes %v after the retry, want one each", got)
	}
}

func TestRunnerSkippedCommandIsDone(t *testing.T) {
	ctx := context.Background()
	w := openWorld(t, filepath.Join(t.TempDir(), "zuno.db"))
	w.trigger(t, "ses_a")
	calls := 0
	skip := func(context.Context, react.Command) error {
		calls++
		return fmt.Errorf("%w: the turn is not waiting", react.Skipped)
	}
	for range 2 {
		if err := w.runner(skip).CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 1 {
		t.Errorf("a skipped command was issued %d times, want once", calls)
	}
}

// The crash between a trigger's command and the checkpoint: a real process runs the runner,
// issues the command, and is SIGKILLed before it saves its checkpoint; the next runner
// delivers the trigger again, and the command's effect is still one.
func TestRunnerCrashBetweenCommandAndCheckpoint(t *testing.T) {
	if os.Getenv("REACT_CRASH_CHILD") != "" {
		return // the child's part is TestRunnerCrashChild
	}
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "zuno.db")
	w := openWorld(t, path)
	w.trigger(t, "ses_a")
	marker := filepath.Join(dir, "dispatched")
	child := exec.Command(os.Args[0], "-test.run=^TestRunnerCrashChild$", "-test.count=1")
	child.Env = append(os.Environ(), "REACT_CRASH_CHILD="+path, "REACT_CRASH_MARKER="+marker)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			child.Process.Kill()
			t.Fatal("the child never issued its command")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := child.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	child.Wait()
	if got := w.echoes(t, "ses_a"); got["ses_a"] != 1 {
		t.Fatalf("the child's command left %d echo events, want 1", got["ses_a"])
	}
	if cp, _ := (projections.ReactionCheckpoints{DB: w.rm.Writer}).Load(ctx, echoReaction); cp != 0 {
		t.Fatalf("the child saved checkpoint %d before it was killed; the test needs it unsaved", cp)
	}
	issued := 0
	if err := w.runner(func(ctx context.Context, c react.Command) error { issued++; return w.dispatch(ctx, c) }).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if issued != 1 {
		t.Errorf("the trigger was delivered %d times after the crash, want once again", issued)
	}
	if got := w.echoes(t, "ses_a"); got["ses_a"] != 1 {
		t.Errorf("after the crash and the re-delivery: %d echo events, want 1", got["ses_a"])
	}
}

// TestRunnerCrashChild is the process TestRunnerCrashBetweenCommandAndCheckpoint kills: it
// issues the command, says so, and hangs before the checkpoint is saved.
func TestRunnerCrashChild(t *testing.T) {
	path := os.Getenv("REACT_CRASH_CHILD")
	if path == "" {
		t.Skip("run by TestRunnerCrashBetweenCommandAndCheckpoint")
	}
	w := openWorld(t, path)
	hang := func(ctx context.Context, c react.Command) error {
		if err := w.dispatch(ctx, c); err != nil {
			return err
		}
		os.WriteFile(os.Getenv("REACT_CRASH_MARKER"), nil, 0o644)
		select {} // killed here: after the command, before the checkpoint
	}
	w.runner(hang).CatchUp(context.Background())
}

// A trigger whose command keeps failing (the store down) is tried again after a pause that
// grows, never as fast as the store answers; it is kept, and the triggers after it wait.
func TestRunnerBacksOffAFailingTrigger(t *testing.T) {
	w := openWorld(t, filepath.Join(t.TempDir(), "zuno.db"))
	w.trigger(t, "ses_a", "ses_b")
	var calls []string
	failing := func(_ context.Context, c react.Command) error {
		calls = append(calls, c.SessionID)
		return fmt.Errorf("store unavailable")
	}
	r := w.runner(failing)
	r.Every = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if err := r.Run(ctx); err == nil {
		t.Fatal("Run ended without its context")
	}
	if len(calls) == 0 || len(calls) > 2 {
		t.Fatalf("in 1.5 s a failing command was issued %d times (%v): want 1 or 2 (a pause of 1 s, then 2 s)", len(calls), calls)
	}
	for _, s := range calls {
		if s != "ses_a" {
			t.Fatalf("a trigger after the failing one was issued before it: %v", calls)
		}
	}
}
