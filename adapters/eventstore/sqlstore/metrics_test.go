package sqlstore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/events"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := storemetrics.New(reg)
	s, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "e.db"), WithMetrics(m))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	ev := func(i int) events.Event {
		return events.Event{ID: events.DeriveID("m", i), Type: "test.happened.1", Data: []byte(`{}`)}
	}
	s.Append(ctx, "s", events.NoStream, ev(0), ev(1))
	s.Append(ctx, "s", events.NoStream, ev(0), ev(1)) // duplicate
	s.Append(ctx, "s", events.NoStream, ev(2))        // conflict
	s.Append(ctx, "s", events.Any)                    // rejected: no events

	want := `
# HELP zuno_eventstore_appends_total Append calls by adapter and outcome (ok, conflict, duplicate, rejected, error).
# TYPE zuno_eventstore_appends_total counter
zuno_eventstore_appends_total{adapter="sqlite",outcome="conflict"} 1
zuno_eventstore_appends_total{adapter="sqlite",outcome="duplicate"} 1
zuno_eventstore_appends_total{adapter="sqlite",outcome="ok"} 1
zuno_eventstore_appends_total{adapter="sqlite",outcome="rejected"} 1
# HELP zuno_eventstore_appended_events_total Events written to the log by adapter (idempotent re-appends excluded).
# TYPE zuno_eventstore_appended_events_total counter
zuno_eventstore_appended_events_total{adapter="sqlite"} 2
# HELP zuno_eventstore_conflicts_total Appends refused because the expected revision did not hold, or an event id was re-used with other content.
# TYPE zuno_eventstore_conflicts_total counter
zuno_eventstore_conflicts_total{adapter="sqlite",code="wrong_expected_revision"} 1
# HELP zuno_eventstore_idempotent_duplicates_total Re-appends of already stored events answered with the original result.
# TYPE zuno_eventstore_idempotent_duplicates_total counter
zuno_eventstore_idempotent_duplicates_total{adapter="sqlite"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"zuno_eventstore_appends_total", "zuno_eventstore_appended_events_total",
		"zuno_eventstore_conflicts_total", "zuno_eventstore_idempotent_duplicates_total"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(m.AppendSeconds); n != 1 {
		t.Fatalf("append latency histogram series: %d", n)
	}
	if got := histogramCount(t, reg, "zuno_eventstore_append_seconds"); got != 4 {
		t.Fatalf("append latency observations: %d, want 4", got)
	}
}

func histogramCount(t *testing.T, reg *prometheus.Registry, name string) uint64 {
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetHistogram().GetSampleCount()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
