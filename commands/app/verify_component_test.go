package app_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/verify"
	"github.com/zuno-run/zuno/domain/sandbox"
)

// zuno verify and the read models' administration through the Application, over a log a real
// turn wrote.
func TestComponentVerify(t *testing.T) {
	c := newComponent(t)
	ctx := context.Background()
	cmds, q := c.app.Commands, c.app.Queries
	session := c.run(t, app.RunTurn{Meta: meta("run-1"), Prompt: "write a note", Model: c.script("turn", turnScript)}).SessionID
	if _, err := cmds.CreateSession(ctx, meta("create-b"), app.NewSession{SessionID: "ses_b", Title: "two", Agent: "build"}); err != nil {
		t.Fatal(err)
	}
	all, err := q.Events(ctx, "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	anchor := filepath.Join(t.TempDir(), "anchor.json")

	t.Run("the whole log verifies, with no drift, and the first anchor is written", func(t *testing.T) {
		rep, err := cmds.Verify(ctx, app.VerifyRequest{Anchor: anchor, AnchorResolved: anchor})
		if err != nil || !rep.OK || rep.Events != uint64(len(all)) || len(rep.Faults) != 0 || len(rep.Drift) != 0 {
			t.Fatalf("report %+v, %v", rep, err)
		}
		if a := rep.Anchor; a == nil || a.Compared || !a.Written || a.Streams != rep.Streams {
			t.Fatalf("anchor %+v", rep.Anchor)
		}
		if _, err := os.Stat(anchor); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("the next run compares with the anchor and renews it as the next of its chain", func(t *testing.T) {
		rep, err := cmds.Verify(ctx, app.VerifyRequest{Anchor: anchor, AnchorResolved: anchor})
		if err != nil || !rep.Anchor.Compared || !rep.Anchor.Written || rep.Anchor.Counter != 2 {
			t.Fatalf("report %+v, %v", rep.Anchor, err)
		}
		// The log records each anchor it was given (stream anchors).
		recs, err := q.Events(ctx, commands.AnchorStream, 0, 0)
		if err != nil || len(recs) != 2 {
			t.Fatalf("the log's record of anchoring: %d events, %v", len(recs), err)
		}
		// Those records are part of the log from now on.
		if all, err = q.Events(ctx, "", 0, 0); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("one session's streams verify without the read models", func(t *testing.T) {
		rep, err := cmds.Verify(ctx, app.VerifyRequest{Session: session})
		if err != nil || !rep.OK || rep.Events == 0 || rep.Events >= uint64(len(all)) || rep.Drift == nil {
			t.Fatalf("report %+v, %v", rep, err)
		}
	})
	t.Run("a session or stream with no events is a usage error", func(t *testing.T) {
		_, err := cmds.Verify(ctx, app.VerifyRequest{Session: "ses_nope"})
		code(t, err, app.CodeUsage)
		_, err = cmds.Verify(ctx, app.VerifyRequest{Stream: "session-nope"})
		code(t, err, app.CodeUsage)
	})
	t.Run("an anchor inside a recorded workspace is refused", func(t *testing.T) {
		inside := filepath.Join(c.workspace, "anchor.json")
		resolved, _ := filepath.EvalSymlinks(c.workspace)
		_, err := cmds.Verify(ctx, app.VerifyRequest{Anchor: inside, AnchorResolved: filepath.Join(resolved, "anchor.json")})
		code(t, err, sandbox.CodeLogInWorkspace)
		if _, err := os.Stat(inside); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("an anchor was written in the workspace: %v", err)
		}
	})
	t.Run("a read-model row changed outside zuno is drift, and the anchor is left as it was", func(t *testing.T) {
		before, err := os.ReadFile(anchor)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.rm.Writer.ExecContext(ctx, `UPDATE session SET title = 'evil' WHERE id = 'ses_b'`); err != nil {
			t.Fatal(err)
		}
		rep, err := cmds.Verify(ctx, app.VerifyRequest{Anchor: anchor, AnchorResolved: anchor})
		var failed *verify.FailedError
		if !errors.As(err, &failed) || failed.Drift != 2 || rep.OK || len(rep.Faults) != 0 {
			t.Fatalf("report %+v, %v", rep, err)
		}
		kinds := map[string]bool{}
		for _, d := range rep.Drift {
			kinds[d.Kind+" "+d.Row["title"]] = d.Table == "session"
		}
		if !kinds["extra evil"] || !kinds["missing two"] {
			t.Fatalf("drift %+v", rep.Drift)
		}
		if rep.Anchor == nil || rep.Anchor.Written {
			t.Fatalf("anchor %+v", rep.Anchor)
		}
		after, _ := os.ReadFile(anchor)
		if string(after) != string(before) {
			t.Fatal("the anchor changed although the log did not verify")
		}
	})
	t.Run("a rebuild replays every event and ends the drift", func(t *testing.T) {
		r, err := cmds.RebuildProjections(ctx)
		if err != nil || r.Events != len(all) || r.Projectors != nil {
			t.Fatalf("rebuilt %+v, %v", r, err)
		}
		if rep, err := cmds.Verify(ctx, app.VerifyRequest{}); err != nil || !rep.OK {
			t.Fatalf("after the rebuild: %+v, %v", rep.Drift, err)
		}
		if _, err := cmds.RebuildProjections(ctx, "no_such_projector"); err == nil {
			t.Fatal("an unknown projector was rebuilt")
		}
	})
	t.Run("an anchor that does not read is an error of the run", func(t *testing.T) {
		garbage := filepath.Join(t.TempDir(), "garbage.json")
		if err := os.WriteFile(garbage, []byte("not an anchor"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := cmds.Verify(ctx, app.VerifyRequest{Stream: "session-ses_b", Anchor: garbage, AnchorResolved: garbage}); err == nil {
			t.Fatal("a garbage anchor verified")
		}
	})
	t.Run("every run that verified something is counted by scope and result", func(t *testing.T) {
		// Three runs of the whole log verified (two with the anchor, one after the rebuild),
		// one failed on drift; one session verified; one stream's run could not read its
		// anchor. The usage errors and the anchor refused in a workspace verified nothing and
		// are not counted.
		want := `
# HELP zuno_verify_runs_total Verification runs, by scope (all, session, stream) and result (verified, failed, error).
# TYPE zuno_verify_runs_total counter
zuno_verify_runs_total{result="failed",scope="all"} 1
zuno_verify_runs_total{result="verified",scope="all"} 3
zuno_verify_runs_total{result="error",scope="stream"} 1
zuno_verify_runs_total{result="verified",scope="session"} 1
`
		if err := testutil.GatherAndCompare(c.metrics, strings.NewReader(want), "zuno_verify_runs_total"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("after a catch-up no projector lags", func(t *testing.T) {
		pos, err := cmds.CatchUpProjections(ctx)
		if err != nil || pos != all[len(all)-1].Position {
			t.Fatalf("caught up to %d, %v", pos, err)
		}
		st, err := q.ProjectionStatus(ctx)
		if err != nil || len(st) == 0 {
			t.Fatalf("status %+v, %v", st, err)
		}
		for _, s := range st {
			if s.Lag != 0 || s.Head != pos {
				t.Fatalf("projector %+v", s)
			}
		}
	})
}
