package projections_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// Read-your-writes by position (issue 24 item 6, docs/storage.md): each row is a sentence of
// the issue or of the design it names.
//
//   - "a command returns its last position and a query that must see it waits with
//     WaitFor(position)": TestWaitForSeesTheWrite (both dialects; nothing else projects).
//   - "one projection runner per deployment on Postgres": TestOneLeaderPerDeployment (two
//     runners on two connection pools, one database: one leads; the other, which cannot
//     decode a single event, would fail if it ever projected; both see their writes).
//   - "a process whose leader died takes over": TestLeaderClosedIsReplaced (the leader gives
//     up), TestKilledLeaderIsReplaced (the leader's process is SIGKILLed).
//   - the server ends the leader's lock connection while its process lives:
//     TestLeaderConnectionTerminated.
//   - SQLite, several processes: TestTwoRunnersOnOneSQLiteFile.
//   - "a timeout and a typed error naming what to do": TestWaitForStalls,
//     TestWaitForReportsAFailure.
//   - the reader role of zuno db cannot take the leadership: adapters/readmodel's hostile table.

// appendSession appends a session's creation and one message, and returns the last position.
func appendSession(t testing.TB, store *sqlstore.Store, id string) uint64 {
	t.Helper()
	md := events.Metadata{CommandID: id, Actor: "user", Time: time.Now().UTC()}
	created, err := events.Encode(events.DeriveID(id, 0), events.SessionCreated{SessionID: id, Title: "t", Agent: "build"}, md)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := events.Encode(events.DeriveID(id, 1), events.UserMessageAppended{SessionID: id, MessageID: "m", Text: "hi"}, md)
	if err != nil {
		t.Fatal(err)
	}
	res, err := store.Append(context.Background(), "session-"+id, events.NoStream, created, msg)
	if err != nil {
		t.Fatal(err)
	}
	return res.LastPosition
}

// sessionRows counts the session read model's rows with id.
func sessionRows(t testing.TB, e *env, id string) int {
	t.Helper()
	var n int
	if err := e.rm.Writer.Get(&n, e.rm.Writer.Rebind(`SELECT COUNT(*) FROM session WHERE id = ?`), id); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitFor is WaitFor with a deadline the test can afford.
func waitFor(t testing.TB, r *projections.Runner, pos uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.WaitFor(ctx, pos); err != nil {
		t.Fatalf("WaitFor(%d): %v", pos, err)
	}
}

func TestWaitForSeesTheWrite(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			e := d.env(t)
			var pos uint64
			for i := range 5 {
				pos = appendSession(t, e.store, fmt.Sprintf("ses_w%d", i))
			}
			// Nothing runs the runner: WaitFor starts it.
			waitFor(t, e.runner, pos)
			if n := sessionRows(t, e, "ses_w4"); n != 1 {
				t.Fatalf("after WaitFor(%d) the session read model has %d rows of the last session", pos, n)
			}
			// Later writes: followed live (Postgres), caught up at the wait (SQLite).
			pos = appendSession(t, e.store, "ses_w5")
			waitFor(t, e.runner, pos)
			if n := sessionRows(t, e, "ses_w5"); n != 1 {
				t.Fatalf("a write after the runner started was not projected")
			}
		})
	}
}

func TestWaitForStalls(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			e := d.env(t)
			pos := appendSession(t, e.store, "ses_s")
			runner := projections.NewRunner(e.rm.Writer, e.store, registry, projections.All(), projections.WithStall(300*time.Millisecond))
			t.Cleanup(func() { runner.Close() })
			started := time.Now()
			err := runner.WaitFor(context.Background(), pos+10) // a position the log never reaches
			var behind *projections.BehindError
			if !errors.As(err, &behind) || behind.Code() != projections.CodeProjectionsBehind || behind.Reached != pos || behind.Cause != nil {
				t.Fatalf("WaitFor past the head: %v", err)
			}
			if took := time.Since(started); took > 10*time.Second {
				t.Fatalf("WaitFor gave up after %s, with a stall timeout of 300ms", took)
			}
			for _, want := range []string{"projections_behind", "did not reach", "zuno projections status", "zuno projections catch-up"} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

func TestWaitForReportsAFailure(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			e := d.env(t)
			pos := appendSession(t, e.store, "ses_f")
			// A registry that knows no event type: projecting stops at the first event.
			blind := projections.NewRunner(e.rm.Writer, e.store, events.NewRegistry(), projections.All())
			t.Cleanup(func() { blind.Close() })
			started := time.Now()
			err := blind.WaitFor(context.Background(), pos)
			var behind *projections.BehindError
			if !errors.As(err, &behind) || behind.Cause == nil {
				t.Fatalf("WaitFor over an event that cannot be decoded: %v", err)
			}
			if took := time.Since(started); took > 10*time.Second {
				t.Fatalf("the failure was reported after %s, not when it happened", took)
			}
		})
	}
}

func TestTwoRunnersOnOneSQLiteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zuno.db")
	a, b := sqliteEnvAt(t, path), sqliteEnvAt(t, path)
	for i := range 10 {
		w, r := a, b
		if i%2 == 1 {
			w, r = b, a
		}
		id := fmt.Sprintf("ses_%d", i)
		pos := appendSession(t, w.store, id)
		waitFor(t, w.runner, pos) // the writer sees its write
		waitFor(t, r.runner, pos) // and so does the other process
		if sessionRows(t, r, id) != 1 {
			t.Fatalf("%s missing from the read model", id)
		}
	}
	assertOnce(t, a)
}

// assertOnce checks that every session's message was applied exactly once (message_count
// counts them): two runners never applied one batch twice.
func assertOnce(t *testing.T, e *env) {
	t.Helper()
	var wrong, all int
	if err := e.rm.Writer.Get(&wrong, `SELECT COUNT(*) FROM session WHERE message_count <> 1`); err != nil {
		t.Fatal(err)
	}
	if err := e.rm.Writer.Get(&all, `SELECT COUNT(*) FROM session`); err != nil {
		t.Fatal(err)
	}
	if wrong != 0 || all == 0 {
		t.Fatalf("%d of %d sessions count their one message other than once", wrong, all)
	}
}

// leaders counts the runners that lead now.
func leaders(rs ...*projections.Runner) int {
	n := 0
	for _, r := range rs {
		if r.Leading() {
			n++
		}
	}
	return n
}

func TestOneLeaderPerDeployment(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := postgresEnvAt(t, url)
	// b's process cannot decode a single event: were it ever to project, its WaitFor would fail.
	b := postgresEnvAt(t, url)
	blind := projections.NewRunner(b.rm.Writer, b.store, events.NewRegistry(), projections.All())
	t.Cleanup(func() { blind.Close() })

	waitFor(t, a.runner, appendSession(t, a.store, "ses_a0")) // a leads: nobody else does yet
	for i := range 10 {
		pos := appendSession(t, b.store, fmt.Sprintf("ses_b%d", i))
		waitFor(t, blind, pos)    // b sees its own write, projected by a
		waitFor(t, a.runner, pos) // and a sees it
		pos = appendSession(t, a.store, fmt.Sprintf("ses_a%d", i+1))
		waitFor(t, blind, pos)
	}
	if !a.runner.Leading() || blind.Leading() {
		t.Fatalf("leading: a %v, b %v; want a alone", a.runner.Leading(), blind.Leading())
	}
	if n := sessionRows(t, b, "ses_b9"); n != 1 {
		t.Fatalf("b's last write is not in the read model")
	}
	assertOnce(t, a)
}

func TestLeaderClosedIsReplaced(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := postgresEnvAt(t, url), postgresEnvAt(t, url)
	waitFor(t, a.runner, appendSession(t, a.store, "ses_1"))
	waitFor(t, b.runner, appendSession(t, b.store, "ses_2"))
	if leaders(a.runner, b.runner) != 1 || !a.runner.Leading() {
		t.Fatalf("want a alone leading: a %v, b %v", a.runner.Leading(), b.runner.Leading())
	}
	a.runner.Close()
	pos := appendSession(t, b.store, "ses_3")
	waitFor(t, b.runner, pos)
	if !b.runner.Leading() || sessionRows(t, b, "ses_3") != 1 {
		t.Fatalf("after the leader closed, b leads %v", b.runner.Leading())
	}
	assertOnce(t, b)
}

