// Package prometheus_test checks the alerting rules of ops/prometheus: promtool accepts them,
// their unit tests pass, and every metric they read is one Zuno registers.
package prometheus_test

import (
	"os"
	"os/exec"
	"regexp"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zuno-run/zuno/adapters/bus"
	"github.com/zuno-run/zuno/adapters/eventstore/storemetrics"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/commands/verify"
	"github.com/zuno-run/zuno/projections"
)

func promtool(t *testing.T, args ...string) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil && os.Getenv("CI") != "" {
		t.Fatal("promtool is not installed: .ci/run installs it (apt-get install prometheus)")
	}
	if err != nil {
		t.Skip("SKIP: promtool is not installed (apt-get install prometheus)")
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
}

func TestRulesCheck(t *testing.T) { promtool(t, "check", "rules", "alerts.yml") }

func TestRulesUnitTests(t *testing.T) { promtool(t, "test", "rules", "alerts_test.yml") }

// Every zuno_ metric the rules read is registered by Zuno's collectors: a renamed metric
// would leave an alert that can never fire.
func TestRulesReadRegisteredMetrics(t *testing.T) {
	reg := &recorder{}
	storemetrics.New(reg)
	turn.NewMetrics(reg)
	projections.NewMetrics(reg)
	commands.NewMetrics(reg)
	bus.NewMetrics(reg)
	verify.NewMetrics(reg)
	known := map[string]bool{}
	descs := make(chan *prometheus.Desc, 1024)
	for _, c := range reg.collectors {
		c.Describe(descs)
	}
	close(descs)
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	for d := range descs {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			known[m[1]] = true
		}
	}
	rules, err := os.ReadFile("alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile(`\bzuno_[a-z_]+`).FindAllString(string(rules), -1)
	if len(names) == 0 || len(known) == 0 {
		t.Fatalf("the rules read %v; the collectors register %v", names, known)
	}
	for _, n := range names {
		if !known[n] {
			t.Errorf("alerts.yml reads %s, which no collector registers", n)
		}
	}
}

// recorder is a Registerer that keeps what is registered with it.
type recorder struct{ collectors []prometheus.Collector }

func (r *recorder) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	r.collectors = append(r.collectors, cs...)
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }
