package projections_test

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// The event read model is a view over event_log where the log shares the database, a copy
// elsewhere (docs/storage.md, "The event read model"). The two must hold the same rows,
// value for value, or `zuno verify --all` (which compares the live read models with a replay
// into a scratch database without event_log, a copy) would report drift.
func TestEventViewEqualsTheCopy(t *testing.T) {
	// Each row is a spelling of metadata.time the view must turn into projections.TimeFormat.
	utc := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	times := []struct {
		name string
		at   time.Time
	}{
		{"whole second, no fraction stored", utc},
		{"one nanosecond", utc.Add(time.Nanosecond)},
		{"milliseconds, trailing zeros trimmed", utc.Add(120 * time.Millisecond)},
		{"all nine digits", utc.Add(123456789 * time.Nanosecond)},
		{"just below the next second: no rounding up", utc.Add(59*time.Second + 999999999*time.Nanosecond)},
		{"positive offset, converted to UTC", utc.In(time.FixedZone("", 2*3600)).Add(5 * time.Microsecond)},
		{"negative half-hour offset across midnight", time.Date(2026, 11, 30, 23, 30, 0, 1000, time.FixedZone("", -(5*3600+1800)))},
	}
	streams := []string{"session-ses_1", "work-ses_1", "noprefix", "session-with-dashes-in-id"}
	for _, tc := range dialects {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.env(t)
			ctx := context.Background()
			if !isView(t, e, "event") {
				t.Fatal("event is a table although the log shares the database")
			}
			for i, tm := range times {
				stream := streams[i%len(streams)]
				p := events.SessionTitled{SessionID: "ses_1", Title: tm.name}
				md := events.Metadata{CommandID: fmt.Sprintf("cmd-%d", i), Actor: "user", Time: tm.at}
				ev, err := events.Encode(events.DeriveID(md.CommandID, 0), p, md)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := e.store.Append(ctx, stream, events.Any, ev); err != nil {
					t.Fatal(err)
				}
			}
			scenario(t, e.store, 2)
			head, err := e.runner.CatchUp(ctx)
			if err != nil {
				t.Fatal(err)
			}
			copied := rebuiltCopy(t, e)
			var n int
			if err := copied.Get(&n, `SELECT COUNT(*) FROM event`); err != nil || n < len(times) {
				t.Fatalf("the copy holds %d events (%v)", n, err)
			}
			drift, err := projections.CompareReadModels(ctx, e.rm.Writer, copied, projections.All(), math.MaxUint64)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range drift {
				t.Errorf("%s row %s: %v", d.Table, d.Kind, d.Row)
			}
			// An event appended while the log is verified is in the view at once, not in the
			// replay up to head: it is not drift at head (zuno verify on a live server), and
			// it is beyond it.
			late, err := events.Encode(events.DeriveID("cmd-late", 0), events.SessionTitled{SessionID: "ses_1", Title: "late"},
				events.Metadata{CommandID: "cmd-late", Actor: "user", Time: times[0].at})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.store.Append(ctx, streams[0], events.Any, late); err != nil {
				t.Fatal(err)
			}
			if drift, err := projections.CompareReadModels(ctx, e.rm.Writer, copied, projections.All(), head); err != nil || len(drift) != 0 {
				t.Fatalf("at the replayed head %d: drift %v (%v)", head, drift, err)
			}
			if drift, err := projections.CompareReadModels(ctx, e.rm.Writer, copied, projections.All(), math.MaxUint64); err != nil ||
				len(drift) != 1 || drift[0].Table != "event" || drift[0].Kind != projections.DriftExtra {
				t.Fatalf("past the replayed head: drift %v (%v), want the late event as extra", drift, err)
			}
			// A rebuild over the view empties nothing and writes nothing to it.
			if _, err := e.runner.Rebuild(ctx); err != nil {
				t.Fatal(err)
			}
			var logged, viewed int
			e.rm.Writer.Get(&logged, `SELECT COUNT(*) FROM event_log`)
			e.rm.Writer.Get(&viewed, `SELECT COUNT(*) FROM event`)
			if logged != viewed || viewed == 0 {
				t.Fatalf("event_log holds %d events, the event view %d", logged, viewed)
			}
		})
	}
}

