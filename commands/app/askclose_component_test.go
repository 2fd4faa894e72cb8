package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/instructions"
	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/adapters/tools/toolset"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/live"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/answers"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// A permission reply racing the end of the turn that asked (docs/permissions.md, "Recovery").
// The turn closes the ask in the session's inbox before it settles the waiting call; the
// inbox's revision decides between the reply and the close, so exactly one is recorded, and a
// reply that loses is ask_not_pending. Every row runs the real turn driver holding a real
// lease, over a real SQLite file and a real PostgreSQL database, answering and interrupting
// through the Application's commands as the faces do.

// askApp is one process's Application over a real event store, with a rule that asks before
// every edit.
type askApp struct {
	app       *app.Application
	leases    *commands.Leases
	store     *sqlstore.Store
	registry  *events.Registry
	workspace string
	script    string
}

func newAskApp(t *testing.T, postgres bool) *askApp { return newAskAppLeased(t, postgres, time.Minute) }

// newAskAppLeased is newAskApp whose turns hold leases of length ttl.
func newAskAppLeased(t *testing.T, postgres bool, ttl time.Duration) *askApp {
	t.Helper()
	ctx := context.Background()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var store *sqlstore.Store
	var rm *readmodel.DB
	var err error
	if postgres {
		url := pgtest.NewDatabase(t)
		if store, err = sqlstore.OpenPostgres(ctx, url); err == nil {
			rm, err = readmodel.OpenPostgres(ctx, url)
		}
	} else {
		path := filepath.Join(t.TempDir(), "zuno.db")
		if store, err = sqlstore.OpenSQLite(ctx, path); err == nil {
			rm, err = readmodel.OpenSQLite(ctx, filepath.Join(t.TempDir(), "rm.db"))
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	registry := events.NewRegistry(events.AllPayloads()...)
	runner := projections.NewRunner(rm.Writer, store, registry, projections.All())
	handlers := commands.NewHandlers(store, registry, commands.SystemClock{}, nil)
	bus, err := commands.StartBus(ctx, handlers, commands.GoChannelTransport(commands.NewGoChannel(nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	feed := live.New(store)
	feedCtx, stopFeed := context.WithCancel(ctx)
	go feed.Run(feedCtx)
	clock := commands.SystemClock{}
	leases := &commands.Leases{Store: store, Registry: registry, Clock: clock, Holder: "test/1/askclose", TTL: ttl}
	scripts := t.TempDir()
	a := &askApp{store: store, registry: registry, workspace: t.TempDir(), leases: leases,
		script: writeScript(t, scripts, "write", `{"turns":[{"toolCalls":[{"id":"w1","name":"write","arguments":{"path":"a.txt","content":"A\n"}}]},{"text":"written"}]}`)}
	artifacts := t.TempDir()
	set := app.Settings{Model: a.script, Home: t.TempDir(),
		Permission: []settings.Raw{{Layer: settings.Global, Source: "test", JSON: json.RawMessage(`{"rules": {"edit": "ask"}}`)}}}
	a.app = app.New(set, nil, app.Ports{
		Send:         bus.Send,
		Log:          store,
		Driver:       &turn.Driver{Store: store, Registry: registry, Clock: clock, Leases: leases, Feed: feed},
		OpenProvider: func(spec string) (model.Provider, error) { return provider.Open(spec) },
		Configure: func(dir string) (app.SessionConfig, error) {
			return app.SessionConfig{Settings: set, OpenTools: func(req turn.ToolsRequest) (turn.Surface, error) {
				ts, err := toolset.New(toolset.Config{Root: req.Dir, ArtifactDir: filepath.Join(artifacts, req.SessionID), SessionID: req.SessionID})
				if err != nil {
					return nil, err
				}
				return surface(slices.Clone(ts.Tools())), nil
			}}, nil
		},
		Feed:         feed,
		Instructions: instructions.Read,
		Projections:  runner,
		Jobs:         handlers,
		Work:         handlers.Work,
	}, queries.New(store, registry, readModels{rm}, runner))
	t.Cleanup(func() {
		stopFeed()
		bus.Close()
		runner.Close()
		rm.Close()
		store.Close()
	})
	return a
}

// asking starts a turn that waits in this process for the answer to its ask (ask_w1), and
// returns its session once the ask is pending; done yields the turn's end.
func (a *askApp) asking(t *testing.T, id string) (sid string, done <-chan error) {
	t.Helper()
	ch := make(chan error, 1)
	ctx := context.Background()
	go func() {
		res, err := a.app.Commands.RunTurn(ctx, app.RunTurn{Meta: meta("run-" + id), Prompt: "write a", Cwd: a.workspace, Interactive: true})
		if err == nil && res.SessionID == "" {
			err = fmt.Errorf("no session")
		}
		ch <- err
	}()
	// The session's id derives from the command id; wait for its ask.
	sid = app.NewSessionID("run-" + id)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if asks, err := a.app.Queries.Asks(ctx, sid); err == nil && len(asks) == 1 && asks[0].Pending {
			return sid, ch
		}
		select {
		case err := <-ch:
			t.Fatalf("the turn ended before it asked: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	t.Fatal("no pending ask")
	return "", nil
}

// reply answers ask_w1 as the command every face sends.
func (a *askApp) reply(sid, id, reply string) error {
	res, err := a.app.Commands.AnswerPermission(context.Background(), meta("reply-"+id), sid, "ask_w1", "w1", reply)
	if err == nil {
		err = res.Err()
	}
	return err
}

func (a *askApp) interrupt(sid, id string) error {
	res, err := a.app.Commands.InterruptTurn(context.Background(), meta("stop-"+id), sid, "")
	if err == nil {
		err = res.Err()
	}
	return err
}

// askRecord is what the log holds about ask_w1 of one session.
type askRecord struct {
	answered, closed []events.Payload
	started, granted bool
	settled          string // the call's outcome, "" when not settled
	finished         string // the turn's finish reason
	view             queries.AskView
}

func (a *askApp) record(t *testing.T, sid string) askRecord {
	t.Helper()
	ctx := context.Background()
	var r askRecord
	for _, stream := range []string{commands.InboxStream(sid), commands.SessionStream(sid)} {
		if _, err := commands.Load(ctx, a.store, a.registry, stream, 0, func(_ events.Recorded, p events.Payload) error {
			switch e := p.(type) {
			case events.PermissionAnswered:
				r.answered = append(r.answered, e)
			case events.PermissionClosed:
				r.closed = append(r.closed, e)
			case events.ToolStarted:
				r.started = r.started || e.CallID == "w1"
			case events.PermissionGranted:
				r.granted = true
			case events.ToolSettled:
				if e.CallID == "w1" {
					r.settled = e.Outcome
				}
			case events.TurnFinished:
				r.finished = e.Reason
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	asks, err := a.app.Queries.Asks(ctx, sid)
	if err != nil || len(asks) != 1 {
		t.Fatalf("asks %+v, %v", asks, err)
	}
	r.view = asks[0]
	return r
}

// check holds one session to the rule: exactly one of the reply and the close is recorded; a
// reply refused is ask_not_pending and only then; a closed ask ran nothing, granted nothing and
// reads closed; a call that ran was answered.
func (r askRecord) check(t *testing.T, replyErr error, reply string) {
	t.Helper()
	if len(r.answered)+len(r.closed) != 1 {
		t.Fatalf("want exactly one of answer and close, got answers %v, closes %v", r.answered, r.closed)
	}
	switch code := app.CodeOf(replyErr); {
	case replyErr == nil && len(r.answered) == 1:
		if r.view.Pending || r.view.Closed || r.view.Reply != reply {
			t.Fatalf("answered ask reads %+v", r.view)
		}
	case code == answers.CodeAskNotPending && len(r.closed) == 1:
		if r.started || r.granted || r.settled != "cancelled" {
			t.Fatalf("a closed ask's call: started %v granted %v settled %q", r.started, r.granted, r.settled)
		}
		if r.view.Pending || !r.view.Closed || r.view.Reply != "" || r.view.ClosedReason != events.AskClosedInterrupted {
			t.Fatalf("closed ask reads %+v", r.view)
		}
	default:
		t.Fatalf("reply error %v (code %q) with answers %v, closes %v", replyErr, code, r.answered, r.closed)
	}
	if r.started && len(r.answered) == 0 {
		t.Fatal("the call ran unanswered")
	}
	if r.granted && (len(r.answered) == 0 || r.answered[0].(events.PermissionAnswered).Reply != answers.ReplyAlways) {
		t.Fatal("a grant without an always answer")
	}
	if r.finished == "" {
		t.Fatal("the turn did not finish")
	}
}

func wait(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("turn: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the turn did not end")
	}
}

func TestAskCloseRaces(t *testing.T) {
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			a := newAskApp(t, dialect == "postgres")
			// latency is how long an interrupt takes to end a waiting turn here (it travels
			// through the turn's lease stream and the live feed): the races below send their
			// replies spread around it.
			latency := 100 * time.Millisecond

			t.Run("interrupt then reply: the reply is ask_not_pending and nothing is recorded", func(t *testing.T) {
				sid, done := a.asking(t, "ir")
				begun := time.Now()
				if err := a.interrupt(sid, "ir"); err != nil {
					t.Fatal(err)
				}
				wait(t, done)
				latency = time.Since(begun)
				err := a.reply(sid, "ir", "once")
				r := a.record(t, sid)
				r.check(t, err, "once")
				if len(r.closed) != 1 || r.finished != events.FinishInterrupted {
					t.Fatalf("want the close: %+v", r)
				}
				// The same reply again, under its own command id or another: refused, never recorded.
				if err := a.reply(sid, "ir", "once"); app.CodeOf(err) != answers.CodeAskNotPending {
					t.Fatalf("again: %v", err)
				}
				if err := a.reply(sid, "ir-2", "always"); app.CodeOf(err) != answers.CodeAskNotPending {
					t.Fatalf("always after the close: %v", err)
				}
				if r := a.record(t, sid); len(r.answered) != 0 || r.granted {
					t.Fatalf("a refused reply was recorded: %+v", r)
				}
			})

			t.Run("reply then interrupt: the reply is recorded and no close", func(t *testing.T) {
				sid, done := a.asking(t, "ri")
				err := a.reply(sid, "ri", "once")
				if ierr := a.interrupt(sid, "ri"); ierr != nil && app.CodeOf(ierr) != "turn_not_running" {
					t.Fatal(ierr)
				}
				wait(t, done)
				r := a.record(t, sid)
				r.check(t, err, "once")
				if len(r.answered) != 1 {
					t.Fatalf("want the answer: %+v", r)
				}
				// The same reply again records nothing; another is already_answered.
				res, err := a.app.Commands.AnswerPermission(context.Background(), meta("ri-again"), sid, "ask_w1", "w1", "once")
				if err != nil || res.Err() != nil || res.Events != 0 {
					t.Fatalf("the same reply again: %+v %v", res, err)
				}
				if err := a.reply(sid, "ri-other", "reject"); app.CodeOf(err) != answers.CodeAlreadyAnswered {
					t.Fatalf("another reply: %v", err)
				}
			})

			t.Run("a reply naming another session's ask is ask_not_found", func(t *testing.T) {
				sid, done := a.asking(t, "other")
				other, res, err := a.app.Commands.OpenSession(context.Background(), meta("other-session"), "other", "", a.workspace)
				if err != nil || res.Err() != nil {
					t.Fatal(err, res.Err())
				}
				// ask_w1 is an ask of sid, not of other: nothing is recorded in either inbox.
				if err := a.reply(other, "other", "once"); app.CodeOf(err) != commands.CodeAskNotFound {
					t.Fatalf("got %v", err)
				}
				if asks, err := a.app.Queries.Asks(context.Background(), sid); err != nil || !asks[0].Pending {
					t.Fatalf("the asking session's ask: %+v %v", asks, err)
				}
				if err := a.interrupt(sid, "other"); err != nil {
					t.Fatal(err)
				}
				wait(t, done)
				r := a.record(t, sid)
				r.check(t, a.reply(sid, "other-late", "once"), "once")
				if len(r.closed) != 1 {
					t.Fatalf("want the close: %+v", r)
				}
			})

			// Both at once, many times: whichever wins, the log says one thing. "always" racing
			// the close grants nothing when the close wins.
			for _, reply := range []string{"once", "always", "reject"} {
				t.Run("reply "+reply+" and interrupt at once", func(t *testing.T) {
					won := map[string]int{}
					for i := range 12 {
						id := fmt.Sprintf("race-%s-%d", reply, i)
						sid, done := a.asking(t, id)
						var wg sync.WaitGroup
						var replyErr, stopErr error
						start := make(chan struct{})
						wg.Add(2)
						// The reply is sent from at once to about when the interrupt lands, so
						// both orders and the overlap between them are met.
						lag := latency * time.Duration(i) / 8
						go func() { defer wg.Done(); <-start; time.Sleep(lag); replyErr = a.reply(sid, id, reply) }()
						go func() { defer wg.Done(); <-start; stopErr = a.interrupt(sid, id) }()
						close(start)
						wg.Wait()
						if stopErr != nil && app.CodeOf(stopErr) != "turn_not_running" {
							t.Fatal(stopErr)
						}
						wait(t, done)
						r := a.record(t, sid)
						r.check(t, replyErr, reply)
						if len(r.closed) == 1 {
							won["close"]++
						} else {
							won["reply"]++
						}
					}
					t.Logf("%s: %v (interrupt latency %v)", reply, won, latency)
				})
			}
		})
	}
}

// A log recorded before asks were closed holds none: a reply to an ask whose call was settled
// there is recorded, as that build recorded it, and the ask reads answered, never closed.
func TestAskOfAnOldLogTakesItsReplyAsBefore(t *testing.T) {
	a := newAskApp(t, false)
	ctx := context.Background()
	sid, res, err := a.app.Commands.OpenSession(ctx, meta("old-session"), "old", "", a.workspace)
	if err != nil || res.Err() != nil {
		t.Fatal(err, res.Err())
	}
	// What an older build recorded for a turn interrupted while it waited: the ask, then the
	// call settled cancelled, and nothing in the inbox.
	w := commands.Writer{Store: a.store, Stream: commands.SessionStream(sid), Meta: meta("old-turn"), Clock: commands.SystemClock{}, Revision: res.Revision}
	if _, err := w.Append(ctx,
		events.PermissionAsked{SessionID: sid, TurnID: "turn_old", RequestID: "req_old", CallID: "o1", AskID: "ask_o1", Tool: "write", Key: "edit", Mode: "standard"},
		events.ToolSettled{SessionID: sid, TurnID: "turn_old", RequestID: "req_old", CallID: "o1", Tool: "write", Outcome: "cancelled", ErrorCode: "interrupted"},
	); err != nil {
		t.Fatal(err)
	}
	res, err = a.app.Commands.AnswerPermission(ctx, meta("old-reply"), sid, "ask_o1", "o1", "once")
	if err != nil || res.Err() != nil || res.Events != 1 {
		t.Fatalf("the reply: %+v %v", res, err)
	}
	asks, err := a.app.Queries.Asks(ctx, sid)
	if err != nil || len(asks) != 1 || asks[0].Reply != "once" || asks[0].Pending || asks[0].Closed {
		t.Fatalf("asks %+v %v", asks, err)
	}
}

// skewed is a clock ahead of the process's: the lease its process renews has expired for it.
type skewed struct{ by time.Duration }

func (s skewed) Now() time.Time { return time.Now().UTC().Add(s.by) }

// A run whose lease is taken over is no longer its session's writer: when the taker (the
// reaction to an expired lease, here in another "process" whose clock sees the lease expired)
// records the waiting turn suspended, the run that lost the lease stops without closing the
// ask, which stays answerable for the turn's resumption (suspension closes nothing).
func TestALostLeaseClosesNoAsk(t *testing.T) {
	a := newAskAppLeased(t, false, 600*time.Millisecond)
	ctx := context.Background()
	sid, done := a.asking(t, "lost")
	clock := skewed{time.Hour}
	other := &turn.Driver{Store: a.store, Registry: a.registry, Clock: clock,
		Leases: &commands.Leases{Store: a.store, Registry: a.registry, Clock: clock, Holder: "test/2/taker", TTL: time.Minute}}
	open, err := other.Open(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	out, err := other.Settle(ctx, meta("settle-lost"), sid, open.Started.TurnID, commands.Inbox{Store: a.store, Registry: a.registry})
	if err != nil || out.Reason != turn.ReasonSuspended {
		t.Fatalf("the takeover: %+v %v", out, err)
	}
	select { // the first process finds its lease lost at its next renewal and stops
	case err := <-done:
		t.Logf("the first run ended: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the run that lost its lease did not stop")
	}
	r := a.record(t, sid)
	if len(r.closed) != 0 || !r.view.Pending || r.view.Closed || r.settled != "" {
		t.Fatalf("after the takeover: %+v", r)
	}
	if err := a.reply(sid, "lost", "once"); err != nil {
		t.Fatalf("the suspended turn's ask takes its answer: %v", err)
	}
}