// TestLeaderConnectionTerminated: the server ends the leader's lock connection (an operator's
// pg_terminate_backend, a network cut) while the leader's process lives on. The lock is gone
// with the connection; another process takes over, the old leader notices and stops, and
// every write is still applied exactly once.
func TestLeaderConnectionTerminated(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, b := postgresEnvAt(t, url), postgresEnvAt(t, url)
	waitFor(t, a.runner, appendSession(t, a.store, "ses_1"))
	waitFor(t, b.runner, appendSession(t, b.store, "ses_2"))
	if !a.runner.Leading() || b.runner.Leading() {
		t.Fatalf("want a alone leading: a %v, b %v", a.runner.Leading(), b.runner.Leading())
	}
	var terminated int
	if err := b.rm.Writer.Get(&terminated, `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_locks
		WHERE relation = 'projection_leader'::regclass AND granted`); err != nil || terminated != 1 {
		t.Fatalf("terminated %d lock holders: %v", terminated, err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; a.runner.Leading() || !b.runner.Leading(); i++ {
		if time.Now().After(deadline) {
			t.Fatalf("after the leader's connection ended: a leads %v, b leads %v", a.runner.Leading(), b.runner.Leading())
		}
		waitFor(t, b.runner, appendSession(t, b.store, fmt.Sprintf("ses_t%d", i)))
		time.Sleep(50 * time.Millisecond)
	}
	pos := appendSession(t, a.store, "ses_last")
	waitFor(t, a.runner, pos)
	waitFor(t, b.runner, pos)
	assertOnce(t, a)
}

// The killed-leader test runs this test binary again as a process that takes the leadership,
// says so, and follows the log until it is killed.
const leaderChildEnv = "ZUNO_LEADER_CHILD"

func leaderChild(url string) {
	ctx := context.Background()
	store, err := sqlstore.OpenPostgres(ctx, url)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	rm, err := readmodel.OpenPostgres(ctx, url)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	runner := projections.NewRunner(rm.Writer, store, registry, projections.All())
	runner.Start(ctx)
	for !runner.Leading() {
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Println("leading")
	select {}
}

func TestKilledLeaderIsReplaced(t *testing.T) {
	if testing.Short() {
		t.Skip("kills a real process; skipped in -short")
	}
	url := pgtest.NewDatabase(t)
	e := postgresEnvAt(t, url)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), leaderChildEnv+"="+url)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || lines.Text() != "leading" {
		t.Fatalf("child: %q", lines.Text())
	}
	// The child leads: this process follows, and sees its write through the child.
	waitFor(t, e.runner, appendSession(t, e.store, "ses_before"))
	if e.runner.Leading() {
		t.Fatal("this process leads while the child holds the leadership")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	started := time.Now()
	pos := appendSession(t, e.store, "ses_after")
	waitFor(t, e.runner, pos)
	if !e.runner.Leading() || sessionRows(t, e, "ses_after") != 1 {
		t.Fatalf("after the leader was killed this process leads %v", e.runner.Leading())
	}
	t.Logf("the killed leader was replaced and the write projected in %s", time.Since(started))
}

// TestQueriesTakeParameters: the application's queries bind ids and directories as
// parameters, so a directory or id that is SQL in text form is only a value (issue 24 item 6:
// "no SQL built by string from ids"). Each row is a spelling that would break, or widen, a
// query spliced together from text.
func TestQueriesTakeParameters(t *testing.T) {
	dirs := []string{
		`/w/plain`,
		`/w/it's`,                        // a quote ends a spliced literal
		`/w/x' OR '1'='1`,                // widens a spliced WHERE to every row
		`/w/x'; DELETE FROM session; --`, // a second statement
		`/w/back\slash`,                  // a backslash escape on a non-standard dialect
		`/w/$1`,                          // a Postgres placeholder in the text
		`/w/?`,                           // a placeholder in the text
	}
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			e := d.env(t)
			ctx := context.Background()
			var pos uint64
			for i, dir := range dirs {
				id := fmt.Sprintf("ses_p%d", i)
				ev, err := events.Encode(events.DeriveID(id, 0), events.SessionCreated{SessionID: id, Title: "t", Agent: "build", Directory: dir},
					events.Metadata{CommandID: id, Actor: "user", Time: time.Now().UTC().Add(time.Duration(i) * time.Second)})
				if err != nil {
					t.Fatal(err)
				}
				res, err := e.store.Append(ctx, "session-"+id, events.NoStream, ev)
				if err != nil {
					t.Fatal(err)
				}
				pos = res.LastPosition
			}
			waitFor(t, e.runner, pos)
			for i, dir := range dirs {
				query, args := projections.LatestSessionQuery(dir)
				rows, err := e.rm.Query(ctx, query, 0, args...)
				if err != nil {
					t.Fatalf("latest session in %q: %v", dir, err)
				}
				if want := fmt.Sprintf("ses_p%d", i); len(rows.Rows) != 1 || rows.Rows[0][0] != want {
					t.Fatalf("latest session in %q: %v, want only %s", dir, rows.Rows, want)
				}
			}
			query, args := projections.SessionsQuery(3, false)
			rows, err := e.rm.Query(ctx, query, 0, args...)
			if err != nil || len(rows.Rows) != 3 {
				t.Fatalf("sessions limited to 3: %v, %v", rows, err)
			}
		})
	}
}
