package turn

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

// drive opens the turn and runs provider steps until the model answers without tool calls,
// the step limit's finalisation is answered, a typed failure ends it, or ctx is cancelled.
func (r *run) drive(ctx context.Context) (Outcome, error) {
	out := Outcome{SessionID: r.req.SessionID, TurnID: r.turnID}
	if r.req.Resume != nil {
		if err := r.resume(ctx); err != nil {
			return r.suspended(&out, err)
		}
	} else {
		opening, err := r.open()
		if err != nil {
			return Outcome{}, err
		}
		if err := r.stage(opening...); err != nil {
			return Outcome{}, err
		}
		if err := r.classifyPlan(ctx); err != nil {
			return Outcome{}, err
		}
	}
	for {
		done, err := r.step(ctx, &out)
		if err != nil {
			return r.suspended(&out, err)
		}
		if done {
			return out, nil
		}
	}
}

// open decides the events that start the turn: a move to another workspace if the request
// names one, the user message, and the turn's start.
func (r *run) open() ([]events.Payload, error) {
	var out []events.Payload
	decide := func(c session.Command) error {
		ps, err := session.Decide(&r.sess, c)
		for _, p := range ps {
			if err == nil {
				err = r.sess.Evolve(p)
			}
		}
		out = append(out, ps...)
		return err
	}
	if r.req.Directory != "" {
		if err := decide(session.ChangeDirectory{SessionID: r.req.SessionID, Directory: r.req.Directory}); err != nil {
			return nil, err
		}
	}
	msgID := MessageID(r.req.Meta.CommandID)
	msg := session.AppendUserMessage{SessionID: r.req.SessionID, MessageID: msgID, Text: r.req.Text}
	if rep := r.req.Report; rep != nil {
		rep.carry(&msg)
	}
	if err := decide(msg); err != nil {
		return nil, err
	}
	return append(out, events.TurnStarted{SessionID: r.req.SessionID, TurnID: r.turnID, MessageID: msgID,
		Agent: r.req.Agent.Name, Provider: r.req.ProviderName, Model: r.req.Model.ID, StepLimit: r.req.Agent.Steps,
		ToolCalls: r.req.ToolCalls, Owner: r.d.Owner, Wire: r.wire(), Config: r.req.Config, Bounds: r.req.Bounds, Memory: memoryRead(r.req.Memory)}), nil
}

// memoryRead is the memory a turn's prompt holds, as its start records it.
func memoryRead(m *prompt.MemoryPrompt) *events.MemoryRead {
	if m == nil {
		return nil
	}
	return &events.MemoryRead{Scope: m.Scope, Revision: m.Revision}
}

// wire is the provider's description, recorded on the turn's start.
func (r *run) wire() *events.ProviderWire {
	d, ok := r.req.Provider.(model.Described)
	if !ok {
		return nil
	}
	desc := d.Describe()
	return &events.ProviderWire{Family: desc.Family, API: desc.API, BaseURL: desc.BaseURL, Retries: r.req.Retry.Retries, Quirks: desc.Quirks}
}

// offerTools computes the tools offered to the model (agent.Offer) and rebuilds the state of
// those that keep some per session (read credentials) from the session's earlier results.
func (r *run) offerTools() error {
	offered, err := agent.Offer(r.req.Agent, r.req.Tools, r.req.ToolsConfig)
	if err != nil {
		return err
	}
	r.tools = map[string]Tool{}
	var decls []tools.Declaration
	for _, t := range r.deferral.offer(offered.Tools, r.req.Tools, r.req.ToolsConfig) {
		d := t.Declaration()
		r.tools[d.Name] = t
		decls = append(decls, d)
		r.decls = append(r.decls, prompt.ToolDecl{Tool: t.Spec(), WritesWorkspace: t.WritesWorkspace()})
	}
	if d := r.req.Directory; d != "" && d != r.sess.Directory {
		r.settled = nil // this turn moves the session: nothing read before the move is current
	}
	restorers := map[string]tools.Restorer{}
	for _, t := range r.req.Tools { // disabled or not offered, a tool's past results still count
		if rs, ok := t.(tools.Restorer); ok {
			restorers[t.Declaration().Name] = rs
		}
	}
	for _, s := range r.settled {
		if rs := restorers[s.Tool]; rs != nil {
			rs.Restore(s)
		}
	}
	r.settled = nil
	for name, rs := range restorers {
		if rc, ok := rs.(tools.RestoreChecker); ok && r.tools[name] != nil {
			if err := rc.CheckRestored(); err != nil {
				return err
			}
		}
	}
	r.registry, err = tools.NewRegistry(decls...)
	return err
}

