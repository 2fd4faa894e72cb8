package queries_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// readQueries are the log's queries with a SQLite read model projected from it (the
// prompt_checkpoint index among them), as a zuno process has them.
func (l *auditLog) readQueries(tb testing.TB) (*queries.Queries, *readmodel.DB) {
	tb.Helper()
	ctx := context.Background()
	rm, err := readmodel.OpenSQLite(ctx, filepath.Join(tb.TempDir(), "rm.db"))
	if err != nil {
		tb.Fatal(err)
	}
	runner := projections.NewRunner(rm.Writer, l.store, l.registry, projections.All())
	tb.Cleanup(func() { runner.Close(); rm.Close() })
	if _, err := runner.CatchUp(ctx); err != nil {
		tb.Fatal(err)
	}
	return queries.New(l.store, l.registry, readModels{rm}, runner), rm
}

// sameView compares what debug prompt shows of a step checked from a checkpoint and from the
// session's start: the same receipt, parts listed, parts summed up and projection.
func sameView(t *testing.T, step int, cp, start queries.PromptView) {
	t.Helper()
	if cp.Step != start.Step || cp.RequestID != start.RequestID || cp.ReceiptID != start.ReceiptID || cp.EventID != start.EventID ||
		cp.Verified != start.Verified || cp.Parts != start.Parts || !reflect.DeepEqual(cp.Earlier, start.Earlier) {
		t.Fatalf("step %d: from the checkpoint %+v, from the start %+v", step, cp, start)
	}
	if !reflect.DeepEqual(cp.Receipt, start.Receipt) {
		t.Fatalf("step %d: receipts differ:\n%+v\n%+v", step, cp.Receipt, start.Receipt)
	}
	if !reflect.DeepEqual(cp.Projection, start.Projection) || !reflect.DeepEqual(cp.Sections, start.Sections) {
		t.Fatalf("step %d: projections differ:\n%+v\n%+v", step, cp.Projection, start.Projection)
	}
}

// TestPromptFromCheckpointIsTheReference records a session of two turns (the second's
// receipts leave their header's blobs to the first's) and checks every step both ways: read
// from the latest checkpoint before it, and re-derived from the session's start. Each step
// after a checkpoint must be checked from one, and show exactly what the start shows.
func TestPromptFromCheckpointIsTheReference(t *testing.T) {
	l := newAuditLog(t)
	l.create(t, "ses_c")
	l.turn(t, "ses_c", "first <turn> & ü", 39)
	l.turn(t, "ses_c", "second turn", 19)
	q, _ := l.readQueries(t)
	ctx := context.Background()
	receipts, _ := l.counts(t, "ses_c")
	fromCheckpoint := 0
	for step := 1; step <= receipts; step++ {
		cp, err := q.PromptAt(ctx, "ses_c", step, true, queries.PromptOptions{})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		start, err := q.PromptAt(ctx, "ses_c", step, true, queries.PromptOptions{FromStart: true})
		if err != nil || start.Checkpoint != nil || start.FromStart == "" {
			t.Fatalf("step %d from the start: %v %+v", step, err, start.Checkpoint)
		}
		sameView(t, step, cp, start)
		if cp.Checkpoint != nil {
			fromCheckpoint++
			if cp.Checkpoint.Step >= step || step-cp.Checkpoint.Step > prompt.ResumeEvery {
				t.Fatalf("step %d from checkpoint %+v", step, cp.Checkpoint)
			}
		} else if step > 20 && step != 41 {
			// The first turn's receipts carry a checkpoint from 32 parts on (step 16), the
			// second's from its first (step 41, whose conversation holds the first turn's).
			t.Fatalf("step %d was read from the start: %s", step, cp.FromStart)
		}
		all, err := q.PromptAt(ctx, "ses_c", step, true, queries.PromptOptions{AllParts: true})
		if err != nil || all.Earlier != nil || len(all.Receipt.Messages) != len(all.Receipt.Sections)+cp.Parts {
			t.Fatalf("step %d with every part: %v, %d messages, %d parts", step, err, len(all.Receipt.Messages), cp.Parts)
		}
	}
	if fromCheckpoint < receipts/2 {
		t.Fatalf("%d of %d steps were checked from a checkpoint", fromCheckpoint, receipts)
	}
	if a := audit(t, l.queries(), "ses_c"); a.Fault != nil || a.Receipts != receipts {
		t.Fatalf("audit %+v %+v", a, a.Fault)
	}
}

