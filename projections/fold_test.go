package projections_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// foldingProjectors are the projectors whose rebuild folds their rows in memory
// (projections/fold.go): a rebuild of them must write the rows their statements write.
func foldingProjectors() []projections.Projector {
	return []projections.Projector{projections.Sessions{}, projections.WorkPlans{}, projections.WorkItems{}, projections.Parts{}}
}

// foldSession is every kind of event the folding projectors handle, for one session, each
// stream's events in the order a runtime would write them. Values cover what a statement
// binds differently: empty strings stored as NULL or as ” (a directory created empty is NULL,
// changed to empty is ”), an item named twice in one event, nil and empty lists, and events
// on rows that do not exist (a superseded plan and a title for another session never created).
func foldSession(s int) map[string][]events.Payload {
	id := fmt.Sprintf("ses_f%03d", s)
	var create events.Payload = events.SessionCreated{SessionID: id, Title: "T " + id, Agent: "build",
		ParentSessionID: map[bool]string{true: "ses_parent"}[s%2 == 0], Directory: map[bool]string{true: "/w"}[s%3 == 0]}
	if s%4 == 1 {
		create = events.SessionForked{SessionID: id, Title: "fork " + id, Agent: "plan", MessageCount: 3 + s}
	}
	plan := func(planID, status string, depth int, parent string, steps []events.WorkPlanStep) events.WorkPlan {
		return events.WorkPlan{PlanID: planID, Title: "plan " + planID, Status: status, Depth: depth, ParentPlanID: parent, Steps: steps}
	}
	step := func(id, status string) events.WorkPlanStep {
		return events.WorkPlanStep{ID: id, Title: "step " + id, Status: status}
	}
	return map[string][]events.Payload{
		"session-" + id: {
			create,
			events.UserMessageAppended{SessionID: id, MessageID: "m1", Text: "hi"},
			events.SessionTitled{SessionID: id, Title: "Retitled " + id},
			events.TurnStarted{SessionID: id, TurnID: "t1", MessageID: "m1"},
			events.DirectoryChanged{SessionID: id, Directory: map[bool]string{true: "/elsewhere"}[s%2 == 1]},
			events.TurnSuspended{SessionID: id, TurnID: "t1"},
			events.TurnResumed{SessionID: id, TurnID: "t1", Input: "go on"},
			events.UserMessageAppended{SessionID: id, MessageID: "m2", Text: "more"},
			events.TurnFinished{SessionID: id, TurnID: "t1", Reason: []string{"completed", "error", "cancelled"}[s%3]},
			events.SessionTitled{SessionID: id + "_never_created", Title: "nobody"},
			events.SessionPruned{SessionID: id, Mode: []string{events.PruneDelete, "archive"}[s%2]},
			// Parts: a message seen twice, a request's text and calls (arguments that are JSON
			// and that are not), a call asked, started in a sandbox and settled, one blocked,
			// one blocked that no request asked for, a call id answered twice, and a
			// compaction's summary, which is no part.
			events.UserMessageAppended{SessionID: id, MessageID: "m1", Text: "hi, again"},
			events.ProviderRequest{SessionID: id, TurnID: "t1", RequestID: "r1", Step: 1, Status: events.RequestStarted},
			events.ProviderRequest{SessionID: id, TurnID: "t1", RequestID: "r1", Step: 1, Status: events.RequestCompleted,
				Response: &events.ProviderResponse{Text: "I'll look", ToolCalls: []events.ToolCall{
					{ID: "c1", Name: "shell", Arguments: `{ "cmd": "ls <dir>" }`}, {ID: "c2", Name: "read", Arguments: "not json"}}}},
			events.PermissionAsked{SessionID: id, TurnID: "t1", RequestID: "r1", CallID: "c1", AskID: "a1", Tool: "shell", Key: "ls", Always: "ls *"},
			events.ToolStarted{SessionID: id, TurnID: "t1", RequestID: "r1", CallID: "c1", Tool: "shell", Group: 1,
				Sandbox: &events.SandboxResolution{RequestedMode: "workspace-write", Network: "off", ResolutionKind: "granted"}},
			events.ToolSettled{SessionID: id, TurnID: "t1", RequestID: "r1", CallID: "c1", Tool: "shell", Outcome: "completed",
				Output: "a\nb", Metadata: events.ToolMetadata{WrittenPaths: []string{"x"}}, DurationMs: 12},
			events.ToolBlocked{SessionID: id, TurnID: "t1", RequestID: "r1", CallID: "c2", Tool: "read", Category: "permission", Message: "no", Output: "refused"},
			events.ToolBlocked{SessionID: id, TurnID: "t1", RequestID: "r9", CallID: "c3", Tool: "write", Category: "policy", Message: "never asked", Output: ""},
			events.ProviderRequest{SessionID: id, TurnID: "t1", RequestID: "r2", Step: 2, Status: events.RequestCompleted,
				Purpose: events.PurposeCompaction, Response: &events.ProviderResponse{Text: "summary"}},
			events.ProviderRequest{SessionID: id, TurnID: "t2", RequestID: "r3", Step: 1, Status: events.RequestCompleted,
				Response: &events.ProviderResponse{Text: "again", ToolCalls: []events.ToolCall{{ID: "c1", Name: "shell", Arguments: "{}"}}}},
		},
		"work-" + id: {
			events.WorkPlanCreated{SessionID: id, Revision: 1, WorkPlan: plan("p1", "active", 0, "", nil)},
			events.WorkPlanPatched{SessionID: id, Revision: 2, WorkPlan: plan("p1", "active", 0, "", []events.WorkPlanStep{step("s1", "completed")})},
			events.WorkTodoUpdated{SessionID: id, Revision: 2, Items: []events.WorkItem{
				{ID: "i1", Title: "first", Status: "pending"},
				{ID: "i2", Title: "second", Status: "pending", Owner: "build", Dependencies: []string{"i1"}, PlanStepID: "s1"},
				{ID: "i1", Title: "first, again", Status: "in_progress", Dependencies: []string{}},
			}},
			events.WorkPlanStepsAppended{SessionID: id, Revision: 3, WorkPlan: plan("p1", "active", 0, "", []events.WorkPlanStep{step("s1", "completed"), step("s2", "pending")})},
			events.WorkPlanPushed{SessionID: id, Revision: 4, WorkPlan: plan("p2", "active", 1, "p1", []events.WorkPlanStep{step("s3", "pending")})},
			events.WorkTodoUpdated{SessionID: id, Revision: 5, Items: []events.WorkItem{{ID: "i2", Title: "second", Status: "completed"}}},
			events.WorkPlanPopped{SessionID: id, Revision: 5, WorkPlan: plan("p2", "completed", 1, "p1", []events.WorkPlanStep{step("s3", "completed")})},
			events.WorkPlanSuperseded{SessionID: id, Revision: 6, PlanID: "p1", Status: "superseded", SupersededBy: "p3"},
			events.WorkPlanSuperseded{SessionID: id, Revision: 6, PlanID: "p_unknown", Status: "superseded", SupersededBy: "p3"},
			events.WorkPlanCreated{SessionID: id, Revision: 6, WorkPlan: plan("p3", "active", 0, "", []events.WorkPlanStep{})},
		},
	}
}

