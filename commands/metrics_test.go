package commands_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/session"
)

func TestCommandMetrics(t *testing.T) {
	store, err := sqlstore.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "e.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	reg := prometheus.NewPedanticRegistry()
	h := commands.NewHandlers(store, registry, fixedClock{}, commands.NewMetrics(reg))
	create := &commands.CreateSession{Meta: meta("m1"), Create: session.Create{SessionID: "ses_m", Title: "t", Agent: "build"}}
	h.CreateSession(context.Background(), create)
	h.CreateSession(context.Background(), create)
	h.CreateSession(context.Background(), &commands.CreateSession{Meta: meta("m2"), Create: session.Create{SessionID: "ses_m", Title: "t", Agent: "build"}})

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
}
