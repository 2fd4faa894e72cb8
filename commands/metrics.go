package commands

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the command layer's collectors.
type Metrics struct {
	handled *prometheus.CounterVec
	seconds *prometheus.HistogramVec
}

// NewMetrics creates the collectors, registered with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_commands_handled_total",
			Help: "Commands handled, by command and outcome (ok, duplicate, or the error code).",
		}, []string{"command", "outcome"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zuno_command_handling_seconds",
			Help:    "Time from a command reaching its handler to its result, by command.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}, []string{"command"}),
	}
	if reg != nil {
		reg.MustRegister(m.handled, m.seconds)
	}
	return m
}

func (m *Metrics) observe(command string, started time.Time, res Result) {
	outcome := "ok"
	switch {
	case res.Error != nil:
		outcome = res.Error.Code
	case res.Duplicate:
		outcome = "duplicate"
	}
	m.handled.WithLabelValues(command, outcome).Inc()
	m.seconds.WithLabelValues(command).Observe(time.Since(started).Seconds())
}