// TestPromptCheckpointAgainstAlteredLogs alters the SQLite log (and the index) behind a
// checkpoint and checks what each reader makes of it: zuno verify's walk (AuditSession) must
// catch every change to the log; debug prompt --from-start every change that bears on the
// step; and debug prompt from the checkpoint must never answer "verified" for a step whose
// own events, or the checkpoint's record, were changed: it falls back to the start, which
// reports them. What it does not see is a change before the checkpoint: the checkpoint
// stands for it, and verify reports it (docs/storage.md, "`debug prompt` from a checkpoint").
func TestPromptCheckpointAgainstAlteredLogs(t *testing.T) {
	l := newAuditLog(t)
	l.create(t, "ses_t")
	l.turn(t, "ses_t", "tamper <me>", 49)
	recs, err := l.store.ReadStream(context.Background(), "session-ses_t", 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var checkpoints, settled []events.Recorded
	cpStep := 0 // the first checkpoint's step
	for _, r := range recs {
		p, _ := l.registry.Decode(r)
		switch e := p.(type) {
		case events.PromptAssembled:
			if e.Resume != nil {
				checkpoints = append(checkpoints, r)
			}
		case events.ProviderRequest:
			if len(checkpoints) == 1 && cpStep == 0 {
				cpStep = e.Step
			}
		case events.ToolSettled:
			settled = append(settled, r)
		}
	}
	if len(checkpoints) < 2 || len(settled) != 49 {
		t.Fatalf("%d checkpoints, %d results", len(checkpoints), len(settled))
	}
	cp := checkpoints[0]
	raw, err := sql.Open("sqlite", l.path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	step := cpStep + 8 // before the second checkpoint, ResumeEvery parts (16 steps) later
	for _, tc := range []struct {
		name       string
		at         events.Recorded
		find, repl string
		// what each reader must say: verify's fault code, --from-start's error code ("" for
		// verified), and whether the default answer comes from the checkpoint.
		audit, fromStart string
		checkpointUsed   bool
	}{
		{"a tool result before the checkpoint", settled[2], `seen \u003c`, `SEEN \u003c`, "conversation_digest", "receipt_mismatch", true},
		{"a tool result after the checkpoint", settled[cpStep+3], `seen \u003c`, `SEEN \u003c`, "conversation_digest", "receipt_mismatch", false},
		{"the checkpoint's resume state", cp, `"sha256State":"c2hh`, `"sha256State":"c2hi`, prompt.MismatchResume, "", false},
		{"the checkpoint's part count", cp, `"resume":{"parts":`, `"resume":{"parts":1`, prompt.MismatchResume, "", false},
		{"the checkpoint's conversation digest", cp, `"conversationDigest":"`, `"conversationDigest":"0`, "conversation_digest", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := raw.Exec(`UPDATE event_log SET data = replace(data, ?, ?) WHERE event_id = ?`, tc.find, tc.repl, tc.at.ID)
			if n, _ := res.RowsAffected(); err != nil || n != 1 {
				t.Fatalf("alter: %v (%d rows)", err, n)
			}
			defer raw.Exec(`UPDATE event_log SET data = replace(data, ?, ?) WHERE event_id = ?`, tc.repl, tc.find, tc.at.ID)
			l.open(t)
			if got := audit(t, l.queries(), "ses_t"); got.Fault == nil || got.Fault.Code != tc.audit {
				t.Fatalf("verify: %+v, want %s", got.Fault, tc.audit)
			}
			q, _ := l.readQueries(t)
			start, err := q.PromptAt(context.Background(), "ses_t", step, false, queries.PromptOptions{FromStart: true})
			if code := codeOf(err); code != tc.fromStart || start.Checkpoint != nil {
				t.Fatalf("--from-start: %v, want %q", err, tc.fromStart)
			}
			v, err := q.PromptAt(context.Background(), "ses_t", step, false, queries.PromptOptions{})
			if (v.Checkpoint != nil) != tc.checkpointUsed {
				t.Fatalf("checkpoint used: %+v (fell back: %s), want %v", v.Checkpoint, v.FromStart, tc.checkpointUsed)
			}
			if tc.checkpointUsed && err != nil || !tc.checkpointUsed && codeOf(err) != tc.fromStart {
				t.Fatalf("default: %v, want %q", err, tc.fromStart)
			}
		})
	}

	// The index is a read model anyone with the database can write: a row naming another
	// receipt, or another revision, is not believed.
	l.open(t)
	for _, tamper := range []string{
		`UPDATE prompt_checkpoint SET revision = revision - 1 WHERE kind = 'resume'`,
		`UPDATE prompt_checkpoint SET header_revision = header_revision + 1 WHERE kind = 'resume'`,
		`UPDATE prompt_checkpoint SET header_id = 'rcp_other' WHERE kind = 'resume'`,
		`UPDATE prompt_checkpoint SET step = step - 30 WHERE kind = 'resume'`,
	} {
		q, rm := l.readQueries(t)
		if _, err := rm.Writer.Exec(tamper); err != nil {
			t.Fatal(err)
		}
		v, err := q.PromptAt(context.Background(), "ses_t", step, false, queries.PromptOptions{})
		if err != nil || !v.Verified || v.Checkpoint != nil && v.Checkpoint.Step >= step {
			t.Fatalf("%s: %v, %+v", tamper, err, v.Checkpoint)
		}
		if v.Checkpoint == nil && !strings.Contains(v.FromStart, "checkpoint") {
			t.Fatalf("%s: read from the start without saying why: %q", tamper, v.FromStart)
		}
	}
}

// codeOf is an error's stable code, "" for none.
func codeOf(err error) string {
	if err == nil {
		return ""
	}
	if c, ok := err.(interface{ Code() string }); ok {
		return c.Code()
	}
	return "?" + err.Error()
}

// BenchmarkPromptFromCheckpoint measures `zuno debug prompt --step N` as the CLI runs it
// (PromptAt, read models current) at steps 10 and 1,000 of one 1,000-step session recorded by
// the turn driver through the OpenAI adapter over loopback HTTP, beside step 1,000 re-derived
// from the start (--from-start), in the same run; and what the checkpoints cost to keep: the
// receipts' resume members and the prompt_checkpoint rows, in bytes per step.
func BenchmarkPromptFromCheckpoint(b *testing.B) {
	ctx := context.Background()
	l := newAuditLog(b)
	l.create(b, "ses_1000")
	l.turn(b, "ses_1000", "loop", 999)
	q, rm := l.readQueries(b)
	var p10, p1000, start1000 spent
	timed := func(into *spent, step int, opt queries.PromptOptions, fromCheckpoint bool) {
		t0, cpu := time.Now(), processCPU(b)
		v, err := q.PromptAt(ctx, "ses_1000", step, false, opt)
		into.wall += time.Since(t0)
		into.cpu += processCPU(b) - cpu
		if err != nil || !v.Verified || (v.Checkpoint != nil) != fromCheckpoint {
			b.Fatalf("step %d: %v %+v %s", step, err, v.Checkpoint, v.FromStart)
		}
	}
	for b.Loop() {
		timed(&p10, 10, queries.PromptOptions{}, false) // before the first checkpoint: from the start, ten steps
		timed(&p1000, 1000, queries.PromptOptions{}, true)
		timed(&start1000, 1000, queries.PromptOptions{FromStart: true}, false)
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1e3 / n }
	for _, m := range []struct {
		name string
		s    spent
	}{{"prompt@10", p10}, {"prompt@1000", p1000}, {"from-start@1000", start1000}} {
		b.ReportMetric(ms(m.s.wall), "ms/"+m.name)
		b.ReportMetric(ms(m.s.cpu), "cpu-ms/"+m.name)
	}
	b.ReportMetric(float64(p1000.wall)/float64(p10.wall), "ratio-prompt@1000/10")
	b.ReportMetric(float64(p1000.cpu)/float64(p10.cpu), "cpu-ratio-prompt@1000/10")
	b.ReportMetric(float64(start1000.cpu)/float64(p1000.cpu), "cpu-ratio-from-start/checkpoint@1000")

	// What the checkpoints keep: each resume member as the receipt's JSON holds it, and the
	// index's rows (their values' bytes; the database's own overhead per row comes on top).
	recs, err := l.store.ReadStream(ctx, "session-ses_1000", 0, 1<<30)
	if err != nil {
		b.Fatal(err)
	}
	resume := 0
	for _, r := range recs {
		if i := strings.Index(string(r.Data), `,"resume":{`); i >= 0 {
			resume += strings.Index(string(r.Data[i+1:]), "}") + 2
		}
	}
	var rows, index int
	if err := rm.Writer.QueryRow(`SELECT count(*), coalesce(sum(length(session_id) + length(receipt_id) + length(kind) + length(coalesce(header_id, '')) + 5*8), 0)
		FROM prompt_checkpoint`).Scan(&rows, &index); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(resume)/1000, "resume-B/step")
	b.ReportMetric(float64(index)/1000, "index-B/step")
	b.ReportMetric(float64(rows), "index-rows")
}

