package commands_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/work"
)

// metricsRig is handlers over a real SQLite log with their metrics in a registry of their own.
func metricsRig(t *testing.T) (*commands.Handlers, *prometheus.Registry) {
	t.Helper()
	store, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "e.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	reg := prometheus.NewPedanticRegistry()
	return commands.NewHandlers(store, registry, fixedClock{}, commands.NewMetrics(reg)), reg
}

// The bus's routes count each command by outcome and time it: the decorator is applied where
// the bus is assembled.
func TestCommandMetricsOnTheBus(t *testing.T) {
	h, reg := metricsRig(t)
	ctx := context.Background()
	bus, err := commands.StartBus(ctx, h, commands.GoChannelTransport(commands.NewGoChannel(nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	create := &commands.CreateSession{Meta: meta("m1"), Create: session.Create{SessionID: "ses_m", Title: "t", Agent: "build"}}
	bus.Send(ctx, create)
	bus.Send(ctx, create)
	bus.Send(ctx, &commands.CreateSession{Meta: meta("m2"), Create: session.Create{SessionID: "ses_m", Title: "t", Agent: "build"}})

	want := `
# HELP zuno_commands_handled_total Commands handled, by command and outcome (ok, duplicate, or the error code).
# TYPE zuno_commands_handled_total counter
zuno_commands_handled_total{command="CreateSession",outcome="duplicate"} 1
zuno_commands_handled_total{command="CreateSession",outcome="ok"} 1
zuno_commands_handled_total{command="CreateSession",outcome="session_exists"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "zuno_commands_handled_total"); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg, "zuno_command_handling_seconds"); err != nil || n != 1 {
		t.Fatalf("handling latency series: %d, %v", n, err)
	}
	// Watermill's router metrics, on the same registry: the handler's time and the messages
	// its subscriber received, acknowledged (counted once the ack lands, so waited for).
	if n, err := testutil.GatherAndCount(reg, "zuno_watermill_handler_execution_time_seconds"); err != nil || n != 1 {
		t.Fatalf("watermill handler time series: %d, %v", n, err)
	}
	received := `
# HELP zuno_watermill_subscriber_messages_received_total The total number of messages received by the subscriber
# TYPE zuno_watermill_subscriber_messages_received_total counter
zuno_watermill_subscriber_messages_received_total{acked="acked",handler_name="CreateSession",subscriber_name="gochannel.GoChannel"} 3
`
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := testutil.GatherAndCompare(reg, strings.NewReader(received), "zuno_watermill_subscriber_messages_received_total")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A handler called as a method records nothing: metrics are not inside handlers.
func TestHandlerItselfRecordsNoMetrics(t *testing.T) {
	h, reg := metricsRig(t)
	res, _ := h.CreateSession(context.Background(), &commands.CreateSession{Meta: meta("m1"),
		Create: session.Create{SessionID: "ses_m", Title: "t", Agent: "build"}})
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := testutil.GatherAndCount(reg, "zuno_commands_handled_total", "zuno_command_handling_seconds"); err != nil || n != 0 {
		t.Fatalf("a bare handler recorded %d series (%v)", n, err)
	}
}

// The work tools call their handlers directly, through the same decorator (WorkCommands); a
// refused update is counted under its error code.
func TestWorkCommandsAreMeasured(t *testing.T) {
	h, reg := metricsRig(t)
	ctx := context.Background()
	w := h.WorkCommands()
	plan := &commands.UpdatePlan{Meta: meta("p1"), SessionID: "ses_w",
		Update: work.PlanUpdate{Action: "create", Title: "P", Steps: []work.StepInput{{Title: "read"}}}}
	if res, err := w.UpdatePlan(ctx, plan); err != nil || res.Err() != nil {
		t.Fatalf("update plan: %v %v", err, res.Err())
	}
	title := "t"
	todos := &commands.UpdateTodos{Meta: meta("t1"), SessionID: "ses_w",
		Update: work.TodoUpdate{Items: []work.TodoInput{{Title: &title}}}}
	if res, err := w.UpdateTodos(ctx, todos); err != nil || res.Err() != nil {
		t.Fatalf("update todos: %v %v", err, res.Err())
	}
	if res, _ := w.UpdatePlan(ctx, &commands.UpdatePlan{Meta: meta("p2"), SessionID: "ses_w",
		Update: work.PlanUpdate{Action: "levitate"}}); res.Err() == nil {
		t.Fatal("an unknown plan action was accepted")
	}
	st, err := w.Work(ctx, "ses_w")
	if err != nil || st.PlanView() == nil || st.PlanView().Title != "P" {
		t.Fatalf("work state after the update: %+v %v", st, err)
	}
	want := `
# HELP zuno_commands_handled_total Commands handled, by command and outcome (ok, duplicate, or the error code).
# TYPE zuno_commands_handled_total counter
zuno_commands_handled_total{command="UpdatePlan",outcome="invalid_action"} 1
zuno_commands_handled_total{command="UpdatePlan",outcome="ok"} 1
zuno_commands_handled_total{command="UpdateTodos",outcome="ok"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "zuno_commands_handled_total"); err != nil {
		t.Fatal(err)
	}
}
