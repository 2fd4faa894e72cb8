package httpapi

import (
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/events"
)

// newSessionRequest is POST /api/sessions: a new session and its first turn, or (no prompt)
// the session alone.
type newSessionRequest struct {
	CommandID string `json:"commandId"`
	Prompt    string `json:"prompt,omitempty"`
	Title     string `json:"title,omitempty"`
	Agent     string `json:"agent,omitempty"`
	Model     string `json:"model,omitempty"`
	// Directory is the session's workspace; the server's working directory when empty.
	Directory string `json:"directory,omitempty"`
}

// messageRequest is POST /api/sessions/{sessionId}/messages: the session's next turn, or
// (steer) an input of its running turn.
type messageRequest struct {
	CommandID string `json:"commandId"`
	Prompt    string `json:"prompt"`
	Agent     string `json:"agent,omitempty"`
	Model     string `json:"model,omitempty"`
	// Steer sends the message to the running turn, delivered at its next tool-safe boundary
	// (Commands.Steer); with no turn running it is the next turn, as without steer.
	Steer bool `json:"steer,omitempty"`
}

// accepted is the answer to a turn's request: where to follow it. The ids derive from the
// command id, so a request sent again names the same session and turn and starts nothing.
type accepted struct {
	CommandID string `json:"commandId"`
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
	// Events is the session's event stream, where the turn is followed.
	Events string `json:"events"`
	// Outcome is set when the turn had already finished (the same command sent again).
	Outcome *outcome `json:"outcome,omitempty"`
	// Delivery, for a message sent with steer: steering (InputID names it in the session's
	// inbox, TurnID is the turn that ran, Status queued or consumed) or turn (it started the
	// turn TurnID).
	Delivery string `json:"delivery,omitempty"`
	InputID  string `json:"inputId,omitempty"`
	Status   string `json:"status,omitempty"`
}

// created is the answer to a new session without a turn.
type created struct {
	CommandID string `json:"commandId"`
	SessionID string `json:"sessionId"`
	Events    string `json:"events"`
	// Duplicate: the same command had created it before; nothing was written now.
	Duplicate bool `json:"duplicate,omitempty"`
}

type outcome struct {
	Reason    string `json:"reason"`
	Steps     int    `json:"steps"`
	Text      string `json:"text,omitempty"`
	Duplicate bool   `json:"duplicate,omitempty"`
}

func (s *Server) startSession(w http.ResponseWriter, r *http.Request, actor string) error {
	var req newSessionRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	meta, err := s.meta(req.CommandID, actor, "", true)
	if err != nil {
		return err
	}
	sid := app.NewSessionID(meta.CommandID)
	meta.CorrelationID = sid
	dir := req.Directory
	switch {
	case dir == "":
		dir = s.cfg.Cwd
	case !filepath.IsAbs(dir):
		// Relative to what? The server's working directory is nothing a client should depend on.
		return &Error{code: CodeBadRequest, Message: "directory " + strconv.Quote(dir) + " is not absolute",
			Fix: "name the workspace by its absolute path, or leave directory out for the server's working directory"}
	}
	if req.Prompt == "" {
		return s.createSession(w, r, meta, req, dir)
	}
	return s.runTurn(w, r, app.RunTurn{Meta: meta, Prompt: req.Prompt, Title: req.Title, Agent: req.Agent, Model: req.Model,
		Dir: dir, Cwd: s.cfg.Cwd}, sid)
}