// step runs one provider request and the tool calls it asks for. It reports done when the turn
// has finished.
func (r *run) step(ctx context.Context, out *Outcome) (bool, error) {
	if ctx.Err() != nil {
		return true, r.interrupt(ctx, out)
	}
	limit := r.req.Agent.Steps
	finalizing := limit > 0 && r.tr.Open.Steps >= limit
	asm, base, err := r.assemble(ctx, finalizing, limit)
	var refused *refusedPrompt
	if errors.As(err, &refused) {
		if ctx.Err() != nil { // cancelled during a compaction request
			return true, r.interrupt(ctx, out)
		}
		// Refused before the step's request: the turn ends with the reason.
		return true, r.finish(ctx, out, events.FinishFailed, errorInfo(refused.err))
	}
	if err != nil {
		return true, err
	}
	resp, base, begun, streamErr := r.send(ctx, asm.Request, base)
	var rec *recordError
	if errors.As(streamErr, &rec) {
		return true, rec.err
	}
	if errors.Is(streamErr, errWaitCancelled) {
		return true, r.interrupt(ctx, out)
	}
	if streamErr != nil {
		failed := base
		failed.Status, failed.Error, failed.DurationMs = events.RequestFailed, errorInfo(streamErr), elapsedMs(begun)
		failed.Wire = r.lastWire
		if err := r.stage(failed); err != nil {
			return true, err
		}
		if ctx.Err() != nil {
			return true, r.interrupt(ctx, out)
		}
		return true, r.finish(ctx, out, events.FinishFailed, failed.Error)
	}
	var closed []model.ToolCall
	if finalizing {
		// Tools were closed: a call the model made anyway is recorded, never run.
		closed, resp.ToolCalls = resp.ToolCalls, nil
	}
	// The runtime owns the call ids: a provider's may be missing or repeated (docs/turns.md).
	model.AssignCallIDs(base.RequestID, resp.ToolCalls, r.tr.HasCall)
	model.AssignCallIDs(base.RequestID, closed, r.tr.HasCall)
	completed := base
	completed.Status, completed.Response, completed.DurationMs = events.RequestCompleted, recordResponse(resp), elapsedMs(begun)
	completed.Wire = r.lastWire
	completed.Response.ClosedToolCalls = recordCalls(closed)
	if err := r.stage(completed); err != nil {
		return true, err
	}
	out.Text = resp.Text
	switch {
	case finalizing:
		return true, r.finish(ctx, out, events.FinishStepLimit, nil)
	case len(resp.ToolCalls) == 0:
		return r.afterFinal(ctx, out)
	}
	if err := r.runCalls(ctx, base.RequestID, resp.ToolCalls); err != nil {
		return true, err
	}
	if err := r.deliverInputs(ctx); err != nil {
		return true, err
	}
	if info := r.loop.observe(resp.ToolCalls); info != nil {
		return true, r.finish(ctx, out, events.FinishFailed, info)
	}
	return false, nil
}

// refusedPrompt is a prompt the assembly refused (context overflow): the turn ends with it.
type refusedPrompt struct{ err error }

func (e *refusedPrompt) Error() string { return e.err.Error() }

