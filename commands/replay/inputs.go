package replay

import (
	"context"
	"strconv"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// provider answers each request with the recorded end of the next one: the completed response
// streamed back, or the recorded failure as the provider error it was.
type provider struct {
	g      *group
	next   int
	cancel context.CancelFunc
}

// described is a provider the turn recorded a description of: how it was reached is an
// input, not a decision (a replay never opens a provider).
type described struct {
	*provider
	wire events.ProviderWire
}

func (p described) Describe() model.Description {
	w := p.wire
	return model.Description{Family: w.Family, API: w.API, BaseURL: w.BaseURL, Quirks: w.Quirks, Retry: model.RetryPolicy{Retries: w.Retries}}
}

// newProvider answers with g's responses, described as wire says when the turn recorded one.
func newProvider(g *group, cancel context.CancelFunc, wire *events.ProviderWire) model.Provider {
	p := &provider{g: g, cancel: cancel}
	if wire == nil {
		return p
	}
	return described{provider: p, wire: *wire}
}

func (p *provider) Models(context.Context) ([]model.ModelInfo, error) { return nil, nil }

func (p *provider) Stream(ctx context.Context, req model.Request) model.Stream {
	return func(yield func(model.Event, error) bool) {
		if p.next >= len(p.g.responses) {
			yield(nil, errStop) // the recorded run was cut short during this request
			return
		}
		r := p.g.responses[p.next]
		p.next++
		replayWire(ctx, r.Wire)
		if r.Error != nil {
			yield(nil, p.failure(*r.Error))
			return
		}
		for _, ev := range responseEvents(r) {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// replayWire hands the turn the recorded wire exchange as the network's answer: the bytes an
// HTTP adapter sent and read are an input here (a replay opens no connection); that they are
// the bytes the receipt's request renders to is what `zuno debug prompt --wire` checks
// (docs/replay.md).
func replayWire(ctx context.Context, w *events.WireExchange) {
	c := model.WireCaptureFrom(ctx)
	if c == nil || w == nil {
		return
	}
	c.Update(func(m *model.Wire) {
		*m = model.Wire{Adapter: w.Adapter, MappingVersion: w.MappingVersion, Mapping: w.Mapping, Endpoint: w.Endpoint,
			RequestSHA256: w.RequestSHA256, RequestBytes: w.RequestBytes, ResponseSHA256: w.ResponseSHA256,
			ResponseBytes: w.ResponseBytes, Status: w.HTTPStatus}
	})
}

// failure is a recorded failed request as its error. An interrupted one was the run's own
// cancellation, which the replay repeats rather than imitates.
func (p *provider) failure(info events.ErrorInfo) error {
	if info.Code == "interrupted" {
		p.cancel()
		return context.Canceled
	}
	e := model.NewError(info.Code, info.Message, info.Fix)
	e.ProviderCode, e.Status, e.RetryAfter = info.ProviderCode, info.HTTPStatus, msDuration(info.RetryAfterMs)
	return e
}

// responseEvents streams a recorded response. Each call gets a stream key of its own (a
// provider's ids may be missing or repeated) and its provider id as recorded: the recorded
// call names it only when it differs from the runtime's, and a runtime-derived id means the
// provider gave none.
func responseEvents(r events.ProviderRequest) []model.Event {
	resp := r.Response
	out := []model.Event{model.ResponseStart{ID: resp.ID, Model: resp.Model}}
	if resp.Text != "" {
		out = append(out, model.TextDelta{Text: resp.Text})
	}
	for _, rs := range resp.Reasoning {
		out = append(out, model.ReasoningItem{Reasoning: model.Reasoning(rs)})
	}
	for i, c := range resp.ToolCalls {
		pid := c.ProviderID
		if pid == "" && c.ID != model.RuntimeCallID(r.RequestID, i) {
			pid = c.ID
		}
		out = append(out, model.ToolCallEnd{ID: "replay#" + strconv.Itoa(i), ProviderID: pid, Name: c.Name, Arguments: c.Arguments})
	}
	u := resp.Usage
	return append(out, model.UsageReport{Usage: model.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens}},
		model.Finish{Reason: model.FinishReason(resp.FinishReason), ProviderReason: resp.ProviderFinishReason})
}

// recorded is a tool whose declaration, validation and state are the real tool's and whose
// execution is the recorded result of the call.
type recorded struct {
	tools.Tool
	g     *group
	store *store
	// cancel repeats the run's own cancellation after the call it came during.
	cancel context.CancelFunc
}

func recordedTools(ts []tools.Tool, g *group, st *store, cancel context.CancelFunc) []tools.Tool {
	out := make([]tools.Tool, len(ts))
	for i, t := range ts {
		out[i] = recorded{Tool: t, g: g, store: st, cancel: cancel}
	}
	return out
}

func (t recorded) Execute(_ context.Context, inv tools.Invocation) tools.Result {
	s, ok := t.g.settled[inv.CallID]
	if !ok {
		return tools.Result{Outcome: tools.OutcomeError, ErrorCode: "replay_no_result", Output: "the recorded run has no result for this call"}
	}
	t.store.reached(t.g.settledAt[inv.CallID]) // the call has run: what it wrote is visible
	if t.g.interruptedDuring[inv.CallID] {
		// The run was cancelled while this call ran (Ctrl-C, an interrupt): the replay repeats
		// the cancellation rather than going on to a next step the run never took.
		t.cancel()
	}
	res := tools.Result{Outcome: tools.Outcome(s.Outcome), Output: s.Output, ErrorCode: s.ErrorCode, Metadata: s.Metadata}
	if rc, ok := t.g.receipts[inv.CallID]; ok {
		res.Receipt = &rc
	}
	return res
}

// Restore and WithheldEnv pass through: the driver asks the tools it is given for them.
func (t recorded) Restore(s events.ToolSettled) {
	if r, ok := t.Tool.(tools.Restorer); ok {
		r.Restore(s)
	}
}

func (t recorded) WithheldEnv() []string {
	if w, ok := t.Tool.(tools.EnvWithholder); ok {
		return w.WithheldEnv()
	}
	return nil
}

// inbox answers an ask with the answer the log holds; an ask the recorded run was still
// waiting on when it stopped ends the replay's run as a cancellation would.
type inbox struct {
	log      commands.StreamReader
	registry *events.Registry
	cancel   context.CancelFunc
}

func (in inbox) Wait(ctx context.Context, sessionID, askID string) (events.PermissionAnswered, error) {
	a, ok, err := in.Answered(ctx, sessionID, askID)
	if err == nil && !ok {
		in.cancel()
		err = context.Canceled
	}
	return a, err
}

// Answered returns the recorded answer to askID. A replayed turn never suspends (it runs as
// one, its answers already in the log), so this is Wait's lookup alone.
func (in inbox) Answered(ctx context.Context, sessionID, askID string) (events.PermissionAnswered, bool, error) {
	for rec, err := range commands.Events(ctx, in.log, commands.InboxStream(sessionID), 0) {
		if err != nil {
			return events.PermissionAnswered{}, false, err
		}
		p, err := in.registry.Decode(rec)
		if err != nil {
			return events.PermissionAnswered{}, false, err
		}
		if a, ok := p.(events.PermissionAnswered); ok && a.AskID == askID {
			return a, true, nil
		}
	}
	return events.PermissionAnswered{}, false, nil
}

// Closed reads the log: an ask closed there was closed by the run that ended its turn, which
// the replay's recovery of that turn then repeats.
func (in inbox) Closed(ctx context.Context, sessionID, askID string) (bool, error) {
	return commands.Inbox{Store: in.log, Registry: in.registry}.Closed(ctx, sessionID, askID)
}

// Close records nothing: a replay writes only its copy of the session's stream, and the close
// is the inbox's record of the turn's end, not a decision the replay compares (docs/replay.md).
func (in inbox) Close(context.Context, commands.Meta, events.PermissionClosed) error { return nil }

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
