package acp

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// Prompt runs one turn of the session on the prompt's text (Commands.RunTurn, as zuno run
// does, in the session's current mode), streaming its recorded events as session updates, and
// answers with the turn's stop reason once the work it delegated has been delivered
// (Commands.SettleJobs, as zuno run waits). Permission asks go to the client
// (session/request_permission) and wait in the session's inbox, where any face may answer.
func (g *Agent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	sid := string(p.SessionId)
	s, err := g.session(sid)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	text, err := promptText(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g.mu.Lock()
	if s.cancel != nil {
		g.mu.Unlock()
		return sdk.PromptResponse{}, busy(sid)
	}
	s.cancel = cancel
	mode := s.mode
	g.turns.Add(1)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		s.cancel = nil
		g.mu.Unlock()
		g.turns.Done()
	}()
	stop := context.AfterFunc(g.ctx, cancel) // the connection's end interrupts the turn
	defer stop()

	st := newStream(g, sid)
	place, err := g.app.Queries.Place(tctx, sid)
	if err != nil {
		return sdk.PromptResponse{}, toRPC(err)
	}
	st.dir = place.Directory
	res, err := g.app.Commands.RunTurn(tctx, app.RunTurn{Meta: g.meta(sid), SessionID: sid, Prompt: text, Agent: mode,
		Cwd: g.cfg.Cwd, Observer: st, Interactive: true, Editor: g.editorFor(sid)})
	if err == nil && tctx.Err() == nil {
		err = g.settle(tctx, sid)
	}
	st.close()
	switch {
	case tctx.Err() != nil:
		// ACP: a cancelled prompt answers cancelled, not an error; the turn recorded interrupted.
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case err != nil:
		return sdk.PromptResponse{}, toRPC(err)
	}
	return stopReason(res)
}

// settle waits, as zuno run does, until the work the turn delegated has been delivered: the
// children's reports arrive as the session's next turns, streamed by the same observer
// (Commands.SettleJobs). The process's job runtime stops for good when the context it settles
// with ends (it was made for one run per process), so it is given one that never ends, and a
// cancelled prompt stops waiting instead: it interrupts the delivery turn running then, and
// the children still running go on in the background, their reports delivered when they end.
func (g *Agent) settle(ctx context.Context, sid string) error {
	done := make(chan error, 1)
	go func() {
		_, err := g.app.Commands.SettleJobs(context.WithoutCancel(ctx))
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		if _, err := g.app.Commands.InterruptTurn(context.WithoutCancel(ctx), g.meta(sid), sid, ""); err != nil && app.CodeOf(err) != "turn_not_running" {
			g.logf("interrupting the delivery turn of %s: %v", sid, err)
		}
		return ctx.Err()
	}
}

// stopReason is the ACP stop reason of a turn's outcome; a failed turn is an error with its
// typed code.
func stopReason(res app.TurnResult) (sdk.PromptResponse, error) {
	usage := &sdk.Usage{InputTokens: int(res.Usage.InputTokens), OutputTokens: int(res.Usage.OutputTokens),
		TotalTokens: int(res.Usage.InputTokens + res.Usage.OutputTokens)}
	switch res.Reason {
	case events.FinishCompleted:
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn, Usage: usage}, nil
	case events.FinishStepLimit:
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTurnRequests, Usage: usage}, nil
	case events.FinishInterrupted:
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled, Usage: usage}, nil
	}
	if err := res.Err(); err != nil {
		return sdk.PromptResponse{}, toRPC(err)
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn, Usage: usage}, nil
}

// promptText is the user's message: the text blocks, a resource link as its URI, an embedded
// text resource as its URI and text. Other content (images, audio: not advertised) is refused.
func promptText(blocks []sdk.ContentBlock) (string, error) {
	var parts []string
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			parts = append(parts, b.Text.Text)
		case b.ResourceLink != nil:
			parts = append(parts, "@"+b.ResourceLink.Uri)
		case b.Resource != nil && b.Resource.Resource.TextResourceContents != nil:
			r := b.Resource.Resource.TextResourceContents
			parts = append(parts, fmt.Sprintf("@%s\n```\n%s\n```", r.Uri, r.Text))
		default:
			return "", invalidParams("bad_request", fmt.Sprintf("prompt[%d] is content this agent does not take", i),
				"send text, resource links or embedded text resources (initialize lists the prompt capabilities)")
		}
	}
	text := strings.Join(parts, "\n")
	if strings.TrimSpace(text) == "" || !utf8.ValidString(text) {
		return "", invalidParams("bad_request", "the prompt says nothing", "send the user's message as a text block")
	}
	return text, nil
}

