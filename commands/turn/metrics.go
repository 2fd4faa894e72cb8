package turn

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/zuno-run/zuno/events"
)

// Metrics are the turn's Prometheus collectors. They are fed from the events a turn records,
// after they are durable, so a dashboard never counts a step the log does not hold.
type Metrics struct {
	requests     *prometheus.CounterVec
	requestTime  *prometheus.HistogramVec
	toolCalls    *prometheus.CounterVec
	toolCallTime *prometheus.HistogramVec
	turns        *prometheus.CounterVec
	tokens       *prometheus.CounterVec
	decisions    *prometheus.CounterVec
	sandboxes    *prometheus.CounterVec
}

// NewMetrics creates the collectors, registered with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_provider_requests_total",
			Help: "Provider requests by provider and result: completed, or the failure's code.",
		}, []string{"provider", "result"}),
		requestTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zuno_provider_request_seconds",
			Help:    "Time from a provider request being sent to its response or failure.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 14),
		}, []string{"provider"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_tool_calls_total",
			Help: "Tool calls by tool and outcome (completed, error, blocked, uncertain, cancelled).",
		}, []string{"tool", "outcome"}),
		toolCallTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "zuno_tool_call_seconds",
			Help:    "Execution time of tool calls that ran, by tool.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 18),
		}, []string{"tool"}),
		turns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_turns_total",
			Help: "Finished turns by reason (completed, step_limit, failed, interrupted).",
		}, []string{"reason"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_model_tokens_total",
			Help: "Tokens the providers reported, by provider and kind (input, output).",
		}, []string{"provider", "kind"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_permission_decisions_total",
			Help: "The permission gate's decisions on calls, by permission key, action (allow, deny) and source (rule, mode, risk, standing, user, no_terminal, parent).",
		}, []string{"key", "action", "source"}),
		sandboxes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "zuno_sandbox_resolutions_total",
			Help: "How commands that ran were confined, by resolution kind (confined, platform_native, trusted_native, fallback, full_access) and backend.",
		}, []string{"kind", "backend"}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.requestTime, m.toolCalls, m.toolCallTime, m.turns, m.tokens, m.decisions, m.sandboxes)
	}
	return m
}

// observe counts one durable event.
func (m *Metrics) observe(p events.Payload) {
	if m == nil {
		return
	}
	switch e := p.(type) {
	case events.ProviderRequest:
		switch e.Status {
		case events.RequestCompleted:
			m.requests.WithLabelValues(e.Provider, events.RequestCompleted).Inc()
			m.requestTime.WithLabelValues(e.Provider).Observe(float64(e.DurationMs) / 1000)
			if r := e.Response; r != nil {
				m.tokens.WithLabelValues(e.Provider, "input").Add(float64(r.Usage.InputTokens))
				m.tokens.WithLabelValues(e.Provider, "output").Add(float64(r.Usage.OutputTokens))
			}
		case events.RequestFailed:
			code := "unknown"
			if e.Error != nil {
				code = e.Error.Code
			}
			m.requests.WithLabelValues(e.Provider, code).Inc()
			m.requestTime.WithLabelValues(e.Provider).Observe(float64(e.DurationMs) / 1000)
		}
	case events.ToolBlocked:
		m.toolCalls.WithLabelValues(e.Tool, "blocked").Inc()
		m.decided(e.Permission)
	case events.ToolStarted:
		m.decided(e.Permission)
		if s := e.Sandbox; s != nil {
			m.sandboxes.WithLabelValues(s.ResolutionKind, s.Backend).Inc()
		}
	case events.ToolSettled:
		m.toolCalls.WithLabelValues(e.Tool, e.Outcome).Inc()
		if !e.Recovered {
			m.toolCallTime.WithLabelValues(e.Tool).Observe(float64(e.DurationMs) / 1000)
		}
	case events.TurnFinished:
		m.turns.WithLabelValues(e.Reason).Inc()
	}
}

// decided counts one permission decision recorded on a call.
func (m *Metrics) decided(d *events.PermissionDecision) {
	if d != nil {
		m.decisions.WithLabelValues(d.Key, d.Action, d.Source).Inc()
	}
}