// assemble builds the step's prompt, records its receipt and the request's start, and returns
// the assembly and the request record the step completes. Past the step limit the tools are
// closed and the finalisation instruction is added.
func (r *run) assemble(ctx context.Context, finalizing bool, limit int) (prompt.Assembled, events.ProviderRequest, error) {
	conversation := func() []model.Message { return r.tr.Messages }
	var choice model.ToolChoice
	var final *events.StepLimitFinalization
	if finalizing {
		// Tools closed, one host instruction, one text-only request (docs/turns.md). The tools
		// are closed with tool choice "none" rather than by dropping their declarations:
		// providers refuse a conversation holding tool calls and results without them
		// (Anthropic), the prompt stays the one the model has been working with, and any call
		// the model names anyway is not run.
		choice = model.ToolChoice{Mode: model.ToolChoiceNone}
		conversation = func() []model.Message {
			msgs := r.tr.Messages
			return append(msgs[:len(msgs):len(msgs)], model.Message{Role: model.RoleDeveloper, Text: FinalizationInstruction})
		}
		sum := sha256.Sum256([]byte(FinalizationInstruction))
		final = &events.StepLimitFinalization{Limit: limit, Instruction: FinalizationInstruction, InstructionDigest: hex.EncodeToString(sum[:])}
	}
	if err := r.refreshWork(ctx); err != nil {
		return prompt.Assembled{}, events.ProviderRequest{}, &refusedPrompt{err}
	}
	work := r.workState()
	// fit compacts the transcript when the prompt would not fit the window (docs/compaction.md).
	asm, err := r.fit(ctx, prompt.Input{
		Model: r.req.Model.ID, ContextWindow: r.req.Model.ContextWindow, MaxTokens: r.req.MaxTokens, ToolChoice: choice,
		Agent: prompt.AgentPrompt{Name: r.req.Agent.Name, Source: r.req.Agent.Source, Trust: prompt.TrustHost, Text: r.req.Agent.Prompt},
		Mode:  r.req.Agent.Collaboration, Runtime: prompt.RuntimeState{Delegates: r.req.Agent.Delegates, DurableState: work != nil},
		GlobalAgents: r.req.GlobalAgents, ProjectAgents: r.req.ProjectAgents, Skills: r.req.Skills, Memory: r.req.Memory,
		Tools: r.deferral.visible(r.decls), History: &r.history, WorkState: work,
	}, conversation)
	if err != nil {
		return asm, events.ProviderRequest{}, err
	}
	base, err := r.recordPrompt(ctx, asm, len(r.tr.Messages), events.ProviderRequest{StepLimitFinalization: final})
	return asm, base, err
}

// recordPrompt records an assembled prompt's receipt and its request's start, durable before
// the request is sent, and returns the request record (base's purpose kept) the step
// completes. logged counts the leading conversation messages that are the transcript's.
func (r *run) recordPrompt(ctx context.Context, asm prompt.Assembled, logged int, base events.ProviderRequest) (events.ProviderRequest, error) {
	receiptID, requestID := r.d.newID(), r.d.newID()
	// Stored relative to the previous receipt of this run, with only blobs the session's log
	// does not hold yet: a step records what is new, not the whole history again. The
	// conversation opens with the transcript's messages, whose own events hold them, so the
	// receipt leaves them out too and lists only what the turn added (docs/storage.md, "Bytes
	// per step").
	receipt := prompt.LeaveLogged(prompt.Compact(asm.Receipt, r.prev, r.prevID, &r.history), logged)
	// Every few dozen parts, the digest's state after the conversation: a checkpoint `debug
	// prompt` resumes from (docs/formats/receipts.md §13).
	receipt = prompt.MarkResume(receipt, len(asm.Receipt.Messages)-min(len(asm.Receipt.Sections), len(asm.Receipt.Messages)), logged, &r.history)
	receipt.Blobs = r.newBlobs(receipt, asm.Receipt.Blobs)
	full := asm.Receipt
	r.prev, r.prevID = &full, receiptID
	base.SessionID, base.TurnID, base.RequestID, base.Step = r.req.SessionID, r.turnID, requestID, r.tr.Steps+1
	base.PromptReceiptID, base.Provider, base.Model = receiptID, r.req.ProviderName, r.req.Model.ID
	startedReq := base
	startedReq.Status = events.RequestStarted
	if err := r.stage(events.PromptAssembled{SessionID: r.req.SessionID, ReceiptID: receiptID, JobsRead: uint64(r.jobsRevision + 1), PromptReceipt: receipt}, startedReq); err != nil {
		return base, err
	}
	return base, r.commit(ctx)
}

// errWaitCancelled: the run was cancelled while waiting to retry; the failed attempt is
// recorded and no request is open.
var errWaitCancelled = errors.New("cancelled while waiting to retry")

// recordError is a failure to record an attempt (the store, another writer), which ends the
// run as it is rather than as a failed request.
type recordError struct{ err error }

func (e *recordError) Error() string { return e.err.Error() }