// TestPythonCheckerChecksCheckpoints runs the independent checker (docs/verifier/receipts.py,
// standard library only) over a session whose receipts carry checkpoints: it accepts them,
// and reports resume_state at a checkpoint whose state or part count was changed, as Zuno's
// code does (docs/formats/receipts.md §13).
func TestPythonCheckerChecksCheckpoints(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("python3 is not installed; CI must run the independent receipt checker")
		}
		t.Skip("SKIP: python3 is not installed; the independent receipt checker (docs/verifier) is not run")
	}
	l := newAuditLog(t)
	l.create(t, "ses_p")
	l.turn(t, "ses_p", "check <me> & é", 35)
	recs, err := l.store.ReadStream(context.Background(), "session-ses_p", 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	lines := func(find, replace string) string {
		var b strings.Builder
		changed := false
		for _, r := range recs {
			data := string(r.Data)
			if !changed && strings.Contains(data, find) {
				data, changed = strings.Replace(data, find, replace, 1), true
			}
			md, err := json.Marshal(r.Metadata)
			if err != nil {
				t.Fatal(err)
			}
			line, err := json.Marshal(map[string]any{"kind": "event", "position": r.Position, "stream": r.Stream, "revision": r.StreamRevision,
				"eventId": r.ID, "type": r.Type, "data": data, "metadata": string(md)})
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
		if find != "" && !changed {
			t.Fatalf("no event holds %q", find)
		}
		path := filepath.Join(t.TempDir(), "events.jsonl")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	run := func(path string) (string, error) {
		cmd := exec.Command(py, "../../docs/verifier/receipts.py", path)
		cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(lines("", "")); err != nil || !strings.Contains(out, "36 receipts, 0 failed") {
		t.Fatalf("the recorded session: %v\n%s", err, out)
	}
	if !strings.Contains(l.mustData(t, recs), `"resume":{"parts":`) {
		t.Fatal("the session records no checkpoint")
	}
	for _, alter := range [][2]string{
		{`"sha256State":"c2hh`, `"sha256State":"c2hi`},
		{`"resume":{"parts":`, `"resume":{"parts":1`},
	} {
		out, err := run(lines(alter[0], alter[1]))
		if err == nil || !strings.Contains(out, "resume_state") || !strings.Contains(out, "36 receipts, 1 failed") {
			t.Fatalf("%s → %s: %v\n%s", alter[0], alter[1], err, out)
		}
	}
}

// mustData is every event's data, joined.
func (l *auditLog) mustData(t *testing.T, recs []events.Recorded) string {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		b.Write(r.Data)
	}
	return b.String()
}
