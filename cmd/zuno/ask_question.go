package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zuno-run/zuno/commands"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/events"
)

// terminalQuestions puts the questions a run's turn publishes (question, question_async,
// plan_exit) to the person at the terminal, through the QuestionPort (docs/questions.md): each
// item in turn, by option number, label or free text; an empty line skips an item, and a
// request with every item skipped is deferred ("later"), which is no answer. It never blocks
// the turn: each request is put from a goroutine of its own, one at a time at the terminal
// (the permission asker shares it).
type terminalQuestions struct {
	ctx   context.Context
	asker *terminalAsker
	port  *zapp.Questions
}

// started puts the request call publishes once it is published.
func (t *terminalQuestions) started(e events.ToolStarted) {
	go func() {
		r := t.published(e.SessionID, zapp.RequestID(e.SessionID, e.CallID))
		if r == nil {
			return
		}
		t.asker.mu.Lock()
		defer t.asker.mu.Unlock()
		t.put(r)
	}()
}

// published waits (up to 30 s: a call the port refused publishes nothing) for the request.
func (t *terminalQuestions) published(session, request string) *zapp.QuestionRequest {
	for range 600 {
		if r, err := t.port.Get(t.ctx, session, request); err == nil {
			return r
		}
		select {
		case <-t.ctx.Done():
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

func (t *terminalQuestions) put(r *zapp.QuestionRequest) {
	out := t.asker.out
	title := r.Title
	if title == "" {
		title = "a question"
	}
	fmt.Fprintf(out, "\n? %s asks %s (%s)\n", orDash(r.Agent), title, r.RequestID)
	if r.DeferAt != "" {
		if at, err := time.Parse(time.RFC3339Nano, r.CountdownAt); err == nil {
			stop := time.AfterFunc(time.Until(at), func() {
				fmt.Fprintf(out, "\n  (no answer yet: the question is deferred at %s unless you answer; it stays open)\n",
					strings.TrimSuffix(r.DeferAt, "Z"))
			})
			defer stop.Stop()
		}
	}
	var answers []events.QuestionItemAnswer
	for _, it := range r.Items {
		if a, ok := t.item(it); ok {
			answers = append(answers, a)
		}
	}
	if err := t.record(r, answers); err != nil {
		fmt.Fprintf(out, "! the answer was not recorded: %v; answer with zuno question answer --session %s %s\n", err, r.SessionID, r.RequestID)
	}
}

// item reads the answer to one item; false when it is skipped (an empty line, end of input).
func (t *terminalQuestions) item(it events.QuestionItem) (events.QuestionItemAnswer, bool) {
	out := t.asker.out
	fmt.Fprintf(out, "  [%s] %s\n", it.ID, it.Question)
	for i, o := range it.Options {
		fmt.Fprintf(out, "    %d) %s", i+1, o.Label)
		if o.Description != "" {
			fmt.Fprintf(out, " — %s", o.Description)
		}
		fmt.Fprintln(out)
	}
	hint := "answer"
	if len(it.Options) > 0 {
		hint = "number or label"
		if it.Custom {
			hint += ", or your own answer"
		}
	}
	for range 3 {
		fmt.Fprintf(out, "  %s (empty: skip)? ", hint)
		line, err := t.asker.in.ReadString('\n')
		line = strings.TrimSpace(line)
		if line == "" {
			return events.QuestionItemAnswer{}, false
		}
		if n, convErr := strconv.Atoi(line); convErr == nil && n >= 1 && n <= len(it.Options) {
			return events.QuestionItemAnswer{ItemID: it.ID, Selected: []string{it.Options[n-1].Label}}, true
		}
		for _, o := range it.Options {
			if strings.EqualFold(o.Label, line) {
				return events.QuestionItemAnswer{ItemID: it.ID, Selected: []string{o.Label}}, true
			}
		}
		if it.Custom {
			return events.QuestionItemAnswer{ItemID: it.ID, Text: line}, true
		}
		if err != nil {
			break
		}
		fmt.Fprintln(out, "  (not one of the options)")
	}
	return events.QuestionItemAnswer{}, false
}

// record answers against the request's current revision (read again: the deadline may have
// deferred it meanwhile, which leaves it open), or defers it when every item was skipped.
func (t *terminalQuestions) record(r *zapp.QuestionRequest, answers []events.QuestionItemAnswer) error {
	for range 3 {
		cur, err := t.port.Get(t.ctx, r.SessionID, r.RequestID)
		if err != nil {
			return err
		}
		if !cur.Open() {
			fmt.Fprintf(t.asker.out, "  (the request is %s already)\n", cur.Status())
			return nil
		}
		m := commands.Meta{CommandID: zapp.NewID("cmd_"), Actor: "user"}
		if len(answers) == 0 {
			_, err = t.port.Later(t.ctx, m, r.SessionID, r.RequestID, cur.Revision)
		} else {
			_, err = t.port.Answer(t.ctx, m, r.SessionID, r.RequestID, cur.Revision, answers, "terminal")
		}
		if zapp.CodeOf(err) != zapp.CodeStaleRevision {
			if err == nil && len(answers) == 0 {
				fmt.Fprintln(t.asker.out, "  (later: no answer; the request stays open)")
			}
			return err
		}
	}
	return fmt.Errorf("the request kept changing")
}