// stream is the observer of a prompt's turns: each recorded event of the session, as it
// becomes durable, is sent as the session updates project.go makes of it. A child's events
// (delegated work) are its own session's and are not sent; its report is, when the session
// receives it.
type stream struct {
	g   *Agent
	sid string

	mu sync.Mutex
	// streamed: the current step's text reached the client as deltas already.
	streamed bool
	// calls are the calls of the responses, by id, for a permission request's view of one.
	calls map[string]events.ToolCall
	// asks are the permission requests waiting for the client, by call id.
	asks map[string]context.CancelFunc
	dir  string
	wg   sync.WaitGroup
	// qctx ends the waits for questions to be published when the prompt ends.
	qctx    context.Context
	qcancel context.CancelFunc
}

func newStream(g *Agent, sid string) *stream {
	s := &stream{g: g, sid: sid, calls: map[string]events.ToolCall{}, asks: map[string]context.CancelFunc{}}
	s.qctx, s.qcancel = context.WithCancel(g.ctx)
	return s
}

// Recorded is called by the turn for each durable event, in log order.
func (s *stream) Recorded(rec events.Recorded, p events.Payload) {
	if rec.Stream != "session-"+s.sid {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e := p.(type) {
	case events.SessionCreated:
		s.dir = e.Directory
	case events.DirectoryChanged:
		s.dir = e.Directory
	case events.UserMessageAppended:
		if deliveredInput(e) {
			s.send(userUpdate(e))
		}
	case events.ProviderRequest:
		s.response(e)
	case events.PermissionAsked:
		s.ask(e)
	case events.ToolStarted:
		s.settle(e.CallID)
		s.send(startedUpdate(e))
		if app.AsksUser(e.Tool) {
			s.published(e)
		}
	case events.ToolSettled:
		s.settle(e.CallID)
		s.send(settledUpdate(e, s.dir))
		if isPlanTool(e.Tool) {
			s.plan()
		}
	case events.ToolBlocked:
		s.settle(e.CallID)
		s.send(blockedUpdate(e))
	}
}

func (s *stream) response(e events.ProviderRequest) {
	switch e.Status {
	case events.RequestStarted:
		s.streamed = false
	case events.RequestCompleted:
		if e.Response == nil {
			return
		}
		for _, c := range e.Response.ToolCalls {
			s.calls[c.ID] = c
		}
		for _, u := range responseUpdates(e.Response, s.streamed, s.dir) {
			s.send(u)
		}
	}
}

// TextDelta streams the model's text as it arrives.
func (s *stream) TextDelta(text string) {
	if text == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streamed = true
	s.send(sdk.UpdateAgentMessageText(text))
}

// plan sends the durable Plan as it is now (plan_get's view, read from the work stream).
func (s *stream) plan() {
	v, err := s.g.app.Queries.Plan(s.g.ctx, s.sid)
	if err != nil {
		s.g.logf("plan of %s not sent: %v", s.sid, err)
		return
	}
	pv, _ := v.(*work.PlanView)
	if u, ok := planUpdate(pv); ok {
		s.send(u)
	}
}

// send writes one update. Updates are sent in the order the turn records its events, each
// before the next event's: the observer is called in log order and sending only writes.
func (s *stream) send(u sdk.SessionUpdate) {
	if err := s.g.update(context.WithoutCancel(s.g.ctx), sdk.SessionNotification{SessionId: sdk.SessionId(s.sid), Update: u}); err != nil {
		s.g.logf("update of %s not sent: %v", s.sid, err)
	}
}

// close withdraws the permission requests still open (the turn has ended) and waits for them.
func (s *stream) close() {
	s.mu.Lock()
	for id, cancel := range s.asks {
		cancel()
		delete(s.asks, id)
	}
	s.mu.Unlock()
	s.qcancel()
	s.wg.Wait()
}

func (g *Agent) logf(format string, args ...any) {
	fmt.Fprintf(g.cfg.Log, "zuno acp: "+format+"\n", args...)
}