// send sends the step's request, and again after a failure the retry policy allows (docs/turns.md,
// "Retries"): each failed attempt is recorded with its error and the wait, and each retry is a
// request of its own for the same receipt. It returns the response or the last attempt's
// error, with that attempt's record and start.
func (r *run) send(ctx context.Context, req model.Request, base events.ProviderRequest) (model.Response, events.ProviderRequest, time.Time, error) {
	for attempt := 1; ; attempt++ {
		begun := time.Now()
		resp, output, err := r.request(ctx, req)
		if err == nil || ctx.Err() != nil {
			return resp, base, begun, err
		}
		wait, retry := r.req.Retry.Retry(attempt, err, output, r.d.jitter())
		if !retry {
			return resp, base, begun, err
		}
		failed := base
		failed.Status, failed.Error, failed.DurationMs, failed.RetryInMs = events.RequestFailed, errorInfo(err), elapsedMs(begun), max(wait.Milliseconds(), 1)
		failed.Wire = r.lastWire
		if err := r.stage(failed); err != nil {
			return resp, base, begun, &recordError{err}
		}
		if err := r.commit(ctx); err != nil {
			return resp, base, begun, &recordError{err}
		}
		if r.d.sleep(ctx, wait) != nil {
			return resp, base, begun, errWaitCancelled
		}
		base.RequestID, base.Attempt = r.d.newID(), attempt+1
		started := base
		started.Status = events.RequestStarted
		if err := r.stage(started); err != nil {
			return resp, base, begun, &recordError{err}
		}
		if err := r.commit(ctx); err != nil {
			return resp, base, begun, &recordError{err}
		}
	}
}

// request streams the provider's answer, showing text as it arrives. output reports whether
// anything beyond the response's start arrived: a retry must never repeat shown output.
func (r *run) request(ctx context.Context, req model.Request) (resp model.Response, output bool, err error) {
	req.PromptCacheKey = PromptCacheKey(r.req.SessionID)
	var acc model.Accumulator
	wctx, capture := model.CaptureWire(ctx)
	defer func() { r.lastWire = recordWire(capture) }()
	for ev, err := range boundStream(r.req.Provider.Stream(wctx, req)) {
		if err != nil {
			return acc.Response(), output, err
		}
		acc.Add(ev)
		if _, start := ev.(model.ResponseStart); !start {
			output = true
		}
		if t, ok := ev.(model.TextDelta); ok && !r.summarising {
			r.req.Observer.TextDelta(t.Text)
		}
	}
	return acc.Response(), output, nil
}

// newBlobs returns the blobs the stored receipt references that this session's log does not
// hold yet: a receipt references earlier content by digest, so a long session does not
// re-record its whole history each step. Only the stored receipt's own references are looked
// at (its base's conversation was recorded with the base, the transcript's messages are in
// their events), so this costs the same at every step.
func (r *run) newBlobs(stored prompt.Receipt, all map[string]string) map[string]string {
	out := map[string]string{}
	add := func(d string) {
		if !r.tr.Blobs[d] {
			if b, ok := all[d]; ok {
				out[d] = b
			}
		}
	}
	for _, s := range stored.Sections {
		add(s.SHA256)
	}
	for _, p := range stored.Messages {
		add(p.SHA256)
	}
	for _, p := range stored.Tools {
		add(p.SHA256)
	}
	return out
}

// interrupt closes a cancelled turn: calls that never started are settled cancelled, and the
// turn finishes as interrupted. Nothing is re-run later.
func (r *run) interrupt(ctx context.Context, out *Outcome) error {
	if open := r.tr.Open; open != nil { // read before the recovery closes the turn
		out.Steps, out.Usage = open.Steps, open.Usage
	}
	if err := r.stage(r.tr.Recover(false)...); err != nil {
		return err
	}
	out.Reason = events.FinishInterrupted
	out.Error = &events.ErrorInfo{Code: transcript.CodeInterrupted, Message: "the run was cancelled", Fix: "continue it with: zuno run --session " + r.req.SessionID + " PROMPT"}
	return r.commit(ctx)
}

