package verify_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/verify"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

var registry = events.NewRegistry(events.AllPayloads()...)

type clock struct{}

func (clock) Now() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }

// db is one real database holding the event log and the read models, and a raw connection
// that alters them with plain SQL, as someone with database access could.
type db struct {
	store *sqlstore.Store
	rm    *readmodel.DB
	raw   *sql.DB
	pg    bool
}

type backend struct {
	name string
	open func(t testing.TB) *db
}

var backends = []backend{
	{"sqlite", func(t testing.TB) *db {
		path := filepath.Join(t.TempDir(), "zuno.db")
		return openDB(t, "sqlite", path, false)
	}},
	{"postgres", func(t testing.TB) *db { return openDB(t, "postgres", pgtest.NewDatabase(t), true) }},
}

func openDB(t testing.TB, driver, dsn string, pg bool) *db {
	t.Helper()
	ctx := context.Background()
	d := &db{pg: pg}
	var err error
	if pg {
		d.store, err = sqlstore.OpenPostgres(ctx, dsn)
	} else {
		d.store, err = sqlstore.OpenSQLite(ctx, dsn)
	}
	if err != nil {
		t.Fatal(err)
	}
	if pg {
		d.rm, err = readmodel.OpenPostgres(ctx, dsn)
	} else {
		d.rm, err = readmodel.OpenSQLite(ctx, dsn)
	}
	if err != nil {
		t.Fatal(err)
	}
	if d.raw, err = sql.Open(driver, dsn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.raw.Close(); d.rm.Close(); d.store.Close() })
	return d
}

// exec runs one statement per dialect.
func (d *db) exec(t *testing.T, sqlite, postgres string) {
	t.Helper()
	query := sqlite
	if d.pg {
		query = postgres
	}
	res, err := d.raw.Exec(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		t.Fatalf("%s changed no row", query)
	}
}

// both is a statement both dialects accept.
func (d *db) both(t *testing.T, query string) {
	t.Helper()
	d.exec(t, query, query)
}

// position is where stream's event at rev is stored.
func (d *db) position(t *testing.T, stream string, rev int) uint64 {
	t.Helper()
	q := `SELECT position FROM event_log WHERE stream = ? AND stream_revision = ?`
	if d.pg {
		q = `SELECT position FROM event_log WHERE stream = $1 AND stream_revision = $2`
	}
	var pos int64
	if err := d.raw.QueryRow(q, stream, rev).Scan(&pos); err != nil {
		t.Fatal(err)
	}
	return uint64(pos)
}