// writeFoldLog appends sessions foldSession sessions: with shuffle, each stream's events in a
// random order (so that updates come before the row exists, a plan is superseded before it is
// created...) and the sessions' streams interleaved at random.
func writeFoldLog(t *testing.T, store appender, sessions int, rng *rand.Rand) int {
	t.Helper()
	var streams []string
	pending := map[string][]events.Payload{}
	for s := range sessions {
		for stream, ps := range foldSession(s) {
			if rng != nil {
				rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
			}
			streams = append(streams, stream)
			pending[stream] = ps
		}
	}
	// Map order is random: sort the streams, then draw from them.
	slices.Sort(streams)
	written := 0
	base := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	for len(streams) > 0 {
		i := 0
		if rng != nil {
			i = rng.IntN(len(streams))
		}
		stream := streams[i]
		p := pending[stream][0]
		pending[stream] = pending[stream][1:]
		if len(pending[stream]) == 0 {
			streams = append(streams[:i], streams[i+1:]...)
		}
		cmd := fmt.Sprintf("fold-%d", written)
		ev, err := events.Encode(events.DeriveID(cmd, 0), p, events.Metadata{CommandID: cmd, Actor: "user",
			Time: base.Add(time.Duration(written) * time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Append(context.Background(), stream, events.Any, ev); err != nil {
			t.Fatal(err)
		}
		written++
	}
	return written
}

// typedDump is each folding table's rows, in key order, every value with its Go type as the
// driver returned it: a fold that stored 3 as '3', or ” as NULL, differs here.
func typedDump(t *testing.T, db *sqlx.DB) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, table := range []string{"session", "work_plan", "work_item", "part"} {
		rows, err := db.Queryx(fmt.Sprintf(`SELECT * FROM %s ORDER BY %s`, table, tables[table]))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals, err := rows.SliceScan()
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for i, v := range vals {
				fmt.Fprintf(&b, "%s=%T:%v ", cols[i], v, v)
			}
			out[table] = append(out[table], b.String())
		}
		rows.Close()
	}
	return out
}

// A rebuild folds the session, work_plan, work_item and part rows in memory (fold.go) and must
// write the rows the projectors' statements write when catching up: for every kind of event,
// in the order a runtime writes them and shuffled within each stream, with the fold holding
// every row, and writing rows early so that later events reach rows already in the table.
func TestFoldEqualsStatements(t *testing.T) {
	for _, d := range dialects {
		for _, order := range []struct {
			name string
			rng  *rand.Rand
		}{{"in order", nil}, {"shuffled", rand.New(rand.NewPCG(32, 4))}, {"shuffled again", rand.New(rand.NewPCG(7, 11))}} {
			t.Run(d.name+"/"+order.name, func(t *testing.T) {
				e := d.env(t)
				ctx := context.Background()
				n := writeFoldLog(t, e.store, 24, order.rng)
				runner := projections.NewRunner(e.rm.Writer, e.store, registry, foldingProjectors())
				if _, err := runner.CatchUp(ctx); err != nil {
					t.Fatal(err)
				}
				live := typedDump(t, e.rm.Writer)
				if len(live["session"]) != 24 || len(live["work_plan"]) == 0 || len(live["work_item"]) != 48 || len(live["part"]) != 24*7 {
					t.Fatalf("live: %d sessions, %d plans, %d items, %d parts", len(live["session"]), len(live["work_plan"]),
						len(live["work_item"]), len(live["part"]))
				}
				for _, limit := range []struct{ rows, bytes int }{{1, 1 << 30}, {2, 1 << 30}, {5, 1 << 30}, {1 << 20, 1 << 30},
					{1 << 20, 300}, {1 << 20, 0}} {
					restore := projections.SetFoldLimit(limit.rows, limit.bytes)
					count, err := runner.Rebuild(ctx)
					restore()
					if err != nil || count != n {
						t.Fatalf("fold limit %v: rebuilt %d of %d events: %v", limit, count, n, err)
					}
					compareTyped(t, limit, live, typedDump(t, e.rm.Writer))
				}
			})
		}
	}
}

func compareTyped(t *testing.T, limit any, live, rebuilt map[string][]string) {
	t.Helper()
	for table, rows := range live {
		if len(rows) != len(rebuilt[table]) {
			t.Fatalf("fold limit %v: %s: %d rows live, %d rebuilt", limit, table, len(rows), len(rebuilt[table]))
		}
		for i := range rows {
			if rows[i] != rebuilt[table][i] {
				t.Fatalf("fold limit %v: %s row %d differs:\nlive    %s\nrebuilt %s", limit, table, i, rows[i], rebuilt[table][i])
			}
		}
	}
}

// A statement refuses a second session with one id; the fold, which holds the first in
// memory, leaves the second to the statement, which refuses it in the same words, at the same
// event, whether the first row is still held or already written.
func TestFoldRefusesWhatStatementsRefuse(t *testing.T) {
	for _, d := range dialects {
		for _, limit := range []int{1, 1 << 20} {
			t.Run(fmt.Sprintf("%s/limit %d", d.name, limit), func(t *testing.T) {
				e := d.env(t)
				ctx := context.Background()
				for i, p := range []events.Payload{
					events.SessionCreated{SessionID: "ses_a", Title: "a", Agent: "build"},
					events.SessionCreated{SessionID: "ses_b", Title: "b", Agent: "build"},
					events.SessionForked{SessionID: "ses_a", Title: "again", Agent: "build"},
				} {
					ev, err := events.Encode(events.DeriveID("dup", i), p, events.Metadata{CommandID: "dup", Time: time.Now()})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := e.store.Append(ctx, "session-"+[]string{"a", "b", "a"}[i], events.Any, ev); err != nil {
						t.Fatal(err)
					}
				}
				runner := projections.NewRunner(e.rm.Writer, e.store, registry, foldingProjectors(), projections.WithBatchSize(1))
				_, liveErr := runner.CatchUp(ctx)
				restore := projections.SetFoldLimit(limit, 1<<30)
				defer restore()
				_, foldErr := runner.Rebuild(ctx)
				if liveErr == nil || foldErr == nil {
					t.Fatalf("a second session ses_a: live %v, rebuilt %v", liveErr, foldErr)
				}
				if d.name == "sqlite" && liveErr.Error() != foldErr.Error() {
					t.Fatalf("refused in other words:\nlive    %v\nrebuilt %v", liveErr, foldErr)
				}
			})
		}
	}
}

// A text value Postgres refuses (a NUL character: TEXT holds none) is refused by the
// statement at the event that binds it. A fold that held the row and changed the value before
// writing it would write a row the statements never could, and the rebuild would succeed where
// catching up fails: a session created with such a title then retitled, a todo item named
// with one then renamed, a plan likewise, a call's id. Both must fail, on SQLite (which stores
// it) both succeed. An update of a row no event created binds its values too.
func TestFoldRefusesWhatPostgresRefuses(t *testing.T) {
	streams := map[string][]events.Payload{
		"session-ses_n": {
			events.SessionCreated{SessionID: "ses_n", Title: "a\x00b", Agent: "build"},
			events.SessionTitled{SessionID: "ses_n", Title: "clean"},
		},
		// An update of a row no event created: the statement binds the value all the same.
		"session-ses_absent": {
			events.SessionTitled{SessionID: "ses_absent", Title: "a\x00b"},
		},
		"session-ses_held": {
			events.SessionCreated{SessionID: "ses_held", Title: "clean", Agent: "build"},
			events.SessionTitled{SessionID: "ses_held", Title: "a\x00b"},
			events.SessionTitled{SessionID: "ses_held", Title: "clean again"},
		},
		"work-ses_p": {
			events.WorkPlanSuperseded{SessionID: "ses_p", PlanID: "never", Status: "a\x00b", Revision: 2},
		},
		"work-ses_w": {
			events.WorkTodoUpdated{SessionID: "ses_w", Items: []events.WorkItem{{ID: "i1", Title: "x\x00y", Status: "pending"}}},
			events.WorkTodoUpdated{SessionID: "ses_w", Items: []events.WorkItem{{ID: "i1", Title: "clean", Status: "pending"}}},
		},
		// Postgres's INTEGER columns (a plan's depth and revision, a session's message count)
		// refuse a value past 32 bits: a plan created that deep, then patched.
		"work-ses_deep": {
			events.WorkPlanCreated{SessionID: "ses_deep", Revision: 1, WorkPlan: events.WorkPlan{PlanID: "p", Title: "t", Status: "active", Depth: 1 << 40}},
			events.WorkPlanPatched{SessionID: "ses_deep", Revision: 2, WorkPlan: events.WorkPlan{PlanID: "p", Title: "t", Status: "active"}},
		},
		"work-ses_rev": {
			events.WorkPlanCreated{SessionID: "ses_rev", Revision: 1 << 33, WorkPlan: events.WorkPlan{PlanID: "p", Title: "t", Status: "active"}},
			events.WorkPlanPatched{SessionID: "ses_rev", Revision: 2, WorkPlan: events.WorkPlan{PlanID: "p", Title: "t", Status: "active"}},
		},
		// A count at INTEGER's top, then a message: the statement's message_count + 1 overflows.
		"session-ses_count": {
			events.SessionForked{SessionID: "ses_count", Title: "f", Agent: "build", MessageCount: 1<<31 - 1},
			events.UserMessageAppended{SessionID: "ses_count", MessageID: "m1", Text: "hi"},
		},
		// Created by the statement (on SQLite, which stores it), then changed: the change is
		// the statement's too, not dropped as a change of a row no event created.
		"session-ses_later": {
			events.SessionCreated{SessionID: "ses_later", Title: "a\x00b", Agent: "build"},
			events.SessionTitled{SessionID: "ses_later", Title: "renamed"},
			events.TurnStarted{SessionID: "ses_later", TurnID: "t1", MessageID: "m1"},
		},
	}
	for _, d := range dialects {
		for name, evs := range streams {
			t.Run(d.name+"/"+name, func(t *testing.T) {
				e := d.env(t)
				ctx := context.Background()
				for i, p := range evs {
					ev, err := events.Encode(events.DeriveID("nul-"+name, i), p, events.Metadata{CommandID: "nul-" + name, Time: time.Now()})
					if err != nil {
						t.Fatal(err)
					}
					if _, err := e.store.Append(ctx, name, events.Any, ev); err != nil {
						t.Fatal(err)
					}
				}
				runner := projections.NewRunner(e.rm.Writer, e.store, registry, foldingProjectors(), projections.WithBatchSize(1))
				_, liveErr := runner.CatchUp(ctx)
				live := typedDump(t, e.rm.Writer)
				_, foldErr := runner.Rebuild(ctx)
				if (liveErr == nil) != (foldErr == nil) {
					t.Fatalf("caught up: %v; rebuilt: %v", liveErr, foldErr)
				}
				if liveErr == nil {
					compareTyped(t, "default", live, typedDump(t, e.rm.Writer))
				} else if liveErr.Error() != foldErr.Error() {
					t.Fatalf("refused in other words:\nlive    %v\nrebuilt %v", liveErr, foldErr)
				}
				if d.name == "postgres" && liveErr == nil {
					t.Fatal("Postgres took a NUL in a text column")
				}
			})
		}
	}
}
