// Package storemetrics holds the Prometheus collectors shared by the event store adapters,
// labelled by adapter so one dashboard compares them.
package storemetrics

import (
	"github.com/zuno-run/zuno/domain"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of an append.
const (
	OutcomeOK        = "ok"
	OutcomeConflict  = "conflict"
	OutcomeDuplicate = "duplicate"
	OutcomeRejected  = "rejected"
	OutcomeError     = "error"
)

// Metrics are the event store's collectors.
type Metrics struct {
	Appends        *prometheus.CounterVec
	AppendedEvents *prometheus.CounterVec
	AppendSeconds  *prometheus.HistogramVec
	Conflicts      *prometheus.CounterVec
	Duplicates     *prometheus.CounterVec
	BatchEvents    *prometheus.HistogramVec
	LinkedAppends  *prometheus.CounterVec
}

// Results of an append tried with its stream's head known (Postgres, docs/storage.md "Known
// heads"): written with the head the store knew, written after reading the head, or decided
// by the full append after all.
const (
	LinkedWritten   = "linked"
	LinkedAfterRead = "read_head"
	LinkedFellBack  = "fell_back"
)

// New creates the collectors and registers them with reg when reg is not nil.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Appends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_eventstore_appends_total",
			Help: "Append calls by adapter and outcome (ok, conflict, duplicate, rejected, error).",
		}, []string{"adapter", "outcome"}),
		AppendedEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_eventstore_appended_events_total",
			Help: "Events written to the log by adapter (idempotent re-appends excluded).",
		}, []string{"adapter"}),
		AppendSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zuno_eventstore_append_seconds",
			Help:    "Append latency from call to durable commit, by adapter.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
		}, []string{"adapter"}),
		Conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_eventstore_conflicts_total",
			Help: "Appends refused because the expected revision did not hold, or an event id was re-used with other content.",
		}, []string{"adapter", "code"}),
		Duplicates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_eventstore_idempotent_duplicates_total",
			Help: "Re-appends of already stored events answered with the original result.",
		}, []string{"adapter"}),
		BatchEvents: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zuno_eventstore_commit_batch_events",
			Help:    "Events per group commit (one transaction, one fsync).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 11),
		}, []string{"adapter"}),
		LinkedAppends: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_eventstore_linked_appends_total",
			Help: "Appends tried with their streams' heads known, by result: linked (written with the heads the store knew), read_head (written after reading the head), fell_back (a head had moved or an expectation failed there; the full append decided the batch).",
		}, []string{"adapter", "result"}),
	}
	if reg != nil {
		reg.MustRegister(m.Appends, m.AppendedEvents, m.AppendSeconds, m.Conflicts, m.Duplicates, m.BatchEvents, m.LinkedAppends)
	}
	return m
}

// ObserveAppend records one append call.
func (m *Metrics) ObserveAppend(adapter string, started time.Time, events int, outcome string, err error) {
	m.Appends.WithLabelValues(adapter, outcome).Inc()
	m.AppendSeconds.WithLabelValues(adapter).Observe(time.Since(started).Seconds())
	switch outcome {
	case OutcomeOK:
		m.AppendedEvents.WithLabelValues(adapter).Add(float64(events))
	case OutcomeDuplicate:
		m.Duplicates.WithLabelValues(adapter).Inc()
	case OutcomeConflict:
		code := domain.CodeOf(err)
		if code == "" {
			code = "unknown"
		}
		m.Conflicts.WithLabelValues(adapter, code).Inc()
	}
}
