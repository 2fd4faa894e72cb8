package projections_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// The crash tests run this test binary again as a child that appends in a loop (with a live
// projection runner beside it) and reports each acknowledged event on stdout; the parent kills
// it with SIGKILL mid-flight, then checks the log and the read models.
const crashChildEnv = "ZUNO_CRASH_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(crashChildEnv); spec != "" {
		crashChild(spec)
		return
	}
	if url := os.Getenv(leaderChildEnv); url != "" {
		leaderChild(url)
		return
	}
	os.Exit(m.Run())
}

// crashChild appends from 8 goroutines until killed. spec is "sqlite:<path>" or "postgres:<url>".
func crashChild(spec string) {
	ctx := context.Background()
	kind, target, _ := strings.Cut(spec, ":")
	var (
		store *sqlstore.Store
		rm    *readmodel.DB
		err   error
	)
	if kind == "sqlite" {
		store, err = sqlstore.OpenSQLite(ctx, target)
		if err == nil {
			rm, err = readmodel.OpenSQLite(ctx, target)
		}
	} else {
		store, err = sqlstore.OpenPostgres(ctx, target)
		if err == nil {
			rm, err = readmodel.OpenPostgres(ctx, target)
		}
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	runner := projections.NewRunner(rm.Writer, store, registry, projections.All(), projections.WithBatchSize(50))
	go runner.Run(ctx)
	var out sync.Mutex
	for w := range 8 {
		go func() {
			for i := 0; ; i++ {
				sid := fmt.Sprintf("crash-%d-%d", w, i)
				created, _ := events.Encode(events.DeriveID(sid, 0), events.SessionCreated{SessionID: sid, Title: "t", Agent: "build"},
					events.Metadata{CommandID: sid, Actor: "host", Time: time.Now().UTC()})
				msg, _ := events.Encode(events.DeriveID(sid, 1), events.UserMessageAppended{SessionID: sid, MessageID: "m", Text: strings.Repeat("x", 200)},
					events.Metadata{CommandID: sid, Actor: "host", Time: time.Now().UTC()})
				if _, err := store.Append(ctx, "session-"+sid, events.NoStream, created, msg); err != nil {
					out.Lock()
					fmt.Println("error", err)
					out.Unlock()
					os.Exit(1)
				}
				out.Lock()
				fmt.Println("ack", created.ID, msg.ID)
				out.Unlock()
			}
		}()
	}
	select {}
}

func testCrash(t *testing.T, spec string, reopen func() *env) {
	if testing.Short() {
		t.Skip("kills a real process; skipped in -short")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+spec)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && len(acked) < 3000 {
		f := strings.Fields(lines.Text())
		if len(f) == 3 && f[0] == "ack" {
			acked[f[1]], acked[f[2]] = true, true
		} else {
			t.Fatalf("child: %s", lines.Text())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Acks already written to the pipe before the kill count too.
	for lines.Scan() {
		if f := strings.Fields(lines.Text()); len(f) == 3 && f[0] == "ack" {
			acked[f[1]], acked[f[2]] = true, true
		}
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL: %v", err)
	}

	ackedCount := len(acked)
	e := reopen()
	ctx := context.Background()
	log, err := e.store.ReadAll(ctx, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	revs := map[string]uint64{}
	for i, r := range log {
		if r.Position != uint64(i+1) {
			t.Fatalf("gap in the log: event %d has position %d", i, r.Position)
		}
		if _, err := registry.Decode(r); err != nil {
			t.Fatalf("torn event at position %d: %v", r.Position, err)
		}
		if want := revs[r.Stream]; r.StreamRevision != want {
			t.Fatalf("stream %s: revision %d, want %d", r.Stream, r.StreamRevision, want)
		}
		revs[r.Stream]++
		delete(acked, r.ID)
	}
	if len(log)%2 != 0 {
		t.Fatalf("%d events: an append of two events was cut in half", len(log))
	}
	if len(acked) > 0 {
		t.Fatalf("%d acknowledged events are missing after the crash", len(acked))
	}
	// The projections, killed mid-batch too, catch up to exactly the log.
	if _, err := e.runner.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	rows := dump(t, e.rm.Writer)
	if len(rows["event"]) != len(log) || len(rows["session"]) != len(log)/2 {
		t.Fatalf("read models: %d events and %d sessions for a log of %d events", len(rows["event"]), len(rows["session"]), len(log))
	}
	for _, s := range rows["session"] {
		if !strings.Contains(s, "|1|") { // message_count: each message applied exactly once
			t.Fatalf("session row %s: message applied other than once", s)
		}
	}
	t.Logf("killed after %d acknowledged events; the log holds %d events, none missing, none torn; read models match", ackedCount, len(log))
}

func TestCrashSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zuno.db")
	testCrash(t, "sqlite:"+path, func() *env { return sqliteEnvAt(t, path) })
}

func TestCrashPostgres(t *testing.T) {
	url := pgtest.NewDatabase(t)
	testCrash(t, "postgres:"+url, func() *env { return postgresEnvAt(t, url) })
}