// A database without event_log keeps the event table, and the projector fills it.
func TestEventTableWhereTheLogIsElsewhere(t *testing.T) {
	e := sqliteEnv(t)
	ctx := context.Background()
	scenario(t, e.store, 1)
	apart, err := readmodel.OpenSQLite(ctx, filepath.Join(t.TempDir(), "apart.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer apart.Close()
	if isView(t, &env{rm: apart}, "event") {
		t.Fatal("event is a view in a database without event_log")
	}
	n, err := projections.NewRunner(apart.Writer, e.store, registry, projections.All()).CatchUp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rows uint64
	if err := apart.Writer.Get(&rows, `SELECT COUNT(*) FROM event`); err != nil || rows != n {
		t.Fatalf("the event table holds %d rows, the log %d (%v)", rows, n, err)
	}
}

func isView(t testing.TB, e *env, name string) bool {
	t.Helper()
	query := `SELECT COUNT(*) FROM sqlite_master WHERE type = 'view' AND name = ?`
	if e.rm.Writer.DriverName() == "postgres" {
		query = `SELECT COUNT(*) FROM pg_class WHERE relkind = 'v' AND oid = to_regclass($1)`
	}
	var n int
	if err := e.rm.Writer.Get(&n, query, name); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// verification_receipt is a view over event_log too where the log shares the database, and
// holds what the projector writes into a copy elsewhere, row for row: an empty turn id is
// NULL, a missing exit code NULL, constructs the JSON array of the limitations' construct
// names in order, '[]' for none.
func TestVerificationViewEqualsTheCopy(t *testing.T) {
	code, zero := 2, 0
	receipts := []events.VerificationReceipt{
		{ReceiptID: "rcp_1", SessionID: "ses_v", TurnID: "turn_1", CallID: "c1", Command: "go test ./...", Interpreter: "bash",
			Policy: "pipefail", Verdict: "passed", ExitCode: &zero, Coverage: "last_statement", Authority: "authoritative",
			Reason: "exit 0"},
		{ReceiptID: "rcp_2", SessionID: "ses_v", CallID: "c2", Command: "make | tee log; ünïcode \"q\"", Interpreter: "sh",
			Policy: "last", Verdict: "failed", ExitCode: &code, Coverage: "last_stage", Authority: "derived", Reason: "exit 2",
			Limitations: []events.VerificationLimitation{{Construct: "pipeline", Note: "n"}, {Construct: "background_job", Text: "x &", Note: "m"}}},
		{ReceiptID: "rcp_3", SessionID: "ses_w", TurnID: "turn_2", CallID: "c3", Command: "sleep 9", Interpreter: "bash",
			Policy: "all", Verdict: "unknown", Coverage: "none", Authority: "none", Reason: "timed out", TimedOut: true},
	}
	for _, tc := range dialects {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.env(t)
			ctx := context.Background()
			if !isView(t, e, "verification_receipt") {
				t.Fatal("verification_receipt is a table although the log shares the database")
			}
			at := time.Date(2026, 11, 30, 8, 0, 0, 120000000, time.FixedZone("", 3600))
			for i, r := range receipts {
				md := events.Metadata{CommandID: fmt.Sprintf("cmd-v%d", i), Actor: "agent:build", Time: at.Add(time.Duration(i) * time.Second)}
				// The first and last as this build stores them, their session implied by the
				// stream (docs/events.md); the second whole, as recorded before issue 32.
				encode := func(id string, p events.Payload, md events.Metadata) (events.Event, error) {
					return events.EncodeIn("session-"+r.SessionID, id, p, md)
				}
				if i == 1 {
					encode = events.Encode
				}
				ev, err := encode(events.DeriveID(md.CommandID, 0), r, md)
				if err != nil {
					t.Fatal(err)
				}
				if implied := !strings.Contains(string(ev.Data), `"sessionId"`); implied != (i != 1) {
					t.Fatalf("receipt %d stored %s", i, ev.Data)
				}
				if _, err := e.store.Append(ctx, "session-"+r.SessionID, events.Any, ev); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := e.runner.CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			copied := rebuiltCopy(t, e)
			want := "rcp_1|ses_v|turn_1|0|[] rcp_2|ses_v|NULL|2|[\"pipeline\",\"background_job\"] rcp_3|ses_w|turn_2|NULL|[]"
			for name, db := range map[string]*sqlx.DB{"the copy": copied, "the view": e.rm.Writer} {
				var rows []string
				if err := db.Select(&rows, `SELECT id || '|' || session_id || '|' || coalesce(turn_id, 'NULL') || '|' || coalesce(CAST(exit_code AS TEXT), 'NULL')
					|| '|' || constructs FROM verification_receipt ORDER BY position`); err != nil {
					t.Fatal(err)
				}
				if got := strings.Join(rows, " "); got != want {
					t.Fatalf("%s holds\n %s\nwant\n %s", name, got, want)
				}
			}
			drift, err := projections.CompareReadModels(ctx, e.rm.Writer, copied, projections.All(), math.MaxUint64)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range drift {
				t.Errorf("%s row %s: %v", d.Table, d.Kind, d.Row)
			}
			var session string
			if err := e.rm.Writer.Get(&session, e.rm.Writer.Rebind(projections.ReceiptSessionQuery), "rcp_3"); err != nil || session != "ses_w" {
				t.Fatalf("receipt rcp_3 found in session %q (%v)", session, err)
			}
		})
	}
}

// rebuiltCopy rebuilds every read model from e's log into a SQLite file of its own, where the
// log is elsewhere, so the projectors write tables where e's database has views.
func rebuiltCopy(t *testing.T, e *env) *sqlx.DB {
	t.Helper()
	ctx := context.Background()
	copied, err := readmodel.OpenSQLite(ctx, filepath.Join(t.TempDir(), "copy.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { copied.Close() })
	if _, err := projections.NewRunner(copied.Writer, e.store, registry, projections.All()).Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	return copied.Writer
}
