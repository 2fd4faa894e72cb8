package commands

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/events"
)

// QuestionCommand is one command of a session's questions (docs/questions.md): Cmd is a
// question.Publish, question.Answer, question.Defer or question.Void. The questions live in
// the session's inbox stream (JobStream), so an answer and the inbox input that carries it to
// the model are one append. Its events' ids derive from Meta.CommandID: the same command sent
// again appends nothing and answers with its first result, and the id sent again with other
// content is refused (command_id_reused).
type QuestionCommand struct {
	Meta
	SessionID string `json:"sessionId"`
	// RequestID names the request the view shows.
	RequestID string `json:"requestId"`
	Cmd       any    `json:"cmd"`
}

// QuestionView is a request as a command's result shows it.
type QuestionView struct {
	RequestID string   `json:"requestId"`
	Revision  uint64   `json:"revision"`
	Status    string   `json:"status"`
	Pending   []string `json:"pending"`
	Deferred  string   `json:"deferred,omitempty"`
}

// ViewOf is r's view; nil for no request.
func ViewOf(r *question.Request) *QuestionView {
	if r == nil {
		return nil
	}
	return &QuestionView{RequestID: r.RequestID, Revision: r.Revision, Status: r.Status(), Pending: r.Pending(), Deferred: r.Deferred}
}

// HandleQuestion runs one question command and returns its result with the book after it. It
// shares a hot stream with the job ledger, so a command that lost every race of a round is
// sent again with the same id, as HandleJob does.
func (h *Handlers) HandleQuestion(ctx context.Context, c *QuestionCommand) (Result, *question.Book) {
	for round := 1; ; round++ {
		res, b := h.handleQuestion(ctx, c)
		if res.Error == nil || res.Error.Code != CodeContention || round == jobRounds || ctx.Err() != nil {
			return res, b
		}
		time.Sleep(time.Duration(1+rand.IntN(4*round)) * time.Millisecond)
	}
}

func (h *Handlers) handleQuestion(ctx context.Context, c *QuestionCommand) (Result, *question.Book) {
	var after *question.Book
	x := execution[*question.Book]{
		meta: c.Meta, stream: JobStream(c.SessionID),
		newState: func() *question.Book { return &question.Book{} },
		decide:   func(b *question.Book) ([]events.Payload, error) { return decideQuestion(b, c.Cmd) },
	}
	res := Measured(h.metrics, "Question", func(ctx context.Context, c *QuestionCommand) (Result, error) {
		return handle(ctx, h, "Question", x, c.Cmd, func(b *question.Book) any { after = b; return ViewOf(b.Get(c.RequestID)) }), nil
	})
	r, _ := res(ctx, c)
	return r, after
}

func decideQuestion(b *question.Book, cmd any) ([]events.Payload, error) {
	switch c := cmd.(type) {
	case question.Publish:
		return question.DecidePublish(b, c)
	case question.Answer:
		return question.DecideAnswer(b, c)
	case question.Defer:
		return question.DecideDefer(b, c)
	case question.Void:
		return question.DecideVoid(b, c)
	}
	panic("commands: unknown question command") // the callers are this module's
}

// LoadQuestions folds a session's questions from its inbox stream.
func LoadQuestions(ctx context.Context, store StreamReader, registry *events.Registry, sessionID string) (*question.Book, int64, error) {
	b := &question.Book{}
	rev, err := Load(ctx, store, registry, JobStream(sessionID), 0, func(_ events.Recorded, p events.Payload) error { return b.Evolve(p) })
	return b, rev, err
}