// createSession is POST /api/sessions without a prompt: the session alone (zuno session
// create), 201, its id derived from the command id as a turn's new session's is.
func (s *Server) createSession(w http.ResponseWriter, r *http.Request, meta commands.Meta, req newSessionRequest, dir string) error {
	if req.Model != "" {
		return &Error{code: CodeBadRequest, Message: "model is chosen per turn, and this request starts none",
			Fix: "leave model out, or send it with the session's first message"}
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	sid, res, err := s.app.Commands.OpenSession(ctx, meta, req.Title, req.Agent, dir)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, created{CommandID: meta.CommandID, SessionID: sid,
		Events: "/api/sessions/" + sid + "/events", Duplicate: res.Duplicate})
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request, actor string) error {
	var req messageRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	sid := r.PathValue("sessionId")
	meta, err := s.meta(req.CommandID, actor, sid, true)
	if err != nil {
		return err
	}
	run := app.RunTurn{Meta: meta, SessionID: sid, Prompt: req.Prompt, Agent: req.Agent, Model: req.Model, Cwd: s.cfg.Cwd}
	if !req.Steer {
		return s.runTurn(w, r, run, sid)
	}
	// A turn that starts between the steer's look and the run is busy: steer again, once.
	for attempt := 0; ; attempt++ {
		ctx, cancel := s.requestContext(r)
		st, err := s.app.Commands.Steer(ctx, meta, sid, req.Prompt)
		cancel()
		if err != nil {
			return err
		}
		if st.Delivery == app.DeliverySteering {
			return writeJSON(w, http.StatusAccepted, accepted{CommandID: meta.CommandID, SessionID: sid, TurnID: st.TurnID,
				Events: "/api/sessions/" + sid + "/events", Delivery: st.Delivery, InputID: st.InputID, Status: st.Status})
		}
		err = s.runTurn(w, r, run, sid)
		if app.CodeOf(err) != turn.CodeSessionBusy || attempt > 0 {
			return err
		}
	}
}

// CodeModelRefused: a request names a model the server does not let clients choose.
const CodeModelRefused = "model_refused"

// runTurn starts the turn in this process, detached from the request (a turn outlives its
// HTTP exchange), and answers 202 once the turn has started: the session's event stream is
// how it is followed. A refusal before anything runs (a bad model, another turn running, the
// command id reused with another prompt) is the answer instead. Asks wait for a reply through
// the API (POST .../asks/{askId}/reply), from any client.
func (s *Server) runTurn(w http.ResponseWriter, r *http.Request, in app.RunTurn, sid string) error {
	if strings.TrimSpace(in.Prompt) == "" {
		return &Error{code: CodeBadRequest, Message: "prompt is empty", Fix: "send the user's message as prompt"}
	}
	if strings.HasPrefix(in.Model, "scripted:") {
		// A scripted model names a file on the server: a client may not make the server read one.
		return &Error{code: CodeModelRefused, Message: "model " + in.Model + " names a file on the server",
			Fix: "name a PROVIDER/<model>, or leave model out for the server's default"}
	}
	// Events at or before the head are an earlier delivery's, which a command sent again shows
	// its observer: only a turn started now is "started".
	head, err := s.app.Queries.Head(r.Context())
	if err != nil {
		return err
	}
	in.Interactive = true
	started := newStartSignal(head)
	in.Observer = started
	done := make(chan runResult, 1)
	s.turns.Add(1)
	go func() {
		defer s.turns.Done()
		res, err := s.app.Commands.RunTurn(s.turnsCtx, in)
		done <- runResult{res, err}
		s.logf("turn %s of session %s (command %s): %s %v", res.TurnID, sid, in.Meta.CommandID, res.Reason, err)
	}()
	out := accepted{CommandID: in.Meta.CommandID, SessionID: sid, TurnID: turn.TurnID(in.Meta.CommandID),
		Events: "/api/sessions/" + sid + "/events"}
	if in.SessionID != "" {
		out.Delivery = app.DeliveryTurn
	}
	select {
	case <-started.ch:
		return writeJSON(w, http.StatusAccepted, out)
	case res := <-done:
		if app.CodeOf(res.err) == turn.CodeTurnInProgress {
			// The same command, sent again while its turn runs: the same answer as the first.
			return writeJSON(w, http.StatusAccepted, out)
		}
		if res.err != nil {
			return res.err
		}
		out.Outcome = &outcome{Reason: res.res.Reason, Steps: res.res.Steps, Text: res.res.Text, Duplicate: res.res.Duplicate}
		return writeJSON(w, http.StatusAccepted, out)
	case <-r.Context().Done():
		return context.Cause(r.Context())
	}
}

type runResult struct {
	res app.TurnResult
	err error
}

// startSignal is the observer of a turn run for a client: it says once that the turn has
// started (its session.turn.started.1 is durable, after the log's head when the request
// came). Everything else the client reads from the event stream.
type startSignal struct {
	turn.NopObserver
	after uint64
	once  sync.Once
	ch    chan struct{}
}

func newStartSignal(after uint64) *startSignal {
	return &startSignal{after: after, ch: make(chan struct{})}
}

func (o *startSignal) Recorded(rec events.Recorded, _ events.Payload) {
	if rec.Type == events.TypeTurnStarted && rec.Position > o.after {
		o.once.Do(func() { close(o.ch) })
	}
}
