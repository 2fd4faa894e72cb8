package bus_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"github.com/zuno-run/zuno/adapters/bus"
	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// node is one process's view: its own connections, transport and bus.
type node struct {
	bus   *commands.Bus
	store *sqlstore.Store
}

func startNode(t *testing.T, url string, worker bool) *node {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	transport, err := bus.NewPostgres(ctx, db, bus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	n := &node{}
	var handlers *commands.Handlers
	if worker {
		n.store, err = sqlstore.OpenPostgres(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		handlers = commands.NewHandlers(n.store, events.NewRegistry(events.AllPayloads()...), commands.SystemClock{}, nil)
	}
	tr := transport.Transport()
	// Workers run here: a reply may take longer than the interactive no-worker bound on a
	// loaded machine, and that bound has its own test (the bus_no_worker script).
	tr.NoWorkerAfter = 0
	n.bus, err = commands.StartBus(ctx, handlers, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.bus.Close()
		transport.Close()
		if n.store != nil {
			n.store.Close()
		}
		db.Close()
	})
	return n
}

// TestWorkersShareDurableBus: a sender with no handlers and two workers on one Postgres; every
// command is handled exactly once, and its result (or typed error) comes back to the sender.
func TestWorkersShareDurableBus(t *testing.T) {
	url := pgtest.NewDatabase(t)
	startNode(t, url, true)
	startNode(t, url, true)
	sender := startNode(t, url, false)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	const sessions = 24
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("ses_%02d", i)
			res, err := sender.bus.Send(ctx, &commands.CreateSession{
				Meta:   commands.Meta{CommandID: "create-" + id, Actor: "user"},
				Create: session.Create{SessionID: id, Title: "t", Agent: "build"}})
			if err != nil || res.Err() != nil || res.Events != 1 {
				t.Errorf("create %s: %+v %v %v", id, res, err, res.Err())
			}
		}()
	}
	wg.Wait()

	// Count what the log holds: one event per command, none twice.
	reader, err := sqlstore.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	log, err := reader.ReadAll(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(log) != sessions {
		t.Fatalf("log holds %d events for %d commands", len(log), sessions)
	}

	// A typed refusal crosses processes as the same typed error.
	plan := &commands.UpdatePlan{Meta: commands.Meta{CommandID: "plan-1", Actor: "build"}, SessionID: "ses_00",
		Update: work.PlanUpdate{Action: "create", Title: "P", Steps: []work.StepInput{{Title: "a"}}}}
	if res, err := sender.bus.Send(ctx, plan); err != nil || res.Err() != nil {
		t.Fatalf("plan create: %v %v", err, res.Err())
	}
	stale := uint64(0)
	res, err := sender.bus.Send(ctx, &commands.UpdatePlan{Meta: commands.Meta{CommandID: "plan-2", Actor: "build"}, SessionID: "ses_00",
		Update: work.PlanUpdate{Action: "patch", ExpectedRevision: &stale, Title: "x"}})
	var de *domain.Error
	if err != nil || !errors.As(res.Err(), &de) || de.Code() != domain.CodeStaleRevision {
		t.Fatalf("stale patch across processes: %v %v", err, res.Err())
	}
	// Re-sent: the first result, nothing written.
	again, err := sender.bus.Send(ctx, plan)
	if err != nil || !again.Duplicate {
		t.Fatalf("re-sent command: %+v %v", again, err)
	}
	if n, _ := reader.LastPosition(ctx); n != sessions+1 {
		t.Fatalf("log at %d after the plan commands, want %d", n, sessions+1)
	}
}

// A sender that gives up while its command is on the durable bus (its context ends, or its
// wait for the reply times out) is told the command may still be applied, with a typed code
// and the command id to re-send; the command stays queued, the first worker applies it, and
// re-sending it with the same id returns that result without applying it again. A command that
// never reached the bus is not pending: its error says why it was not sent.
func TestGivingUpLeavesCommandPending(t *testing.T) {
	url := pgtest.NewDatabase(t)
	sender := startNode(t, url, false)
	create := func(id string) *commands.CreateSession {
		return &commands.CreateSession{Meta: commands.Meta{CommandID: "create-" + id, Actor: "user"},
			Create: session.Create{SessionID: id, Title: "t", Agent: "build"}}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := sender.bus.Send(ctx, create("ses_a"))
	var pending *commands.CommandPendingError
	if !errors.As(err, &pending) || domain.CodeOf(err) != commands.CodeCommandPending || pending.CommandID != "create-ses_a" ||
		!errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("gave up by context: %v (%T)", err, err)
	}
	if want := "send it again with the same command id (create-ses_a)"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}

	// The reply timeout, with a caller that would wait for ever.
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	transport, err := bus.NewPostgres(context.Background(), db, bus.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer transport.Close()
	tr := transport.Transport()
	tr.NoWorkerAfter, tr.ReplyTimeout = 0, 500*time.Millisecond
	impatient, err := commands.StartBus(context.Background(), nil, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = impatient.Send(context.Background(), create("ses_b"))
	if !errors.As(err, &pending) || pending.CommandID != "create-ses_b" {
		t.Fatalf("gave up by the reply timeout: %v (%T)", err, err)
	}
	if depth, err := transport.QueueDepth(context.Background()); err != nil || depth["CreateSession"].Depth != 2 || depth["CreateSession"].OldestSeconds < 0.5 {
		t.Fatalf("queue depth with the two pending commands: %v %v", depth, err)
	}

	// A worker comes: both are applied once; re-sent, each returns its result as a duplicate.
	startNode(t, url, true)
	ctx, cancel = context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, id := range []string{"ses_a", "ses_b"} {
		res, err := sender.bus.Send(ctx, create(id))
		if err != nil || !res.Duplicate {
			t.Fatalf("re-sent %s: %+v %v", id, res, err)
		}
	}

	// Not sent at all: the publish fails, and that is not a pending command.
	impatient.Close()
	transport.Close()
	db.Close()
	_, err = impatient.Send(context.Background(), create("ses_c"))
	if err == nil || errors.As(err, &pending) || domain.CodeOf(err) == commands.CodeCommandPending {
		t.Fatalf("a command that was never published: %v (%T)", err, err)
	}
}
