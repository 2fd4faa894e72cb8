package acp

import (
	"context"
	"fmt"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/events"
)

// Questions (docs/questions.md) over ACP, which has no question of its own in its stable
// schema: Zuno's extension methods (ACP reserves names that begin with "_" for them), on the
// same QuestionPort the terminal and the HTTP server use (Commands.Questions).
//
//   - _zuno/question (a notification to the client): a request the session's turn published,
//     as GET /api/session/questions shows it: requestId, revision, items and their options.
//   - _zuno/session/questions {sessionId, all?}: the session's open requests (all: every one).
//   - _zuno/session/question/reply {sessionId, requestId, expectedRevision, commandId?,
//     answers | later: true}: an answer or a deferral; a request answered in full (by any
//     face) or voided takes none: question_not_pending, as the HTTP face's 404.
const (
	methodQuestion       = "_zuno/question"
	methodQuestions      = "_zuno/session/questions"
	methodQuestionsReply = "_zuno/session/question/reply"
)

// CodeQuestionNotPending: a reply to a request that takes none (answered in full, voided,
// never published), whoever replied first.
const CodeQuestionNotPending = "question_not_pending"

// published sends the request a question call publishes, once it is (the call publishes it
// after it starts; a call the port refused publishes nothing, and nothing is sent).
func (s *stream) published(e events.ToolStarted) {
	ctx, q := s.qctx, s.g.app.Commands.Questions()
	id := app.RequestID(e.SessionID, e.CallID)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		read := context.WithoutCancel(ctx)
		for range 600 {
			// The prompt's end stops the wait, after one last look: the call publishes before it
			// settles, so a request that exists by then is found now.
			last := ctx.Err() != nil
			if r, err := q.Get(read, e.SessionID, id); err == nil {
				if err := s.g.conn.SendNotification(read, methodQuestion,
					map[string]any{"sessionId": e.SessionID, "question": app.ViewRequest(r)}); err != nil {
					s.g.logf("question %s not sent: %v", id, err)
				}
				return
			}
			if last {
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
}

type questionsRequest struct {
	SessionID string `json:"sessionId"`
	All       bool   `json:"all,omitempty"`
}

func (g *Agent) questions(ctx context.Context, p questionsRequest) (any, error) {
	if _, err := g.session(p.SessionID); err != nil {
		return nil, err
	}
	rs, err := g.app.Commands.Questions().List(ctx, p.SessionID, !p.All)
	if err != nil {
		return nil, err
	}
	out := make([]app.RequestView, len(rs))
	for i, r := range rs {
		out[i] = app.ViewRequest(r)
	}
	return map[string]any{"questions": out}, nil
}

type questionReply struct {
	SessionID        string                      `json:"sessionId"`
	RequestID        string                      `json:"requestId"`
	ExpectedRevision *uint64                     `json:"expectedRevision"`
	CommandID        string                      `json:"commandId,omitempty"`
	Answers          []events.QuestionItemAnswer `json:"answers,omitempty"`
	Later            bool                        `json:"later,omitempty"`
}

func (g *Agent) replyQuestion(ctx context.Context, p questionReply) (any, error) {
	if _, err := g.session(p.SessionID); err != nil {
		return nil, err
	}
	if p.ExpectedRevision == nil || p.RequestID == "" {
		return nil, invalidParams("bad_request", "requestId and expectedRevision are required",
			"send the request's id and the revision it showed (_zuno/session/questions)")
	}
	if p.Later == (len(p.Answers) > 0) {
		return nil, invalidParams("bad_request", "send answers, or later: true, not both nor neither",
			"answer some items, or defer the request with later: true (a deferral is no answer)")
	}
	meta := g.meta(p.SessionID)
	if p.CommandID != "" {
		meta.CommandID = p.CommandID
	}
	q := g.app.Commands.Questions()
	var view any
	var err error
	if p.Later {
		view, err = q.Later(ctx, meta, p.SessionID, p.RequestID, *p.ExpectedRevision)
	} else {
		view, err = q.Answer(ctx, meta, p.SessionID, p.RequestID, *p.ExpectedRevision, p.Answers, Actor)
	}
	switch app.CodeOf(err) {
	case "":
		return view, nil
	case question.CodeQuestionNotFound, question.CodeQuestionClosed:
		return nil, &sdk.RequestError{Code: codeResourceNotFound, Message: "Resource not found",
			Data: errData(CodeQuestionNotPending, fmt.Sprintf("session %s has no open question request %s", p.SessionID, p.RequestID),
				"list the session's open questions (_zuno/session/questions); an answered request is final")}
	}
	return nil, err
}