func (r *run) finish(ctx context.Context, out *Outcome, reason string, info *events.ErrorInfo) error {
	open := r.tr.Open
	fin := events.TurnFinished{SessionID: r.req.SessionID, TurnID: r.turnID, Reason: reason, Steps: open.Steps, Usage: open.Usage, Error: info}
	if err := r.stage(fin); err != nil {
		return err
	}
	out.Reason, out.Steps, out.Usage, out.Error = reason, fin.Steps, fin.Usage, info
	return r.commit(ctx)
}

func recordResponse(resp model.Response) *events.ProviderResponse {
	out := &events.ProviderResponse{ID: resp.ID, Model: resp.Model, Text: resp.Text,
		Usage: events.Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens,
			CacheReadTokens: resp.Usage.CacheReadTokens, CacheWriteTokens: resp.Usage.CacheWriteTokens},
		FinishReason: string(resp.FinishReason), ProviderFinishReason: resp.ProviderFinishReason}
	for _, r := range resp.Reasoning {
		out.Reasoning = append(out.Reasoning, events.Reasoning(r))
	}
	out.ToolCalls, out.Refusal = recordCalls(resp.ToolCalls), resp.Refusal
	return out
}

func recordCalls(calls []model.ToolCall) []events.ToolCall {
	var out []events.ToolCall
	for _, c := range calls {
		tc := events.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		if c.ProviderID != c.ID {
			tc.ProviderID = c.ProviderID // only when it differs: the common case records one id
		}
		out = append(out, tc)
	}
	return out
}

// recordWire is the wire exchange a request's stream captured, nil when no body left the
// process (a provider without HTTP, or a request refused before sending).
func recordWire(c *model.WireCapture) *events.WireExchange {
	w, sent := c.Wire()
	if !sent {
		return nil
	}
	return &events.WireExchange{Adapter: w.Adapter, MappingVersion: w.MappingVersion, Mapping: w.Mapping, Endpoint: w.Endpoint,
		RequestSHA256: w.RequestSHA256, RequestBytes: w.RequestBytes, ResponseSHA256: w.ResponseSHA256,
		ResponseBytes: w.ResponseBytes, HTTPStatus: w.Status}
}

// errorInfo records a typed failure with its code; an untyped one as "unknown".
func errorInfo(err error) *events.ErrorInfo {
	var me *model.Error
	if errors.As(err, &me) {
		return &events.ErrorInfo{Code: me.Code(), Message: me.Message, Fix: me.Fix, ProviderCode: me.ProviderCode,
			HTTPStatus: me.Status, RetryAfterMs: me.RetryAfter.Milliseconds()}
	}
	var over *prompt.ContextOverflowError
	if errors.As(err, &over) {
		return &events.ErrorInfo{Code: over.Code(), Message: over.Message(), Fix: over.Fix()}
	}
	var de *domain.Error
	if errors.As(err, &de) {
		return &events.ErrorInfo{Code: de.Code(), Message: de.Message, Fix: de.Fix}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &events.ErrorInfo{Code: transcript.CodeInterrupted, Message: err.Error()}
	}
	if code := domain.CodeOf(err); code != "" {
		return &events.ErrorInfo{Code: code, Message: err.Error()}
	}
	return &events.ErrorInfo{Code: "unknown", Message: err.Error()}
}

// deliverInputs records, at the step's tool-safe boundary (its calls settled, the next
// request not started), the inbox inputs that arrived while it ran: each a user message that
// carries its input, durable before the next request is assembled from it.
func (r *run) deliverInputs(ctx context.Context) error {
	if r.req.Inputs == nil {
		return nil
	}
	in := r.req.Inputs.Take(ctx, r.req.SessionID)
	if len(in) == 0 {
		return nil
	}
	for k := range in {
		in[k].MessageID = InputMessageID(r.req.Meta.CommandID, in[k].InputID)
	}
	err := r.stageInputs(in)
	if err == nil {
		err = r.commit(ctx)
	}
	r.req.Inputs.Recorded(context.WithoutCancel(ctx), r.req.SessionID, in, err)
	return err
}

func (r *run) stageInputs(in []Input) error {
	for _, i := range in {
		msg := session.AppendUserMessage{SessionID: r.req.SessionID, MessageID: i.MessageID, Text: i.Text}
		i.Report.carry(&msg)
		ps, err := session.Decide(&r.sess, msg)
		for _, p := range ps {
			if err == nil {
				err = r.sess.Evolve(p)
			}
		}
		if err == nil {
			err = r.stage(ps...)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
