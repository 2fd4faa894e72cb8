package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/work"
)

// `zuno demo work` drives a scripted sequence of plan and todo commands through the whole
// pipeline (bus, handlers, aggregates, event store, projections) and prints the read models.

func newDemoWorkCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "work",
		Short: "Drive plan and todo commands through the bus, aggregates and projections, and print the read models",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withApp(cmd, func(ctx context.Context, a *app) error {
				return runDemo(ctx, a, cmd.OutOrStdout())
			})
		},
	}
}

func runDemo(ctx context.Context, a *app, out io.Writer) error {
	sid := newID("ses_")
	step := 0
	meta := func() commands.Meta {
		step++
		return commands.Meta{CommandID: fmt.Sprintf("%s/demo-%d", sid, step), Actor: "build", CorrelationID: sid}
	}
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	must := func(what string, cmd any) (commands.Result, error) {
		res, err := a.send(ctx, cmd)
		if err != nil {
			return res, fmt.Errorf("%s: %w", what, err)
		}
		say("  %-50s -> stream revision %d, position %d", what, res.Revision, res.LastPosition)
		return res, nil
	}
	rev := func(n uint64) *uint64 { return &n }
	str := func(s string) *string { return &s }

	say("Event store: %s", a.describeStorage())
	say("\nScripted session %s", sid)
	steps := []struct {
		what string
		cmd  any
	}{
		{"session.create", &commands.CreateSession{Meta: meta(), Create: session.Create{SessionID: sid, Title: "Fix integer division in calc", Agent: "build"}}},
		{"user message", &commands.AppendUserMessage{Meta: meta(), AppendUserMessage: session.AppendUserMessage{SessionID: sid, MessageID: "msg_1", Text: "divide(7, 2) returns 3; it should return 3.5"}}},
		{"plan_update create (no revision: first plan)", &commands.UpdatePlan{Meta: meta(), SessionID: sid, Update: work.PlanUpdate{Action: work.ActionCreate, Title: "Fix divide()",
			Steps: []work.StepInput{{Title: "Reproduce with a failing test"}, {Title: "Fix the division"}, {Title: "Run the test suite"}}}}},
		{"todo_update (two items, one depends on the other)", &commands.UpdateTodos{Meta: meta(), SessionID: sid, Update: work.TodoUpdate{Items: []work.TodoInput{
			{ID: "test", Title: str("Add test_divide_fraction"), Owner: str("build"), PlanStepID: str("step-1")},
			{ID: "fix", Title: str("Use true division in divide()"), Dependencies: &[]string{"test"}, PlanStepID: str("step-2")}}}}},
		{"plan_update patch step-1 completed", &commands.UpdatePlan{Meta: meta(), SessionID: sid, Update: work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1),
			Patches: []work.StepPatch{{ID: "step-1", Status: str(work.StatusCompleted)}}}}},
		{"todo_update test completed, fix in progress", &commands.UpdateTodos{Meta: meta(), SessionID: sid, Update: work.TodoUpdate{Items: []work.TodoInput{
			{ID: "test", Status: str("completed")}, {ID: "fix", Status: str("in_progress")}}}}},
		{"plan_update append a step (host id)", &commands.UpdatePlan{Meta: meta(), SessionID: sid, Update: work.PlanUpdate{Action: work.ActionAppend, ExpectedRevision: rev(2),
			Steps: []work.StepInput{{Title: "Update the changelog"}}}}},
	}
	var appendRes commands.Result
	for _, s := range steps {
		res, err := must(s.what, s.cmd)
		if err != nil {
			return err
		}
		appendRes = res
	}

	say("\nThe same command delivered again (same command id):")
	again, err := a.send(ctx, steps[len(steps)-1].cmd)
	if err != nil {
		return err
	}
	say("  duplicate=%v, revision %d, position %d: the first result, nothing appended", again.Duplicate, again.Revision, again.LastPosition)
	if again.LastPosition != appendRes.LastPosition {
		return errors.New("demo: a re-delivered command did not return its first result")
	}

	say("\nA stale plan_update (expected_revision 1, the plan is at 3):")
	_, err = a.send(ctx, &commands.UpdatePlan{Meta: meta(), SessionID: sid, Update: work.PlanUpdate{Action: work.ActionPatch, ExpectedRevision: rev(1),
		Patches: []work.StepPatch{{ID: "step-2", Status: str(work.StatusCompleted)}}}})
	if err == nil {
		return errors.New("demo: a stale plan_update was accepted")
	}
	say("  refused: %v", err)

	say("\nRead models (zuno db):")
	for _, q := range []string{
		fmt.Sprintf(`SELECT id, title, agent, message_count FROM session WHERE id = '%s'`, sid),
		fmt.Sprintf(`SELECT session_id, revision, title, status, steps FROM work_plan WHERE session_id = '%s'`, sid),
		fmt.Sprintf(`SELECT id, status, owner, dependencies FROM work_item WHERE session_id = '%s' ORDER BY time_created, id`, sid),
		fmt.Sprintf(`SELECT type, COUNT(*) AS n FROM event WHERE aggregate_id = '%s' GROUP BY type ORDER BY type`, sid),
	} {
		rows, err := a.rm.Query(ctx, q, 0)
		if err != nil {
			return err
		}
		say("\n$ zuno db %q", q)
		if err := writeTable(out, rows.Columns, rows.Rows); err != nil {
			return err
		}
	}
	st, err := a.runner.Status(ctx)
	if err != nil {
		return err
	}
	say("\nProjections:")
	for _, s := range st {
		say("  %-10s checkpoint %d, lag %d", s.Projector, s.Checkpoint, s.Lag)
	}
	say("\nInspect it yourself:")
	say("  zuno session list")
	say("  zuno events read --stream work-%s", sid)
	say("  zuno plan get --session %s", sid)
	say("  zuno db \"SELECT * FROM work_item WHERE session_id = '%s'\"", sid)
	say("  zuno projections rebuild && zuno projections status")
	return nil
}

func (a *app) describeStorage() string {
	switch {
	case a.cfg.EventStoreURL != "":
		return redact(a.cfg.EventStoreURL)
	default:
		return "embedded SQLite " + a.cfg.DB
	}
}
