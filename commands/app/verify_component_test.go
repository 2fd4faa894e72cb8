package app_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

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
