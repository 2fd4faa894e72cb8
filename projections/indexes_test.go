package projections_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/events"
)

// A rebuild on SQLite drops the secondary indexes before it loads and builds them after:
// the schema after a rebuild, and after a rebuild that failed half-way, is the schema before.
func TestRebuildKeepsTheIndexes(t *testing.T) {
	e := sqliteEnv(t)
	ctx := context.Background()
	scenario(t, e.store, 3)
	schema := func() []string {
		var out []string
		if err := e.rm.Writer.Select(&out, `SELECT type || ' ' || name || ' ' || COALESCE(sql, '') FROM sqlite_master ORDER BY name`); err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := schema()
	indexes := 0
	for _, s := range before {
		if len(s) > 6 && s[:6] == "index " {
			indexes++
		}
	}
	if indexes < 5 {
		t.Fatalf("only %d indexes in the read models: %v", indexes, before)
	}
	for _, tc := range []struct {
		name string
		fail bool
	}{{"rebuild that commits", false}, {"rebuild that fails at an unreadable event", true}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.fail {
				if _, err := e.store.Append(ctx, "session-x", events.Any, events.Event{
					ID: events.DeriveID("future", 0), Type: "session.from_the_future.9", Data: []byte(`{}`)}); err != nil {
					t.Fatal(err)
				}
			}
			_, err := e.runner.Rebuild(ctx)
			var unknown *events.UnknownEventTypeError
			if tc.fail != errors.As(err, &unknown) || (!tc.fail && err != nil) {
				t.Fatalf("rebuild: %v", err)
			}
			after := schema()
			if len(after) != len(before) {
				t.Fatalf("schema changed:\nbefore %v\nafter  %v", before, after)
			}
			for i := range after {
				if after[i] != before[i] {
					t.Fatalf("schema changed: %q became %q", before[i], after[i])
				}
			}
		})
	}
}

// An answer finds its ask through permission_decision_ask, which holds only the calls that
// asked (migrations sqlite/readmodel/0007): the lookup the Permissions projector makes for a
// session's answer must still use it, not scan the session's decisions.
func TestAnAnswerFindsItsAskByIndex(t *testing.T) {
	e := sqliteEnv(t)
	var plan []struct {
		ID      int    `db:"id"`
		Parent  int    `db:"parent"`
		NotUsed int    `db:"notused"`
		Detail  string `db:"detail"`
	}
	if err := e.rm.Writer.Select(&plan, `EXPLAIN QUERY PLAN UPDATE permission_decision SET reply = 'once'
		WHERE session_id = 'ses_1' AND ask_id = 'ask_1' AND time_decided IS NULL`); err != nil {
		t.Fatal(err)
	}
	if len(plan) != 1 || !strings.Contains(plan[0].Detail, "USING INDEX permission_decision_ask (session_id=? AND ask_id=?)") {
		t.Fatalf("the answer's lookup: %+v", plan)
	}
}
