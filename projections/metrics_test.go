package projections_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zuno-run/zuno/projections"
)

func TestProjectionMetrics(t *testing.T) {
	e := sqliteEnv(t)
	reg := prometheus.NewPedanticRegistry()
	runner := projections.NewRunner(e.rm.Writer, e.store, registry, projections.All(), projections.WithMetrics(projections.NewMetrics(reg)))
	n := scenario(t, e.store, 2)
	if _, err := runner.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := runner.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := strings.NewReader(`
# HELP zuno_projection_lag_events Positions between the log's head and each projector's checkpoint, as of the last status check.
# TYPE zuno_projection_lag_events gauge
zuno_projection_lag_events{projector="agent_job"} 0
zuno_projection_lag_events{projector="event"} 0
zuno_projection_lag_events{projector="goal"} 0
zuno_projection_lag_events{projector="inbox"} 0
zuno_projection_lag_events{projector="part"} 0
zuno_projection_lag_events{projector="permission_decision"} 0
zuno_projection_lag_events{projector="prompt_checkpoint"} 0
zuno_projection_lag_events{projector="prompt_receipt"} 0
zuno_projection_lag_events{projector="provider_request"} 0
zuno_projection_lag_events{projector="question"} 0
zuno_projection_lag_events{projector="session"} 0
zuno_projection_lag_events{projector="task_context"} 0
zuno_projection_lag_events{projector="verification_receipt"} 0
zuno_projection_lag_events{projector="work_item"} 0
zuno_projection_lag_events{projector="work_plan"} 0
`)
	if err := testutil.GatherAndCompare(reg, want, "zuno_projection_lag_events"); err != nil {
		t.Fatal(err)
	}
	checkpoints := "# HELP zuno_projection_checkpoint_position Global position each projector has applied up to.\n" +
		"# TYPE zuno_projection_checkpoint_position gauge\n"
	for _, p := range []string{"agent_job", "event", "goal", "inbox", "part", "permission_decision", "prompt_checkpoint", "prompt_receipt", "provider_request", "question", "session", "task_context", "verification_receipt", "work_item", "work_plan"} {
		checkpoints += fmt.Sprintf("zuno_projection_checkpoint_position{projector=%q} %d\n", p, n)
	}
	applied := fmt.Sprintf("# HELP zuno_projection_events_applied_total Events applied to the read models (live and rebuild).\n"+
		"# TYPE zuno_projection_events_applied_total counter\nzuno_projection_events_applied_total %d\n", n)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(checkpoints+applied),
		"zuno_projection_checkpoint_position", "zuno_projection_events_applied_total"); err != nil {
		t.Fatal(err)
	}
}
