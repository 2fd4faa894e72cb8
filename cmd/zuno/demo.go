package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/commands"
	zapp "github.com/zuno-run/zuno/commands/app"
)

// `zuno demo work` drives a scripted sequence of plan and todo commands through the whole
// pipeline (bus, handlers, aggregates, event store, projections) and prints the read models.

func newDemoWorkCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "work",
		Short: "Drive plan and todo commands through the bus, aggregates and projections, and print the read models",
		Long: `Drives a scripted sequence of plan and todo commands through the whole pipeline and prints
the read models. It records into a new temporary database of its own, never the configured
one, unless --use-configured-db.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "zuno-demo-work-")
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Recorded %s\n", demoDatabase(cmd, dir))
			return withApp(cmd, func(ctx context.Context, a *app) error {
				return runDemo(ctx, a, cmd.OutOrStdout())
			})
		},
	}
}

func runDemo(ctx context.Context, a *app, out io.Writer) error {
	sid := zapp.NewID("ses_")
	step := 0
	meta := func() commands.Meta {
		step++
		return commands.Meta{CommandID: fmt.Sprintf("%s/demo-%d", sid, step), Actor: "build", CorrelationID: sid}
	}
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	c := a.Commands
	plan := func(args string) func(commands.Meta) (commands.Result, error) {
		return func(m commands.Meta) (commands.Result, error) { return c.UpdatePlan(ctx, m, sid, args) }
	}
	todos := func(args string) func(commands.Meta) (commands.Result, error) {
		return func(m commands.Meta) (commands.Result, error) { return c.UpdateTodos(ctx, m, sid, args) }
	}

	say("Event store: %s", a.describeStorage())
	say("\nScripted session %s", sid)
	steps := []struct {
		what string
		send func(commands.Meta) (commands.Result, error)
	}{
		{"session.create", func(m commands.Meta) (commands.Result, error) {
			return c.CreateSession(ctx, m, zapp.NewSession{SessionID: sid, Title: "Fix integer division in calc", Agent: "build"})
		}},
		{"user message", func(m commands.Meta) (commands.Result, error) {
			return c.AppendMessage(ctx, m, sid, "msg_1", "divide(7, 2) returns 3; it should return 3.5")
		}},
		{"plan_update create (no revision: first plan)", plan(`{"action":"create","title":"Fix divide()","steps":[
			{"title":"Reproduce with a failing test"},{"title":"Fix the division"},{"title":"Run the test suite"}]}`)},
		{"todo_update (two items, one depends on the other)", todos(`{"items":[
			{"id":"test","title":"Add test_divide_fraction","owner":"build","plan_step_id":"step-1"},
			{"id":"fix","title":"Use true division in divide()","dependencies":["test"],"plan_step_id":"step-2"}]}`)},
		{"plan_update patch step-1 completed", plan(`{"action":"patch","expected_revision":1,"patches":[{"id":"step-1","status":"completed"}]}`)},
		{"todo_update test completed, fix in progress", todos(`{"items":[{"id":"test","status":"completed"},{"id":"fix","status":"in_progress"}]}`)},
		{"plan_update append a step (host id)", plan(`{"action":"append","expected_revision":2,"steps":[{"title":"Update the changelog"}]}`)},
	}
	metas := make([]commands.Meta, len(steps))
	var appendRes commands.Result
	for i, st := range steps {
		metas[i] = meta()
		res, err := st.send(metas[i])
		if err != nil {
			return fmt.Errorf("%s: %w", st.what, err)
		}
		say("  %-50s -> stream revision %d, position %d", st.what, res.Revision, res.LastPosition)
		appendRes = res
	}

	say("\nThe same command delivered again (same command id):")
	again, err := steps[len(steps)-1].send(metas[len(steps)-1])
	if err != nil {
		return err
	}
	say("  duplicate=%v, revision %d, position %d: the first result, nothing appended", again.Duplicate, again.Revision, again.LastPosition)
	if again.LastPosition != appendRes.LastPosition {
		return errors.New("demo: a re-delivered command did not return its first result")
	}

	say("\nA stale plan_update (expected_revision 1, the plan is at 3):")
	_, err = plan(`{"action":"patch","expected_revision":1,"patches":[{"id":"step-2","status":"completed"}]}`)(meta())
	if err == nil {
		return errors.New("demo: a stale plan_update was accepted")
	}
	say("  refused: %v", err)
	return showDemoState(ctx, a, out, sid)
}

// showDemoState prints what the demo's commands left in the read models and projections, and
// how to look at it.
func showDemoState(ctx context.Context, a *app, out io.Writer, sid string) error {
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }
	say("\nRead models (zuno db):")
	for _, q := range []string{
		`SELECT id, title, agent, message_count FROM session WHERE id = ?`,
		`SELECT session_id, revision, title, status, steps FROM work_plan WHERE session_id = ?`,
		`SELECT id, status, owner, dependencies FROM work_item WHERE session_id = ? ORDER BY time_created, id`,
		`SELECT type, COUNT(*) AS n FROM event WHERE aggregate_id = ? GROUP BY type ORDER BY type`,
	} {
		rows, err := a.Queries.SQL(ctx, q, 0, sid)
		if err != nil {
			return err
		}
		say("\n$ zuno db %q", strings.Replace(q, "?", "'"+sid+"'", 1))
		if err := writeTable(out, rows.Columns, rows.Rows); err != nil {
			return err
		}
	}
	st, err := a.Queries.ProjectionStatus(ctx)
	if err != nil {
		return err
	}
	say("\nProjections:")
	width := 0
	for _, s := range st {
		width = max(width, len(s.Projector))
	}
	for _, s := range st {
		say("  %-*s  checkpoint %d, lag %d", width, s.Projector, s.Checkpoint, s.Lag)
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
