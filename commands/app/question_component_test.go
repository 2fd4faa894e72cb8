package app_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/instructions"
	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/adapters/tools/delegate"
	"github.com/zuno-run/zuno/adapters/tools/goaltools"
	"github.com/zuno-run/zuno/adapters/tools/questiontools"
	"github.com/zuno-run/zuno/adapters/tools/toolset"
	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/live"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// questionApp is one process's Application over a real SQLite event log file: building a
// second one over the same file is a restart.
type questionApp struct {
	app      *app.Application
	store    *sqlstore.Store
	handlers *commands.Handlers
	stop     func()
}

// newQuestionApp opens the Application over the log at dbPath, with the file, work,
// delegation and question tools, waiting questions deferred after deferAfter.
func newQuestionApp(t *testing.T, dbPath, workspace string, deferAfter time.Duration) *questionApp {
	t.Helper()
	ctx := context.Background()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	store, err := sqlstore.OpenSQLite(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	registry := events.NewRegistry(events.AllPayloads()...)
	rm, err := readmodel.OpenSQLite(ctx, filepath.Join(t.TempDir(), "rm.db"))
	if err != nil {
		t.Fatal(err)
	}
	runner := projections.NewRunner(rm.Writer, store, registry, projections.All())
	handlers := commands.NewHandlers(store, registry, commands.SystemClock{}, nil)
	bus, err := commands.StartBus(ctx, handlers, commands.GoChannelTransport(commands.NewGoChannel(nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	feed := live.New(store)
	feedCtx, stopFeed := context.WithCancel(ctx)
	go feed.Run(feedCtx)
	artifacts := t.TempDir()
	settings := app.Settings{Model: "scripted:none", Home: t.TempDir(), QuestionDefer: deferAfter}
	qa := &questionApp{store: store, handlers: handlers}
	qa.app = app.New(settings, nil, app.Ports{
		Send:   bus.Send,
		Log:    store,
		Driver: &turn.Driver{Store: store, Registry: registry, Clock: commands.SystemClock{}, Feed: feed},
		OpenProvider: func(spec string) (model.Provider, error) {
			return provider.Open(spec)
		},
		Configure: func(dir string) (app.SessionConfig, error) {
			return app.SessionConfig{Settings: settings, OpenTools: func(req turn.ToolsRequest) (turn.Surface, error) {
				set, err := toolset.New(toolset.Config{Root: req.Dir, ArtifactDir: filepath.Join(artifacts, req.SessionID), SessionID: req.SessionID})
				if err != nil {
					return nil, err
				}
				return surface(slices.Concat(set.Tools(), worktools.New(handlers.WorkCommands()), delegate.New(qa.app.Commands.Jobs()),
					goaltools.New(handlers.GoalCommands()), questiontools.New(qa.app.Commands.Questions()))), nil
			}}, nil
		},
		Feed:         feed,
		Instructions: instructions.Read,
		Projections:  runner,
		Jobs:         handlers,
		Work:         handlers.Work,
	}, queries.New(store, registry, readModels{rm}, runner))
	var once sync.Once
	qa.stop = func() {
		once.Do(func() {
			_, _ = qa.app.Commands.SettleJobs(context.Background())
			stopFeed()
			bus.Close()
			runner.Close()
			rm.Close()
			store.Close()
		})
	}
	t.Cleanup(qa.stop)
	return qa
}

// session runs a one-step turn so that a session exists, and returns its id.
func (qa *questionApp) session(t *testing.T, scripts, workspace string) string {
	t.Helper()
	spec := writeScript(t, scripts, "hello", `{"turns":[{"text":"hello"}]}`)
	res, err := qa.app.Commands.RunTurn(context.Background(), app.RunTurn{Meta: meta("run-hello"), Prompt: "hi", Model: spec, Cwd: workspace})
	if err != nil || res.Err() != nil {
		t.Fatalf("turn: %v %v", err, res.Err())
	}
	return res.SessionID
}

func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	c := &component{t: t, scripts: dir}
	return c.script(name, body)
}

// publish opens a request directly through the command layer, as the tools do.
func (qa *questionApp) publish(t *testing.T, session, id string, deferAt time.Time, items ...events.QuestionItem) {
	t.Helper()
	p := events.QuestionPublished{SessionID: session, RequestID: id, Kind: events.QuestionKindQuestion,
		Mode: events.QuestionModeReceipt, Tool: "question", CallID: "call_" + id, Items: items}
	if !deferAt.IsZero() {
		p.Mode, p.DeferAt = events.QuestionModeWait, deferAt.UTC().Format(time.RFC3339Nano)
	}
	res, _ := qa.handlers.HandleQuestion(context.Background(), &commands.QuestionCommand{Meta: meta("publish-" + id),
		SessionID: session, RequestID: id, Cmd: question.Publish{QuestionPublished: p}})
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
}

// inbox counts the session's inbox inputs that carry answers to request id, and its
// deferrals.
func (qa *questionApp) inbox(t *testing.T, session, id string) (answers, deferrals []events.Payload) {
	t.Helper()
	recs, err := qa.store.ReadStream(context.Background(), commands.JobStream(session), 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	reg := events.NewRegistry(events.AllPayloads()...)
	for _, r := range recs {
		p, err := reg.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		switch e := p.(type) {
		case events.InboxMessageAdmitted:
			if e.QuestionRequestID == id {
				answers = append(answers, e)
			}
		case events.QuestionDeferred:
			if e.RequestID == id {
				deferrals = append(deferrals, e)
			}
		}
	}
	return answers, deferrals
}

var (
	itemDB   = events.QuestionItem{ID: "db", Question: "Which database?", Options: []events.QuestionOption{{Label: "SQLite"}, {Label: "Postgres"}}}
	itemName = events.QuestionItem{ID: "name", Question: "What is the service called?", Custom: true}
)

func pick(item, label string) []events.QuestionItemAnswer {
	return []events.QuestionItemAnswer{{ItemID: item, Selected: []string{label}}}
}

// Answers are commands with commandId and expectedRevision: the same command is idempotent,
// an old revision or a reused id with other content is refused with typed errors, a partial
// answer keeps what it confirms, and every real answer is one inbox input.
func TestQuestionAnswerCommands(t *testing.T) {
	ctx := context.Background()
	dir, ws, scripts := t.TempDir(), t.TempDir(), t.TempDir()
	qa := newQuestionApp(t, filepath.Join(dir, "log.db"), ws, time.Minute)
	s := qa.session(t, scripts, ws)
	qa.publish(t, s, "qst_1", time.Time{}, itemDB, itemName)
	q := qa.app.Commands.Questions()

	_, err := q.Answer(ctx, meta("a-unknown"), s, "qst_1", 1, pick("nope", "x"), "cli")
	if domain.CodeOf(err) != question.CodeItemNotFound {
		t.Fatalf("unknown item: %v", err)
	}
	_, err = q.Answer(ctx, meta("a-bad-option"), s, "qst_1", 1, pick("db", "Oracle"), "cli")
	if domain.CodeOf(err) != domain.CodeInvalidArgument {
		t.Fatalf("not an option: %v", err)
	}
	v, err := q.Answer(ctx, meta("a-1"), s, "qst_1", 1, pick("db", "SQLite"), "cli")
	if err != nil || v.Status != question.StatusPartial || v.Revision != 2 || !slices.Equal(v.Pending, []string{"name"}) {
		t.Fatalf("partial answer: %+v %v", v, err)
	}
	again, err := q.Answer(ctx, meta("a-1"), s, "qst_1", 1, pick("db", "SQLite"), "cli")
	if err != nil || again.Revision != 2 {
		t.Fatalf("the same command again is its first result: %+v %v", again, err)
	}
	_, err = q.Answer(ctx, meta("a-1"), s, "qst_1", 1, pick("db", "Postgres"), "cli")
	if domain.CodeOf(err) != commands.CodeCommandIDReused {
		t.Fatalf("reused id with other content: %v", err)
	}
	_, err = q.Answer(ctx, meta("a-old"), s, "qst_1", 1, []events.QuestionItemAnswer{{ItemID: "name", Text: "billing"}}, "cli")
	var de *domain.Error
	if !errors.As(err, &de) || de.Code() != domain.CodeStaleRevision || de.Expected != 1 || de.Current != 2 {
		t.Fatalf("old revision: %v", err)
	}
	_, err = q.Answer(ctx, meta("a-db-again"), s, "qst_1", 2, pick("db", "Postgres"), "cli")
	if domain.CodeOf(err) != question.CodeItemAnswered {
		t.Fatalf("answered item: %v", err)
	}
	v, err = q.Answer(ctx, meta("a-2"), s, "qst_1", 2, []events.QuestionItemAnswer{{ItemID: "name", Text: "billing"}}, "http")
	if err != nil || v.Status != question.StatusAnswered || len(v.Pending) != 0 {
		t.Fatalf("rest answered: %+v %v", v, err)
	}
	_, err = q.Answer(ctx, meta("a-3"), s, "qst_1", 3, []events.QuestionItemAnswer{{ItemID: "name", Text: "x"}}, "cli")
	if domain.CodeOf(err) != question.CodeQuestionClosed {
		t.Fatalf("answered request: %v", err)
	}
	_, err = q.Later(ctx, meta("later"), s, "qst_1", 3)
	if domain.CodeOf(err) != question.CodeQuestionClosed {
		t.Fatalf("later on an answered request: %v", err)
	}
	inputs, _ := qa.inbox(t, s, "qst_1")
	if len(inputs) != 2 {
		t.Fatalf("%d inbox inputs, want one per real answer (2)", len(inputs))
	}
	first := inputs[0].(events.InboxMessageAdmitted)
	if !strings.Contains(first.Text, "Selected: SQLite") || !strings.Contains(first.Text, "Still unanswered: name") {
		t.Fatalf("first input: %q", first.Text)
	}
	if ok, err := q.Answered(ctx, s, "qst_1"); err != nil || !ok {
		t.Fatalf("Answered: %v %v", ok, err)
	}
}

// Skip, later and timeout are not answers: a deferred request has no real answer and creates
// no model input.
func TestQuestionLaterIsNoAnswer(t *testing.T) {
	ctx := context.Background()
	dir, ws, scripts := t.TempDir(), t.TempDir(), t.TempDir()
	qa := newQuestionApp(t, filepath.Join(dir, "log.db"), ws, time.Minute)
	s := qa.session(t, scripts, ws)
	qa.publish(t, s, "qst_l", time.Time{}, itemDB)
	q := qa.app.Commands.Questions()
	v, err := q.Later(ctx, meta("later-1"), s, "qst_l", 1)
	if err != nil || v.Status != question.StatusPending || v.Deferred != events.DeferLater || v.Revision != 2 {
		t.Fatalf("later: %+v %v", v, err)
	}
	if ok, err := q.Answered(ctx, s, "qst_l"); err != nil || ok {
		t.Fatalf("a deferral is no answer: %v %v", ok, err)
	}
	inputs, deferrals := qa.inbox(t, s, "qst_l")
	if len(inputs) != 0 || len(deferrals) != 1 {
		t.Fatalf("inputs %d, deferrals %d", len(inputs), len(deferrals))
	}
	if _, err := q.Answer(ctx, meta("after-later"), s, "qst_l", 2, pick("db", "Postgres"), "cli"); err != nil {
		t.Fatalf("answered after later: %v", err)
	}
}

// Two answers race for one request: exactly one is recorded, the other is refused, and the
// model gets one input. The same command sent twice at once is recorded once.
func TestQuestionAnswerRace(t *testing.T) {
	ctx := context.Background()
	dir, ws, scripts := t.TempDir(), t.TempDir(), t.TempDir()
	qa := newQuestionApp(t, filepath.Join(dir, "log.db"), ws, time.Minute)
	s := qa.session(t, scripts, ws)
	q := qa.app.Commands.Questions()
	for i := range 10 {
		id := fmt.Sprintf("qst_race_%d", i)
		qa.publish(t, s, id, time.Time{}, itemDB)
		errs := make([]error, 4)
		var wg sync.WaitGroup
		for j, cmd := range []string{"x-" + id, "y-" + id, "same-" + id, "same-" + id} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				label := []string{"SQLite", "Postgres", "SQLite", "SQLite"}[j]
				_, errs[j] = q.Answer(ctx, meta(cmd), s, id, 1, pick("db", label), "race")
			}()
		}
		wg.Wait()
		inputs, _ := qa.inbox(t, s, id)
		if len(inputs) != 1 {
			t.Fatalf("%s: %d inputs, want 1 (errors %v)", id, len(inputs), errs)
		}
		ok := 0
		for _, err := range errs {
			switch domain.CodeOf(err) {
			case "":
				ok++
			case domain.CodeStaleRevision, question.CodeQuestionClosed:
			default:
				t.Fatalf("%s: unexpected refusal %v", id, err)
			}
		}
		// The winner is one command: one of x, y, or the pair of identical commands.
		if ok != 1 && !(ok == 2 && errs[2] == nil && errs[3] == nil) {
			t.Fatalf("%s: %d commands succeeded: %v", id, ok, errs)
		}
	}
}

// An answer races the deferral at the deadline: either the answer is recorded and no
// deferral, or the deferral is recorded and the answer, made against the first revision, is
// refused (and can be made again against the new one). Never both against one revision.
func TestQuestionAnswerVersusDeferral(t *testing.T) {
	ctx := context.Background()
	dir, ws, scripts := t.TempDir(), t.TempDir(), t.TempDir()
	qa := newQuestionApp(t, filepath.Join(dir, "log.db"), ws, time.Minute)
	s := qa.session(t, scripts, ws)
	q := qa.app.Commands.Questions()
	for i := range 12 {
		id := fmt.Sprintf("qst_dl_%d", i)
		qa.publish(t, s, id, time.Now().Add(time.Duration(5+i*3)*time.Millisecond), itemDB)
		var wg sync.WaitGroup
		var waited *question.Request
		var waitErr, answerErr error
		wg.Add(2)
		go func() { defer wg.Done(); waited, waitErr = q.Wait(ctx, s, id) }()
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i*2) * time.Millisecond)
			_, answerErr = q.Answer(ctx, meta("ans-"+id), s, id, 1, pick("db", "SQLite"), "race")
		}()
		wg.Wait()
		if waitErr != nil {
			t.Fatal(waitErr)
		}
		inputs, deferrals := qa.inbox(t, s, id)
		switch {
		case answerErr == nil:
			t.Logf("%s: the answer won", id)
			if len(deferrals) != 0 || len(inputs) != 1 {
				t.Fatalf("%s: answer won, yet %d deferrals, %d inputs", id, len(deferrals), len(inputs))
			}
		case domain.CodeOf(answerErr) == domain.CodeStaleRevision:
			t.Logf("%s: the deferral won", id)
			if len(deferrals) != 1 || len(inputs) != 0 || waited.Deferred != events.DeferTimeout {
				t.Fatalf("%s: deferral won, yet %d deferrals, %d inputs, wait %+v", id, len(deferrals), len(inputs), waited)
			}
			if _, err := q.Answer(ctx, meta("ans2-"+id), s, id, 2, pick("db", "SQLite"), "race"); err != nil {
				t.Fatalf("%s: answer after the deferral: %v", id, err)
			}
		default:
			t.Fatalf("%s: answer: %v", id, answerErr)
		}
	}
}

