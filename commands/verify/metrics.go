package verify

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics count verification runs, whichever face started them (`zuno verify`, the API's
// /api/verify, `zuno serve --verify-every`): docs/server.md, "Metrics".
type Metrics struct {
	runs    *prometheus.CounterVec
	seconds *prometheus.HistogramVec
}

// Results of a run, the result label.
const (
	ResultVerified = "verified"
	ResultFailed   = "failed" // a chain fault, read-model drift or an anchor that does not match
	ResultError    = "error"  // the run could not finish: a store or anchor file that does not read
)

// NewMetrics creates the collectors, registered with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_verify_runs_total",
			Help: "Verification runs, by scope (all, session, stream) and result (verified, failed, error).",
		}, []string{"scope", "result"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zuno_verify_seconds",
			Help:    "Time a verification run took, by scope.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
		}, []string{"scope"}),
	}
	if reg != nil {
		reg.MustRegister(m.runs, m.seconds)
	}
	return m
}

// Observe counts one run; a nil Metrics counts nothing.
func (m *Metrics) Observe(scope, result string, took time.Duration) {
	if m == nil {
		return
	}
	m.runs.WithLabelValues(scope, result).Inc()
	m.seconds.WithLabelValues(scope).Observe(took.Seconds())
}