// seedSession writes a session through the real command handlers: created, n user messages,
// and when withWork a plan and todos (the work stream).
func seedSession(t testing.TB, h *commands.Handlers, id string, n int, withWork bool) {
	t.Helper()
	ctx := context.Background()
	meta := func(c string) commands.Meta {
		return commands.Meta{CommandID: id + "/" + c, Actor: "user", CorrelationID: id}
	}
	must := func(res commands.Result, err error) {
		t.Helper()
		if err == nil {
			err = res.Err()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	must(h.CreateSession(ctx, &commands.CreateSession{Meta: meta("create"), Create: session.Create{SessionID: id, Title: "session " + id, Agent: "build"}}))
	for i := range n {
		must(h.AppendUserMessage(ctx, &commands.AppendUserMessage{Meta: meta(fmt.Sprint("m", i)),
			AppendUserMessage: session.AppendUserMessage{SessionID: id, MessageID: fmt.Sprintf("msg_%d", i), Text: fmt.Sprintf("hello %d", i)}}))
	}
	if withWork {
		must(h.UpdatePlan(ctx, &commands.UpdatePlan{Meta: meta("plan"), SessionID: id, Update: work.PlanUpdate{
			Action: "create", Title: "Fix", Steps: []work.StepInput{{Title: "Reproduce"}, {Title: "Patch"}}}}))
		title := "first"
		must(h.UpdateTodos(ctx, &commands.UpdateTodos{Meta: meta("todo"), SessionID: id, Update: work.TodoUpdate{Items: []work.TodoInput{{Title: &title}}}}))
	}
}

// drift replays the log into a scratch SQLite read model and compares, as `zuno verify` does.
func drift(t *testing.T, d *db) []projections.Drift {
	t.Helper()
	ctx := context.Background()
	live := projections.NewRunner(d.rm.Writer, d.store, registry, projections.All())
	upTo, err := live.CatchUp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	scratch, err := readmodel.OpenSQLite(ctx, filepath.Join(t.TempDir(), "replay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer scratch.Close()
	if _, err := projections.NewRunner(scratch.Writer, projections.UpTo(d.store, upTo), registry, projections.All()).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := projections.CompareReadModels(ctx, d.rm.Writer, scratch.Writer, projections.All(), upTo)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

const tampered = "session-ses_a"

// tamper is one row of the tamper table: what is done to the stored log with plain SQL, and
// the verdict `zuno verify` must reach, with the position it must name.
type tamper struct {
	name string
	do   func(t *testing.T, d *db)
	// want is the fault on session-ses_a ("" when the chain must verify); pos and rev say where.
	want     string
	pos, rev func(d *db) (uint64, uint64)
	// anchored: the fault is only seen against an anchor taken before the tampering.
	anchored bool
	// drift: the read models disagree with the log, in this table.
	drift string
}

func TestTamperTable(t *testing.T) {
	var p [6]uint64 // positions of session-ses_a's revisions 0..5, read before tampering
	pos := func(rev int) uint64 { return p[rev] }
	cases := []tamper{
		{name: "one byte of one event's data", want: events.FaultAltered,
			do: func(t *testing.T, d *db) {
				d.exec(t, `UPDATE event_log SET data = replace(data, 'hello 2', 'hellO 2') WHERE stream = 'session-ses_a' AND stream_revision = 3`,
					`UPDATE event_log SET data = replace(data::text, 'hello 2', 'hellO 2')::json WHERE stream = 'session-ses_a' AND stream_revision = 3`)
			}, pos: func(*db) (uint64, uint64) { return pos(3), 3 }},
		{name: "an event deleted in the middle", want: events.FaultMissing,
			do: func(t *testing.T, d *db) {
				d.both(t, `DELETE FROM event_log WHERE stream = 'session-ses_a' AND stream_revision = 2`)
			}, pos: func(*db) (uint64, uint64) { return pos(3), 2 }},
		{name: "the last event deleted: unseen without an anchor", want: "",
			do: func(t *testing.T, d *db) {
				d.both(t, `DELETE FROM event_log WHERE stream = 'session-ses_a' AND stream_revision = 4`)
			}},
		{name: "the last event deleted: caught with the anchor", want: events.FaultTruncated, anchored: true,
			do: func(t *testing.T, d *db) {
				d.both(t, `DELETE FROM event_log WHERE stream = 'session-ses_a' AND stream_revision = 4`)
			}, pos: func(*db) (uint64, uint64) { return pos(3), 4 }},
		{name: "two events swapped in the global order", want: events.FaultReordered,
			do: func(t *testing.T, d *db) {
				d.both(t, fmt.Sprintf(`UPDATE event_log SET position = -1 WHERE position = %d`, pos(1)))
				d.both(t, fmt.Sprintf(`UPDATE event_log SET position = %d WHERE position = %d`, pos(1), pos(2)))
				d.both(t, fmt.Sprintf(`UPDATE event_log SET position = %d WHERE position = -1`, pos(2)))
			}, pos: func(*db) (uint64, uint64) { return pos(1), 1 }},
		{name: "two events swapped in their stream", want: events.FaultAltered,
			do: func(t *testing.T, d *db) {
				d.both(t, fmt.Sprintf(`UPDATE event_log SET position = -1, stream_revision = -1 WHERE position = %d`, pos(1)))
				d.both(t, fmt.Sprintf(`UPDATE event_log SET position = %d, stream_revision = 1 WHERE position = %d`, pos(1), pos(2)))
				d.both(t, fmt.Sprintf(`UPDATE event_log SET position = %d, stream_revision = 2 WHERE position = -1`, pos(2)))
			}, pos: func(*db) (uint64, uint64) { return pos(1), 1 }},
		{name: "an event inserted with a forged hash", want: events.FaultAltered,
			do: func(t *testing.T, d *db) {
				md := `{"commandId":"forged","actor":"user","time":"2026-12-01T09:00:00Z","hash":"` + strings.Repeat("ab", 32) + `"}`
				data := `{"sessionId":"ses_a","messageId":"msg_x","text":"forged"}`
				d.both(t, fmt.Sprintf(`INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata)
					VALUES ((SELECT MAX(position) + 1 FROM event_log), '%s', 'session-ses_a', 5, 'session.user_message.appended.1', '%s', '%s')`,
					events.DeriveID("forged", 0), data, md))
			}, pos: func(d *db) (uint64, uint64) { return d.lastPosition(), 5 }},
		{name: "an event inserted without a hash", want: events.FaultUnchained,
			do: func(t *testing.T, d *db) {
				md := `{"commandId":"forged","actor":"user","time":"2026-12-01T09:00:00Z"}`
				data := `{"sessionId":"ses_a","messageId":"msg_x","text":"forged"}`
				d.both(t, fmt.Sprintf(`INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata)
					VALUES ((SELECT MAX(position) + 1 FROM event_log), '%s', 'session-ses_a', 5, 'session.user_message.appended.1', '%s', '%s')`,
					events.DeriveID("forged", 0), data, md))
			}, pos: func(d *db) (uint64, uint64) { return d.lastPosition(), 5 }},
		{name: "a metadata field changed", want: events.FaultAltered,
			do: func(t *testing.T, d *db) {
				d.exec(t, `UPDATE event_log SET metadata = replace(metadata, '"actor":"user"', '"actor":"host"') WHERE stream = 'session-ses_a' AND stream_revision = 1`,
					`UPDATE event_log SET metadata = replace(metadata::text, '"actor":"user"', '"actor":"host"')::json WHERE stream = 'session-ses_a' AND stream_revision = 1`)
			}, pos: func(*db) (uint64, uint64) { return pos(1), 1 }},
		{name: "a stream rewritten with a recomputed chain: caught with the anchor", want: events.FaultAnchorMismatch, anchored: true,
			do:  func(t *testing.T, d *db) { d.rechain(t) },
			pos: func(*db) (uint64, uint64) { return pos(4), 4 }},
		{name: "a read-model row edited", want: "", drift: "session",
			do: func(t *testing.T, d *db) {
				d.both(t, `UPDATE session SET title = 'evil' WHERE id = 'ses_a'`)
			}},
	}
	for _, b := range backends {
		for _, tc := range cases {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				d := b.open(t)
				h := commands.NewHandlers(d.store, registry, clock{}, nil)
				seedSession(t, h, "ses_a", 4, true)
				seedSession(t, h, "ses_b", 2, false)
				for rev := range 5 {
					p[rev] = d.position(t, tampered, rev)
				}
				ctx := context.Background()
				before, err := verify.Chain(ctx, d.store, verify.Options{})
				if err != nil || len(before.Faults) != 0 {
					t.Fatalf("untouched log: %v %+v", err, before.Faults)
				}
				if got := drift(t, d); len(got) != 0 {
					t.Fatalf("untouched read models drift: %+v", got)
				}
				tc.do(t, d)
				opts := verify.Options{}
				if tc.anchored {
					opts.Anchored = before.Heads
				}
				rep, err := verify.Chain(ctx, d.store, opts)
				if err != nil {
					t.Fatal(err)
				}
				checkVerdict(t, d, tc, rep)
				if tc.drift != "" {
					got := drift(t, d)
					if len(got) == 0 || got[0].Table != tc.drift || got[0].Kind != projections.DriftExtra || got[0].Row["title"] != "evil" {
						t.Fatalf("drift %+v, want an extra %s row titled evil", got, tc.drift)
					}
				}
			})
		}
	}
}

func checkVerdict(t *testing.T, d *db, tc tamper, rep verify.Report) {
	t.Helper()
	if tc.want == "" {
		if len(rep.Faults) != 0 {
			t.Fatalf("faults %+v, want the chain to verify", rep.Faults)
		}
		return
	}
	if len(rep.Faults) != 1 {
		t.Fatalf("faults %+v, want one on %s", rep.Faults, tampered)
	}
	f := rep.Faults[0]
	pos, rev := tc.pos(d)
	if f.Stream != tampered || f.Kind != tc.want || f.Position != pos || f.Revision != rev {
		t.Fatalf("fault %+v, want %s at position %d revision %d", f, tc.want, pos, rev)
	}
}

func (d *db) lastPosition() uint64 {
	pos, _ := d.store.LastPosition(context.Background())
	return pos
}

// rechain rewrites session-ses_a from revision 3 on, with hashes recomputed as an attacker
// who knows the algorithm would: the chain verifies, only an anchor can tell.
func (d *db) rechain(t *testing.T) {
	t.Helper()
	recs, err := d.store.ReadStream(context.Background(), tampered, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	evs := []events.Event{recs[3].Event, recs[4].Event}
	evs[0].Data = []byte(strings.Replace(string(evs[0].Data), "hello 2", "HELLO 2", 1))
	sealed, err := events.Seal(tampered, recs[2].Metadata.Hash, 3, evs)
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range sealed {
		md, _ := json.Marshal(ev.Metadata)
		q := `UPDATE event_log SET data = '%s', metadata = '%s' WHERE event_id = '%s'`
		d.both(t, fmt.Sprintf(q, ev.Data, md, recs[3+i].ID))
	}
}

// TestOlderBuildOnPostgres: a build from before the chain calls zuno_append without body
// digests. Its event is stored as sent (the append must not fail), `zuno verify` reports it as
// unchained, and the next hashed event starts the chain afresh.
func TestOlderBuildOnPostgres(t *testing.T) {
	d := backends[1].open(t)
	h := commands.NewHandlers(d.store, registry, clock{}, nil)
	seedSession(t, h, "ses_a", 1, false)
	req := fmt.Sprintf(`[{"stream":"session-ses_a","expect":"any","revision":0,"events":[{"id":"%s","type":"session.user_message.appended.1",
		"data":"{\"sessionId\":\"ses_a\",\"messageId\":\"msg_old\",\"text\":\"old build\"}","metadata":"{\"commandId\":\"old\",\"actor\":\"user\",\"time\":\"2026-12-01T09:00:00Z\"}"}]}]`,
		events.DeriveID("old", 0))
	var outcome string
	if err := d.raw.QueryRow(`SELECT outcome FROM zuno_append($1)`, req).Scan(&outcome); err != nil || outcome != "ok" {
		t.Fatalf("older build's append: %q %v", outcome, err)
	}
	if _, err := h.AppendUserMessage(context.Background(), &commands.AppendUserMessage{Meta: commands.Meta{CommandID: "new", Actor: "user"},
		AppendUserMessage: session.AppendUserMessage{SessionID: "ses_a", MessageID: "msg_new", Text: "new build"}}); err != nil {
		t.Fatal(err)
	}
	recs, _ := d.store.ReadStream(context.Background(), tampered, 0, 10)
	if len(recs) != 4 || recs[2].Metadata.Hash != "" || recs[3].Metadata.Hash == "" {
		t.Fatalf("stored %d events, hashes %q %q", len(recs), recs[2].Metadata.Hash, recs[3].Metadata.Hash)
	}
	body, _ := events.BodyDigest(tampered, recs[3].Event)
	if recs[3].Metadata.Hash != events.Link("", 3, body) {
		t.Fatal("the event after an unhashed one does not start the chain afresh")
	}
	rep, err := verify.Chain(context.Background(), d.store, verify.Options{})
	if err != nil || len(rep.Faults) != 1 || rep.Faults[0].Kind != events.FaultUnchained || rep.Faults[0].Revision != 2 {
		t.Fatalf("faults %+v %v, want ses_a unchained at revision 2", rep.Faults, err)
	}
}