// After a restart, a request is answered from the log (the revision it was left at), a
// command handled before the restart is still its first result, and a waiting request is
// deferred at its ORIGINAL stored deadline: the new process, whose own period is an hour,
// neither waits a new period nor recomputes the deadline.
func TestQuestionAfterRestart(t *testing.T) {
	ctx := context.Background()
	dir, ws, scripts := t.TempDir(), t.TempDir(), t.TempDir()
	db := filepath.Join(dir, "log.db")
	qa := newQuestionApp(t, db, ws, time.Minute)
	s := qa.session(t, scripts, ws)
	deadline := time.Now().Add(300 * time.Millisecond)
	qa.publish(t, s, "qst_r", deadline, itemDB, itemName)
	if _, err := qa.app.Commands.Questions().Answer(ctx, meta("before"), s, "qst_r", 1, pick("db", "Postgres"), "cli"); err != nil {
		t.Fatal(err)
	}
	qa.publish(t, s, "qst_w", deadline, itemDB)
	qa.stop()

	again := newQuestionApp(t, db, ws, time.Hour)
	q := again.app.Commands.Questions()
	if v, err := q.Answer(ctx, meta("before"), s, "qst_r", 1, pick("db", "Postgres"), "cli"); err != nil || v.Revision != 2 {
		t.Fatalf("the command handled before the restart: %+v %v", v, err)
	}
	if v, err := q.Answer(ctx, meta("after"), s, "qst_r", 2, []events.QuestionItemAnswer{{ItemID: "name", Text: "ledger"}}, "cli"); err != nil || v.Status != question.StatusAnswered {
		t.Fatalf("answer after the restart: %+v %v", v, err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := q.Wait(wctx, s, "qst_w")
	if err != nil {
		t.Fatalf("wait after the restart (a recomputed deadline would wait an hour): %v", err)
	}
	_, deferrals := again.inbox(t, s, "qst_w")
	if len(deferrals) != 1 || r.Deferred != events.DeferTimeout {
		t.Fatalf("deferrals %v, request %+v", deferrals, r)
	}
	if d := deferrals[0].(events.QuestionDeferred); d.Deadline != deadline.UTC().Format(time.RFC3339Nano) || d.Deadline != r.DeferAt {
		t.Fatalf("deferred for %s, the stored deadline is %s", d.Deadline, r.DeferAt)
	}
	if r.Open() != true || len(r.Answers) != 0 {
		t.Fatalf("a deferral closes and answers nothing: %+v", r)
	}
}

// sessionEvents decodes the session's stream.
func (qa *questionApp) sessionEvents(t *testing.T, session string) []events.Payload {
	t.Helper()
	recs, err := qa.store.ReadStream(context.Background(), commands.SessionStream(session), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	reg := events.NewRegistry(events.AllPayloads()...)
	var out []events.Payload
	for _, r := range recs {
		p, err := reg.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// answerWhenAsked answers the session's first open request once it is published.
func (qa *questionApp) answerWhenAsked(t *testing.T, ctx context.Context, session func() string, answer func(r *question.Request) error) chan error {
	done := make(chan error, 1)
	go func() {
		for ctx.Err() == nil {
			if s := session(); s != "" {
				if rs, err := qa.app.Commands.Questions().List(ctx, s, true); err == nil && len(rs) > 0 {
					done <- answer(rs[0])
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		done <- ctx.Err()
	}()
	return done
}

const askScript = `{"turns":[
 {"toolCalls":[{"id":"call_ask","name":"question","arguments":{"title":"Storage","questions":[{"id":"db","question":"Which database?","options":[{"label":"SQLite"},{"label":"Postgres"}]}]}}]},
 {"text":"Understood."}]}`

// In the plan agent, question waits for the first response; the answer reaches the model
// exactly once, as an inbox input delivered as a user message, never in the tool's result.
func TestQuestionPlanWaitsAndAnswersOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir, ws, scripts := t.TempDir(), t.TempDir(), t.TempDir()
	qa := newQuestionApp(t, filepath.Join(dir, "log.db"), ws, time.Minute)
	s := qa.session(t, scripts, ws)
	spec := writeScript(t, scripts, "ask", askScript)
	answered := qa.answerWhenAsked(t, ctx, func() string { return s }, func(r *question.Request) error {
		_, err := qa.app.Commands.Questions().Answer(ctx, meta("answer-db"), s, r.RequestID, r.Revision, pick("db", "Postgres"), "terminal")
		return err
	})
	res, err := qa.app.Commands.RunTurn(ctx, app.RunTurn{Meta: meta("run-ask"), SessionID: s, Prompt: "plan the storage", Model: spec, Agent: "plan", Cwd: ws})
	if err != nil || res.Err() != nil {
		t.Fatalf("turn: %v %v", err, res.Err())
	}
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	qa.app.Commands.Jobs().Settle(ctx)
	var settled *events.ToolSettled
	delivered := 0
	for _, p := range qa.sessionEvents(t, s) {
		switch e := p.(type) {
		case events.ToolSettled:
			if e.CallID == "call_ask" {
				settled = &e
			}
		case events.UserMessageAppended:
			if strings.Contains(e.Text, "Selected: Postgres") {
				delivered++
				if e.InputID != app.AnswerInputID(app.RequestID(s, "call_ask"), "answer-db") {
					t.Fatalf("the answer's message carries input %q", e.InputID)
				}
			}
		}
	}
	if settled == nil || settled.Outcome != "completed" || !strings.Contains(settled.Output, `"outcome":"answered"`) {
		t.Fatalf("question's result: %+v", settled)
	}
	if strings.Contains(settled.Output, "Postgres") {
		t.Fatalf("the answer is in the tool result: %s", settled.Output)
	}
	if delivered != 1 {
		t.Fatalf("the answer reached the model %d times, want once", delivered)
	}
}

// In Work (the build agent) question publishes and returns a receipt at once: no wait, and
// the request stays open for a later answer.
func TestQuestionWorkReturnsReceipt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir, ws, scripts := t.TempDir(), t.TempDir(), t.TempDir()
	qa := newQuestionApp(t, filepath.Join(dir, "log.db"), ws, time.Hour)
	spec := writeScript(t, scripts, "ask", askScript)
	res, err := qa.app.Commands.RunTurn(ctx, app.RunTurn{Meta: meta("run-ask"), Prompt: "build it", Model: spec, Agent: "build", Cwd: ws})
	if err != nil || res.Err() != nil || res.Reason != "completed" {
		t.Fatalf("turn: %+v %v", res, err)
	}
	rs, err := qa.app.Commands.Questions().List(ctx, res.SessionID, true)
	if err != nil || len(rs) != 1 || rs[0].Mode != events.QuestionModeReceipt || rs[0].DeferAt != "" || rs[0].Status() != question.StatusPending {
		t.Fatalf("requests: %+v %v", rs, err)
	}
}

// With an active Goal, the plan agent's question publishes and returns a receipt like
// Work's (seeds 000): the Goal is read from the work stream when the call asks.
func TestQuestionPlanWithActiveGoalReturnsReceipt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir, ws, scripts := t.TempDir(), t.TempDir(), t.TempDir()
	qa := newQuestionApp(t, filepath.Join(dir, "log.db"), ws, time.Hour)
	spec := writeScript(t, scripts, "goal-ask", `{"turns":[
 {"toolCalls":[{"id":"g1","name":"goal_update","arguments":{"objective":"Plan the storage"}}]},
 {"toolCalls":[{"id":"call_ask","name":"question","arguments":{"questions":[{"id":"db","question":"Which database?"}]}}]},
 {"toolCalls":[{"id":"g2","name":"goal_update","arguments":{"expected_revision":1,"status":"paused"}}]},
 {"text":"Asked."}]}`)
	ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := qa.app.Commands.RunTurn(ctx, app.RunTurn{Meta: meta("run-goal-ask"), Prompt: "plan", Model: spec, Agent: "plan", Cwd: ws})
	if err != nil || res.Err() != nil || res.Reason != "completed" {
		for _, p := range qa.sessionEvents(t, res.SessionID) {
			t.Logf("%T %+v", p, p)
		}
		t.Fatalf("turn: %+v %v", res, err)
	}
	rs, err := qa.app.Commands.Questions().List(ctx, res.SessionID, true)
	if err != nil || len(rs) != 1 || rs[0].Mode != events.QuestionModeReceipt || rs[0].DeferAt != "" || rs[0].Status() != question.StatusPending {
		t.Fatalf("requests: %+v %v", rs, err)
	}
}

const planExitScript = `{"turns":[
 {"toolCalls":[{"id":"call_plan","name":"plan_update","arguments":{"action":"create","title":"Storage","steps":[{"title":"migrate"}]}}]},
 {"toolCalls":[{"id":"call_exit","name":"plan_exit","arguments":{"summary":"Storage plan: migrate."}}]},
 {"toolCalls":[{"id":"call_ask","name":"question","arguments":{"questions":[{"id":"go","question":"Anything else?"}]}}]},
 {"text":"Plan ready."}]}`

// plan_exit binds the exact Plan revision and the agent/model identity; only approve
// authorises, an early approval waits for the source Plan turn to hand over normally, and a
// Plan change voids it.
func TestQuestionPlanExit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir, ws, scripts := t.TempDir(), t.TempDir(), t.TempDir()
	qa := newQuestionApp(t, filepath.Join(dir, "log.db"), ws, time.Minute)
	s := qa.session(t, scripts, ws)
	spec := writeScript(t, scripts, "exit", planExitScript)
	q := qa.app.Commands.Questions()
	exitID := app.RequestID(s, "call_exit")
	early := make(chan app.Approval, 1)
	// While the turn waits on its question, the user approves the plan early: it does not
	// take effect yet. Then the question is answered and the turn ends normally.
	answered := qa.answerWhenAsked(t, ctx, func() string { return s }, func(r *question.Request) error {
		for r.Kind == events.QuestionKindPlanExit || r.Mode != events.QuestionModeWait {
			time.Sleep(10 * time.Millisecond)
			rs, err := q.List(ctx, s, true)
			if err != nil {
				return err
			}
			r = rs[len(rs)-1]
		}
		if _, err := q.Answer(ctx, meta("approve"), s, exitID, 1, pick(question.PlanExitItem, question.Approve), "cli"); err != nil {
			return err
		}
		a, err := q.PlanExitApproval(ctx, s, exitID)
		if err != nil {
			return err
		}
		early <- a
		_, err = q.Answer(ctx, meta("go"), s, r.RequestID, r.Revision, []events.QuestionItemAnswer{{ItemID: "go", Text: "no"}}, "cli")
		return err
	})
	res, err := qa.app.Commands.RunTurn(ctx, app.RunTurn{Meta: meta("run-exit"), SessionID: s, Prompt: "plan", Model: spec, Agent: "plan", Cwd: ws})
	if err != nil || res.Err() != nil {
		t.Fatalf("turn: %v %v", err, res.Err())
	}
	if err := <-answered; err != nil {
		t.Fatal(err)
	}
	if a := <-early; a.Effective || a.Reason != app.PlanExitAwaitingHandoff || a.Decision != question.Approve {
		t.Fatalf("early approval: %+v", a)
	}
	qa.app.Commands.Jobs().Settle(ctx)
	a, err := q.PlanExitApproval(ctx, s, exitID)
	if err != nil || !a.Effective || a.Binding.PlanRevision != 1 || a.Binding.Agent != "plan" {
		t.Fatalf("after the handover: %+v %v", a, err)
	}
	// A Plan change voids it, recorded so that every face sees the request closed.
	rev := a.Binding.PlanRevision
	up, err := qa.handlers.UpdatePlan(ctx, &commands.UpdatePlan{Meta: meta("append-step"), SessionID: s,
		Update: work.PlanUpdate{Action: "append", ExpectedRevision: &rev, Steps: []work.StepInput{{Title: "verify"}}}})
	if err != nil || up.Err() != nil {
		t.Fatalf("plan change: %v %v", err, up.Err())
	}
	a, err = q.PlanExitApproval(ctx, s, exitID)
	if err != nil || a.Effective || a.Reason != app.PlanExitPlanChanged {
		t.Fatalf("after a plan change: %+v %v", a, err)
	}
	r, err := q.Get(ctx, s, exitID)
	if err != nil || r.Status() != question.StatusVoided {
		t.Fatalf("voided: %+v %v", r, err)
	}
}

// The user's "later" releases the plan agent's wait without answering: the call ends
// deferred, nothing reaches the model, and the request stays open for a later answer.
func TestQuestionSnoozeReleasesWait(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir, ws, scripts := t.TempDir(), t.TempDir(), t.TempDir()
	qa := newQuestionApp(t, filepath.Join(dir, "log.db"), ws, time.Hour)
	s := qa.session(t, scripts, ws)
	spec := writeScript(t, scripts, "ask", askScript)
	q := qa.app.Commands.Questions()
	snoozed := qa.answerWhenAsked(t, ctx, func() string { return s }, func(r *question.Request) error {
		_, err := q.Later(ctx, meta("later"), s, r.RequestID, r.Revision)
		return err
	})
	res, err := qa.app.Commands.RunTurn(ctx, app.RunTurn{Meta: meta("run-ask"), SessionID: s, Prompt: "plan", Model: spec, Agent: "plan", Cwd: ws})
	if err != nil || res.Err() != nil || res.Reason != "completed" {
		t.Fatalf("turn: %+v %v", res, err)
	}
	if err := <-snoozed; err != nil {
		t.Fatal(err)
	}
	id := app.RequestID(s, "call_ask")
	inputs, deferrals := qa.inbox(t, s, id)
	if len(inputs) != 0 || len(deferrals) != 1 || deferrals[0].(events.QuestionDeferred).Reason != events.DeferLater {
		t.Fatalf("inputs %v, deferrals %v", inputs, deferrals)
	}
	for _, p := range qa.sessionEvents(t, s) {
		if e, ok := p.(events.ToolSettled); ok && e.CallID == "call_ask" && !strings.Contains(e.Output, `"outcome":"deferred"`) {
			t.Fatalf("the call's result: %s", e.Output)
		}
	}
	if ok, err := q.Answered(ctx, s, id); err != nil || ok {
		t.Fatalf("answered after later: %v %v", ok, err)
	}
}

// An interrupted source Plan turn voids its plan_exit request, approved or not.
func TestQuestionPlanExitVoidedByInterruptedTurn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir, ws, scripts := t.TempDir(), t.TempDir(), t.TempDir()
	qa := newQuestionApp(t, filepath.Join(dir, "log.db"), ws, time.Hour)
	s := qa.session(t, scripts, ws)
	spec := writeScript(t, scripts, "exit", planExitScript)
	q := qa.app.Commands.Questions()
	exitID := app.RequestID(s, "call_exit")
	runCtx, stopRun := context.WithCancel(ctx)
	stopped := qa.answerWhenAsked(t, ctx, func() string { return s }, func(*question.Request) error {
		for {
			rs, err := q.List(ctx, s, true)
			if err != nil {
				return err
			}
			if len(rs) == 2 { // the plan_exit request and the waiting question
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := q.Answer(ctx, meta("approve"), s, exitID, 1, pick(question.PlanExitItem, question.Approve), "cli"); err != nil {
			return err
		}
		stopRun() // Ctrl-C while the turn waits on its question
		return nil
	})
	res, _ := qa.app.Commands.RunTurn(runCtx, app.RunTurn{Meta: meta("run-exit"), SessionID: s, Prompt: "plan", Model: spec, Agent: "plan", Cwd: ws})
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if res.Reason != "interrupted" {
		t.Fatalf("turn: %+v", res)
	}
	a, err := q.PlanExitApproval(ctx, s, exitID)
	if err != nil || a.Effective || a.Reason != app.PlanExitTurnInterrupted {
		t.Fatalf("after an interrupted turn: %+v %v", a, err)
	}
	if r, err := q.Get(ctx, s, exitID); err != nil || r.Status() != question.StatusVoided {
		t.Fatalf("voided: %+v %v", r, err)
	}
}

// A process that closes while an answer's delivery runs (the answer woke its session, and the
// model is still answering) stops the delivery first: StopJobs returns only once the delivery's
// turn is recorded finished (interrupted), so nothing writes to stores the process closes next.
// A process that never used the job runtime is left alone.
func TestStopJobsEndsADeliveryInFlight(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir, ws, scripts := t.TempDir(), t.TempDir(), t.TempDir()
	qa := newQuestionApp(t, filepath.Join(dir, "log.db"), ws, time.Hour)
	qa.app.Commands.StopJobs() // unused: nothing to stop, and the runtime stays usable
	s := qa.session(t, scripts, ws)
	// Each turn opens its provider anew: the sessions form plays by the conversation's length
	// (the session's first turn, "hi", played "hello").
	spec := writeScript(t, scripts, "slow", `{"turns":[{"text":"another session"}], "sessions":[{"when":"hi","turns":[{"text":"hello"},
 {"toolCalls":[{"id":"call_ask","name":"question","arguments":{"questions":[{"id":"db","question":"Which database?","options":[{"label":"SQLite"},{"label":"Postgres"}]}]}}]},
 {"text":"Published."},
 {"text":"Thinking about it.","delayMs":60000}]}]}`)
	res, err := qa.app.Commands.RunTurn(ctx, app.RunTurn{Meta: meta("run-ask"), SessionID: s, Prompt: "ask", Model: spec, Cwd: ws})
	if err != nil || res.Err() != nil {
		t.Fatalf("turn: %v %v", err, res.Err())
	}
	q := qa.app.Commands.Questions()
	r, err := q.Get(ctx, s, app.RequestID(s, "call_ask"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.Answer(ctx, meta("answer-db"), s, r.RequestID, r.Revision, pick("db", "Postgres"), "cli"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, func() bool { return turnsStarted(qa.sessionEvents(t, s)) == 3 }) // the delivery runs
	qa.app.Commands.StopJobs()
	started, finished := 0, map[string]string{}
	for _, p := range qa.sessionEvents(t, s) {
		switch e := p.(type) {
		case events.TurnStarted:
			started++
		case events.TurnFinished:
			finished[e.TurnID] = e.Reason
		}
	}
	if started != 3 || len(finished) != 3 {
		t.Fatalf("after StopJobs: %d turns started, %d finished (%v); want every one finished", started, len(finished), finished)
	}
	interrupted := 0
	for _, reason := range finished {
		if reason == events.FinishInterrupted {
			interrupted++
		}
	}
	if interrupted != 1 {
		t.Fatalf("finish reasons %v: want the delivery interrupted", finished)
	}
}

func turnsStarted(ps []events.Payload) int {
	n := 0
	for _, p := range ps {
		if _, ok := p.(events.TurnStarted); ok {
			n++
		}
	}
	return n
}

func waitFor(t *testing.T, ctx context.Context, cond func() bool) {
	t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
