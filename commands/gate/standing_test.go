package gate_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/gate"
	"github.com/zuno-run/zuno/commands/replay"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/transcript"
)

// Standing approvals are a fold of the session's log (docs/permissions.md, "Standing
// approvals"): every turn here runs with a new driver and a new gate, as a turn in another
// process would, so whatever a later turn honours came from the log.

// step is one action on the rig: a turn (answered with replies when interactive), or a
// revocation.
type step struct {
	session     string // "" is the rig's session
	interactive bool
	replies     []string
	cmd         string
	revoke      bool
}

func (r *rig) do(ctx context.Context, p permission.Policy, s step) {
	r.t.Helper()
	sid := r.session
	if s.session != "" {
		sid = s.session
	}
	if s.revoke {
		res, err := r.handlers.RevokeGrants(ctx, &commands.RevokeGrants{Meta: commands.Meta{CommandID: "revoke_" + s.cmd + sid},
			Revoke: permission.Revoke{SessionID: sid}})
		if err == nil {
			err = res.Err()
		}
		if err != nil {
			r.t.Fatal(err)
		}
		return
	}
	other := *r
	other.session = sid
	other.driver = &turn.Driver{Store: r.store, Registry: r.reg, Clock: commands.SystemClock{}} // another process
	if s.interactive {
		answerCtx, stop := context.WithCancel(ctx)
		defer stop()
		other.answerAsks(answerCtx, s.replies...)
	}
	other.run(ctx, p, s.interactive, s.cmd)
}

func (r *rig) createSession(id string) {
	r.t.Helper()
	res, err := r.handlers.CreateSession(context.Background(), &commands.CreateSession{Meta: commands.Meta{CommandID: "create_" + id},
		Create: session.Create{SessionID: id, Title: "t", Agent: "build"}})
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		r.t.Fatal(err)
	}
}

func TestStandingApprovalsAreFoldedFromTheLog(t *testing.T) {
	ask := `{"rules": {"shell": "ask"}}`
	for _, tc := range []struct {
		name   string
		policy string
		steps  []step
		// want is the last call's decision: source/action/reply.
		want string
		// granted counts the recorded grants of the rig's session.
		granted int
	}{
		{"once installs nothing: a later turn asks again", ask,
			[]step{{interactive: true, replies: []string{"once"}, cmd: "make test"}, {cmd: "make test"}},
			"no_terminal/deny/", 0},
		{"always is honoured by a later turn in another process", ask,
			[]step{{interactive: true, replies: []string{"always"}, cmd: "make test"}, {cmd: "make test -v"}},
			"standing/allow/once", 1},
		{"always covers only its pattern", ask,
			[]step{{interactive: true, replies: []string{"always"}, cmd: "make test"}, {cmd: "make build"}},
			"no_terminal/deny/", 1},
		{"reject installs nothing", ask,
			[]step{{interactive: true, replies: []string{"reject"}, cmd: "make test"}, {cmd: "make test"}},
			"no_terminal/deny/", 0},
		{"a one-off confirmation (no savable pattern) installs nothing", ask,
			[]step{{interactive: true, replies: []string{"always"}, cmd: "make && make"}, {cmd: "make && make"}},
			"no_terminal/deny/", 0},
		{"strict mode records no grant and honours none", `{"mode": "strict", "rules": {"shell": "allow"}}`,
			[]step{{interactive: true, replies: []string{"always"}, cmd: "make test"}, {cmd: "make test"}},
			"no_terminal/deny/", 0},
		{"a revocation ends the grant for later turns", ask,
			[]step{{interactive: true, replies: []string{"always"}, cmd: "make test"}, {revoke: true}, {cmd: "make test"}},
			"no_terminal/deny/", 1},
		{"a grant after a revocation holds", ask,
			[]step{{interactive: true, replies: []string{"always"}, cmd: "make test"}, {revoke: true, cmd: "1"},
				{interactive: true, replies: []string{"always"}, cmd: "make test"}, {cmd: "make test"}},
			"standing/allow/once", 2},
		{"another session's always is not this session's", ask,
			[]step{{session: "ses_other", interactive: true, replies: []string{"always"}, cmd: "make test"}, {cmd: "make test"}},
			"no_terminal/deny/", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t)
			r.createSession("ses_other")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			p := r.policy(tc.policy)
			for _, s := range tc.steps {
				r.do(ctx, p, s)
			}
			ds := r.decisions()
			last := ds[len(ds)-1]
			if got := last.Source + "/" + last.Action + "/" + last.Reply; got != tc.want {
				t.Fatalf("last decision %s, want %s (all %+v)", got, tc.want, ds)
			}
			if got := len(r.granted()); got != tc.granted {
				t.Fatalf("%d grants recorded, want %d", got, tc.granted)
			}
		})
	}
}

// TestRevokeGrantsWhileATurnIsOpen: the revocation is refused while a turn of the session is
// open (it is the stream's single writer), with the code and a fix; afterwards it is recorded.
func TestRevokeGrantsWhileATurnIsOpen(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p := r.policy(`{"rules": {"shell": "ask"}}`)
	r.do(ctx, p, step{interactive: true, replies: []string{"always"}, cmd: "make test"})
	// A second turn waits on an ask: the turn is open while it waits.
	waiting, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); r.run(waiting, p, true, "go vet") }()
	for len(r.asks()) < 2 {
		time.Sleep(time.Millisecond)
	}
	res, err := r.handlers.RevokeGrants(ctx, &commands.RevokeGrants{Meta: commands.Meta{CommandID: "revoke_open"},
		Revoke: permission.Revoke{SessionID: r.session}})
	var de *domain.Error
	if err != nil || !errors.As(res.Err(), &de) || de.Code() != transcript.CodeTurnOpen || !strings.Contains(de.Error(), "Ctrl-C") {
		t.Fatalf("revoke during a turn: %+v %v", res, err)
	}
	stop()
	<-done
	res, err = r.handlers.RevokeGrants(ctx, &commands.RevokeGrants{Meta: commands.Meta{CommandID: "revoke_after"},
		Revoke: permission.Revoke{SessionID: r.session}})
	if err != nil || res.Err() != nil || res.Events != 1 {
		t.Fatalf("revoke after the turn: %+v %v", res, err)
	}
}

// TestReplayHonoursAnEarlierTurnsAlways: a session whose second turn ran on the first turn's
// always replays with every decision agreeing: the replayed driver folds the recorded grant
// from the history before the turn, as the run did.
func TestReplayHonoursAnEarlierTurnsAlways(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p := r.policy(`{"rules": {"shell": "ask"}}`)
	r.do(ctx, p, step{interactive: true, replies: []string{"always"}, cmd: "make test"})
	r.do(ctx, p, step{cmd: "make test -v"})
	if ds := r.decisions(); len(ds) != 2 || ds[1].Source != gate.SourceStanding {
		t.Fatalf("decisions %+v", ds)
	}
	build := func(_ context.Context, tr replay.Turn) (turn.Request, func() error, error) {
		g := gate.New(gate.Config{Policy: p, Tools: []tools.Tool{r.tool}, Workspace: "/ws", Home: "/home/u", Interactive: tr.Interactive})
		return turn.Request{Agent: agent.Agent{Name: "build", Tools: []string{"shell"}}, Model: model.ModelInfo{ID: "scripted"},
			Tools: []turn.Tool{r.tool}, Gate: g}, func() error { return nil }, nil
	}
	rep, err := replay.Session(ctx, r.store, r.reg, r.session, build)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Turns != 2 || rep.Err() != nil {
		t.Fatalf("replay: %d turns, %+v", rep.Turns, rep.Differences)
	}
}
