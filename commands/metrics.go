package commands

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the command layer's collectors.
type Metrics struct {
	// reg also receives Watermill's router metrics when the bus starts (commandRouter).
	reg     prometheus.Registerer
	handled *prometheus.CounterVec
	seconds *prometheus.HistogramVec
}

// NewMetrics creates the collectors, registered with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		reg: reg,
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

// HandlerFunc is one command's handler, as the bus and the work tools call it.
type HandlerFunc[C any] func(ctx context.Context, cmd *C) (Result, error)

// Measured is the metrics decorator: next, counted by outcome and timed under command's name.
// It is applied where the handlers are assembled (the bus's routes, WorkCommands), never inside
// a handler, so a handler is only the decision and its write (docs/architecture.md).
func Measured[C any](m *Metrics, command string, next HandlerFunc[C]) HandlerFunc[C] {
	return func(ctx context.Context, cmd *C) (Result, error) {
		started := time.Now()
		res, err := next(ctx, cmd)
		m.observe(command, started, res, err)
		return res, err
	}
}

func (m *Metrics) observe(command string, started time.Time, res Result, err error) {
	outcome := "ok"
	switch {
	case err != nil:
		outcome = NewErrorReply(err).Code
	case res.Error != nil:
		outcome = res.Error.Code
	case res.Duplicate:
		outcome = "duplicate"
	}
	m.handled.WithLabelValues(command, outcome).Inc()
	m.seconds.WithLabelValues(command).Observe(time.Since(started).Seconds())
}
