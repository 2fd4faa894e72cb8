package projections

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the projection layer's collectors.
type Metrics struct {
	checkpoint   *prometheus.GaugeVec
	lag          *prometheus.GaugeVec
	applied      prometheus.Counter
	batchSeconds prometheus.Histogram
}

// NewMetrics creates the collectors, registered with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		checkpoint: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "zuno_projection_checkpoint_position",
			Help: "Global position each projector has applied up to.",
		}, []string{"projector"}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "zuno_projection_lag_events",
			Help: "Positions between the log's head and each projector's checkpoint, as of the last status check.",
		}, []string{"projector"}),
		applied: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "zuno_projection_events_applied_total",
			Help: "Events applied to the read models (live and rebuild).",
		}),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "zuno_projection_batch_seconds",
			Help:    "Time to apply one batch of events and commit it with the checkpoints.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}),
	}
	if reg != nil {
		reg.MustRegister(m.checkpoint, m.lag, m.applied, m.batchSeconds)
	}
	return m
}
