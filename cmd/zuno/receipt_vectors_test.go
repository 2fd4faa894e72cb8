package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/eventstore/memstore"
	"github.com/zuno-run/zuno/adapters/sqldb"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/events"
)

// The receipt test vectors (docs/formats/receipts.md, "Test vectors") are a real session's
// events, from real `zuno` processes on a real SQLite log, with the digests Zuno's own code
// derives for each receipt. -update runs the session again and rewrites them; without it the
// test checks that the committed vectors still give what the Go code computes, so a change of
// the format shows up here and in the spec's independent verifier (docs/verifier/receipts.py),
// which the Python tests run over the same files.

const vectorsDir = "../../docs/formats/vectors/receipts"

// eventLine is one event in the line shape the evidence bundle and the verifier read: data and
// metadata are the JSON text the log stores, byte for byte.
type eventLine struct {
	Kind     string `json:"kind"`
	Position uint64 `json:"position"`
	Stream   string `json:"stream"`
	Revision uint64 `json:"revision"`
	EventID  string `json:"eventId"`
	Type     string `json:"type"`
	Data     string `json:"data"`
	Metadata string `json:"metadata"`
}

// expectedReceipt is what the Go code derives for one receipt, expanded.
type expectedReceipt struct {
	EventID              string `json:"eventId"`
	Stream               string `json:"stream"`
	ReceiptID            string `json:"receiptId"`
	Step                 int    `json:"step"`
	HeaderDigest         string `json:"headerDigest"`
	ConversationDigest   string `json:"conversationDigest"`
	AssemblyDigest       string `json:"assemblyDigest"`
	ActualDigest         string `json:"actualDigest"`
	Messages             int    `json:"messages"`
	EstimatedInputTokens int64  `json:"estimatedInputTokens"`
	// How the receipt is stored: what it leaves to an earlier receipt and to the transcript.
	LoggedParts       int  `json:"loggedParts,omitempty"`
	ConversationBase  int  `json:"conversationBaseParts,omitempty"`
	HeaderBase        bool `json:"headerBase,omitempty"`
	ConversationParts int  `json:"storedConversationParts"`
}

// vectorFile is one vector: events, and either the digests of every receipt (a valid session)
// or the first receipt that must fail and the mismatch code it fails with (an altered one).
type vectorFile struct {
	Format      string            `json:"format"`
	Description string            `json:"description"`
	Receipts    []expectedReceipt `json:"receipts,omitempty"`
	Fails       *failure          `json:"fails,omitempty"`
	// Alter, in an altered vector, is the change to session.json's events: in the data of
	// the event EventID, the text Find (once there) replaced by Replace, of the same length.
	Alter  *change     `json:"alter,omitempty"`
	Events []eventLine `json:"events,omitempty"`
}

type change struct {
	EventID string `json:"eventId"`
	Find    string `json:"find"`
	Replace string `json:"replace"`
}

// apply returns the events with c made.
func (c change) apply(t *testing.T, lines []eventLine) []eventLine {
	t.Helper()
	out := slices.Clone(lines)
	for i, l := range out {
		if l.EventID == c.EventID {
			if strings.Count(l.Data, c.Find) != 1 || len(c.Find) != len(c.Replace) {
				t.Fatalf("%q is not once in event %s, or not of the length of %q", c.Find, c.EventID, c.Replace)
			}
			out[i].Data = strings.Replace(l.Data, c.Find, c.Replace, 1)
			return out
		}
	}
	t.Fatalf("no event %s", c.EventID)
	return nil
}

type failure struct {
	EventID string `json:"eventId"`
	Code    string `json:"code"`
}

func TestReceiptVectors(t *testing.T) {
	if *update {
		writeReceiptVectors(t, recordVectorSession(t))
	}
	files, err := filepath.Glob(filepath.Join(vectorsDir, "*.json"))
	files = slices.DeleteFunc(files, func(f string) bool { return filepath.Base(f) == "encoding.json" })
	if err != nil || len(files) == 0 {
		t.Fatalf("no vectors in %s (%v): run go test ./cmd/zuno -run TestReceiptVectors -update", vectorsDir, err)
	}
	var session vectorFile
	readJSON(t, filepath.Join(vectorsDir, "session.json"), &session)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			var v vectorFile
			readJSON(t, f, &v)
			if v.Alter != nil {
				v.Events = v.Alter.apply(t, session.Events)
			}
			got, fail := goReceipts(t, v.Events)
			if v.Fails == nil {
				if fail != nil {
					t.Fatalf("receipt %s fails in Go: %s", fail.EventID, fail.Code)
				}
				if !slices.Equal(got, v.Receipts) {
					t.Fatalf("the Go code derives other receipts than the vector holds:\n got %+v\nwant %+v", got, v.Receipts)
				}
				return
			}
			if fail == nil || fail.EventID != v.Fails.EventID || !strings.Contains(fail.Code, v.Fails.Code) {
				t.Fatalf("altered vector: Go fails with %+v, want receipt %s with %s", fail, v.Fails.EventID, v.Fails.Code)
			}
		})
	}
}

// TestReceiptVerifierPython runs the independent verifier's tests (docs/verifier) over the
// vectors, so CI runs them with the Go tests.
func TestReceiptVerifierPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("SKIP: python3 is not installed; the independent receipt verifier (docs/verifier) is not run")
	}
	cmd := exec.Command(py, "-m", "unittest", "-v", "test_receipts")
	cmd.Dir = "../../docs/verifier"
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1") // leave no __pycache__ in docs/
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest test_receipts: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// goReceipts loads the events into an event store and asks `zuno debug prompt`'s query for
// every step of every session, in order: the digests of each expanded receipt, or the first
// receipt that does not verify (its event id, and the error's text, which names the
// mismatch codes).
func goReceipts(t *testing.T, lines []eventLine) ([]expectedReceipt, *failure) {
	t.Helper()
	ctx := context.Background()
	store := memstore.New()
	defer store.Close()
	registry := events.NewRegistry(events.AllPayloads()...)
	type step struct {
		session string
		step    int
		receipt string
	}
	var steps []step
	eventOf := map[string]eventLine{}
	var sessions []string
	for _, l := range lines {
		var md events.Metadata
		if err := json.Unmarshal([]byte(l.Metadata), &md); err != nil {
			t.Fatal(err)
		}
		md.Hash = "" // the store seals the chain again, as it did when it was written
		expected := events.NoStream
		if l.Revision > 0 {
			expected = events.Exact(l.Revision - 1)
		}
		if _, err := store.Append(ctx, l.Stream, expected, events.Event{ID: l.EventID, Type: l.Type, Data: json.RawMessage(l.Data), Metadata: md}); err != nil {
			// The store refuses data that is not JSON, where `zuno debug prompt` would fail to
			// load the stream: at its first receipt.
			return nil, &failure{EventID: firstReceipt(lines, l.Stream), Code: "event_undecodable: " + err.Error()}
		}
		session, ok := strings.CutPrefix(l.Stream, "session-")
		if !ok {
			continue
		}
		if !slices.Contains(sessions, session) {
			sessions = append(sessions, session)
		}
		var d struct {
			ReceiptID       string `json:"receiptId"`
			PromptReceiptID string `json:"promptReceiptID"`
			Step            int    `json:"step"`
			Status          string `json:"status"`
		}
		_ = json.Unmarshal([]byte(l.Data), &d) // an altered event may not decode: the query says so
		switch l.Type {
		case events.TypePromptAssembled:
			eventOf[d.ReceiptID] = l
		case events.TypeProviderRequest:
			if d.Status == events.RequestStarted && !slices.ContainsFunc(steps, func(s step) bool { return s.session == session && s.step == d.Step }) {
				steps = append(steps, step{session, d.Step, d.PromptReceiptID})
			}
		}
	}
	q := queries.New(store, registry, nil, nil)
	var out []expectedReceipt
	for _, s := range steps {
		stored, own := eventOf[s.receipt]
		if !own || stored.Stream != "session-"+s.session {
			continue // a fork's steps before the fork are its source's receipts
		}
		v, err := q.Prompt(ctx, s.session, s.step, true)
		if err != nil {
			return out, &failure{EventID: stored.EventID, Code: err.Error()}
		}
		var st events.PromptAssembled
		if err := json.Unmarshal([]byte(stored.Data), &st); err != nil {
			t.Fatal(err)
		}
		out = append(out, describeReceipt(t, v, st, stored))
	}
	return out, nil
}

// firstReceipt is the id of the first receipt event of stream.
func firstReceipt(lines []eventLine, stream string) string {
	for _, l := range lines {
		if l.Stream == stream && l.Type == events.TypePromptAssembled {
			return l.EventID
		}
	}
	return ""
}

func describeReceipt(t *testing.T, v queries.PromptView, stored events.PromptAssembled, l eventLine) expectedReceipt {
	t.Helper()
	r := v.Receipt
	header, err := prompt.HeaderDigest(r)
	if err != nil {
		t.Fatal(err)
	}
	e := expectedReceipt{EventID: l.EventID, Stream: l.Stream, ReceiptID: v.ReceiptID, Step: v.Step, HeaderDigest: header,
		ConversationDigest: r.ConversationDigest, AssemblyDigest: r.AssemblyDigest, ActualDigest: r.ActualDigest,
		Messages: len(r.Messages), EstimatedInputTokens: r.EstimatedInputTokens, LoggedParts: stored.LoggedParts,
		HeaderBase: stored.HeaderBase != nil, ConversationParts: len(stored.Messages) - min(len(stored.Sections), len(stored.Messages))}
	if b := stored.ConversationBase; b != nil {
		e.ConversationBase = b.Parts
	}
	return e
}

// recordVectorSession runs the vector session with real zuno processes on a real SQLite log
// and returns its events: a first turn with text and tool calls (a result, a failed result, a
// blocked call, a shell call), a turn whose request fails, a second turn that continues the
// conversation, and a fork of the session after its first turn, continued.
func recordVectorSession(t *testing.T) []eventLine {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	// Text the JSON encoding must escape or keep: HTML characters, U+2028, non-ASCII.
	notes := "Notes <b>bold</b> & more\nü 中文 \u2028 end\n"
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte(notes), 0o644); err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(dir, "data", "zuno.db")
	env := append(os.Environ(), "ZUNO_DB="+dbPath, "ZUNO_CONFIG="+filepath.Join(dir, "none.json"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_DATA_HOME="+filepath.Join(dir, "data"))
	script := func(name string, turns ...any) string {
		p := filepath.Join(dir, name)
		b, _ := json.Marshal(map[string]any{"turns": turns})
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return "scripted:" + p
	}
	zunoEnv := func(env []string, wantOK bool, args ...string) string {
		cmd := exec.Command("zuno", args...)
		cmd.Dir, cmd.Env = ws, env
		out, err := cmd.CombinedOutput()
		if (err == nil) != wantOK {
			t.Fatalf("zuno %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	zuno := func(wantOK bool, args ...string) string { return zunoEnv(env, wantOK, args...) }
	zuno(true, "session", "create", "--id", "ses_vectors", "--title", "receipt vectors")
	first := script("first.json",
		map[string]any{"text": "Looking <first> & reading.", "toolCalls": []any{
			toolCall("c1", "read", "path", "notes.txt"),
			toolCall("c2", "read", "path", "missing.txt"),
			toolCall("c3", "nope")}},
		map[string]any{"toolCalls": []any{toolCall("c4", "shell", "command", `printf 'a<b>&c\n'`)}},
		map[string]any{"text": "Done: ü 中文 \u2028 <ok> & \"quoted\"."})
	zuno(true, "run", "--model", first, "--session", "ses_vectors", "Read notes.txt <carefully> & report")
	failing := script("failing.json", map[string]any{"error": map[string]any{"code": "invalid_request", "message": "refused on purpose"}})
	zuno(false, "run", "--model", failing, "--session", "ses_vectors", "This request fails")
	second := script("second.json",
		map[string]any{"toolCalls": []any{toolCall("c5", "read", "path", "notes.txt")}},
		map[string]any{"text": "Second turn done."})
	zuno(true, "run", "--model", second, "--session", "ses_vectors", "Read it again")

	lines := readLog(t, dbPath)
	var forkAt uint64
	for _, l := range lines {
		if l.Stream == "session-ses_vectors" && l.Type == events.TypeTurnFinished {
			forkAt = l.Position
			break
		}
	}
	zuno(true, "session", "fork", "--from", fmt.Sprint(forkAt), "--id", "ses_vfork", "--title", "fork")
	zuno(true, "run", "--model", script("fork.json", map[string]any{"text": "Fork answer."}), "--session", "ses_vfork", "Continue in the fork")

	// A session whose transcript outgrows a small window and is compacted (docs/compaction.md;
	// the window and tools as in testdata/script/compaction.txtar).
	window := filepath.Join(dir, "window.json")
	if err := os.WriteFile(window, []byte(`{"context_window": 5200, "tools": {"task_context": false, "goal_get": false, `+
		`"goal_update": false, "goal_request_input": false, "question": false, "question_async": false}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 40)
	if err := os.WriteFile(filepath.Join(ws, "big.txt"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	var reads []any
	for i := range 12 {
		reads = append(reads, map[string]any{"toolCalls": []any{toolCall(fmt.Sprintf("r%d", i+1), "read", "path", "big.txt")}})
	}
	reads = append(reads, map[string]any{"text": "read it twelve times"})
	compactEnv := append(slices.Clone(env), "ZUNO_CONFIG="+window)
	zunoEnv(compactEnv, true, "session", "create", "--id", "ses_vcompact", "--title", "compaction")
	if out := zunoEnv(compactEnv, true, "run", "--model", script("reads.json", reads...), "--session", "ses_vcompact", "read big.txt twelve times"); !strings.Contains(out, "compaction 1:") {
		t.Fatalf("the session was not compacted:\n%s", out)
	}
	return readLog(t, dbPath)
}

// readLog reads every event of the log, in position order, as the log stores it.
func readLog(t *testing.T, path string) []eventLine {
	t.Helper()
	ctx := context.Background()
	db, err := sqldb.OpenSQLite(ctx, path, sqldb.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT position, event_id, stream, stream_revision, type, data, metadata FROM event_log ORDER BY position`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []eventLine
	for rows.Next() {
		l := eventLine{Kind: "event"}
		if err := rows.Scan(&l.Position, &l.EventID, &l.Stream, &l.Revision, &l.Type, &l.Data, &l.Metadata); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// writeReceiptVectors writes the session's vector and the altered ones, each altered at one byte of
// what a receipt proves.
func writeReceiptVectors(t *testing.T, lines []eventLine) {
	t.Helper()
	receipts, fail := goReceipts(t, lines)
	if fail != nil {
		t.Fatalf("the recorded session's receipt %s does not verify: %s", fail.EventID, fail.Code)
	}
	if err := os.MkdirAll(vectorsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(vectorsDir, "*-*.json"))
	for _, f := range old {
		os.Remove(f)
	}
	save := func(name string, v vectorFile) {
		v.Format = "zuno receipts v1"
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(vectorsDir, name), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	save("session.json", vectorFile{Description: "a session with tool calls and results (one failed, one blocked), a failed " +
		"request, a second turn and a fork continued: every receipt verifies, with these digests", Receipts: receipts, Events: lines})
	for _, a := range alterations {
		c, target := a.alter(t, lines)
		_, fail := goReceipts(t, c.apply(t, lines))
		if fail == nil || !strings.Contains(fail.Code, a.code) {
			t.Fatalf("%s: Go does not fail with %s: %+v", a.name, a.code, fail)
		}
		if target != "" && fail.EventID != target {
			t.Fatalf("%s: Go fails at receipt %s, want %s", a.name, fail.EventID, target)
		}
		save("altered-"+a.name+".json", vectorFile{Description: a.description, Fails: &failure{EventID: fail.EventID, Code: a.code}, Alter: &c})
	}
}

// alteration changes one byte of a session's events.
type alteration struct {
	name, description, code string
	// alter returns the change and the event id of the receipt that must fail first.
	alter func(t *testing.T, lines []eventLine) (change, string)
}

var alterations = []alteration{
	{"blob", "one byte of a section blob of the first receipt changed: its blob no longer hashes to its key", "blob_digest",
		func(t *testing.T, lines []eventLine) (change, string) {
			return alterFirst(t, lines, events.TypePromptAssembled, func(d events.PromptAssembled) (string, string) {
				if len(d.Sections) == 0 {
					return "", ""
				}
				key := d.Sections[0].SHA256
				return member(key, d.Blobs[key]), member(key, flipLast(d.Blobs[key]))
			}, 0)
		}},
	{"user-message", "one byte of the first user message changed: the receipt that lists it no longer chains to its conversation digest", "conversation_digest",
		func(t *testing.T, lines []eventLine) (change, string) {
			return alterFirst(t, lines, events.TypeUserMessageAppended, func(d events.UserMessageAppended) (string, string) {
				return member("text", d.Text), member("text", flipLast(d.Text))
			}, 1)
		}},
	{"tool-result", "one byte of the first tool result changed: the next receipt no longer chains to its conversation digest", "conversation_digest",
		func(t *testing.T, lines []eventLine) (change, string) {
			return alterFirst(t, lines, events.TypeToolSettled, func(d events.ToolSettled) (string, string) {
				return member("output", d.Output), member("output", flipLast(d.Output))
			}, 1)
		}},
	{"response-text", "one byte of the first response's text changed: the next receipt no longer chains to its conversation digest", "conversation_digest",
		func(t *testing.T, lines []eventLine) (change, string) {
			return alterFirst(t, lines, events.TypeProviderRequest, func(d events.ProviderRequest) (string, string) {
				if d.Response == nil || d.Response.Text == "" {
					return "", ""
				}
				return member("text", d.Response.Text), member("text", flipLast(d.Response.Text))
			}, 1)
		}},
	{"tool-call-arguments", "one byte of the first tool call's arguments changed: the next receipt no longer chains to its conversation digest", "conversation_digest",
		func(t *testing.T, lines []eventLine) (change, string) {
			return alterFirst(t, lines, events.TypeProviderRequest, func(d events.ProviderRequest) (string, string) {
				if d.Response == nil || len(d.Response.ToolCalls) == 0 {
					return "", ""
				}
				a := d.Response.ToolCalls[0].Arguments
				return member("arguments", a), member("arguments", strings.Replace(a, "notes", "nutes", 1))
			}, 1)
		}},
	{"compaction-summary", "one byte of the first compaction's summary message changed: the next receipt, whose conversation opens with it, no longer chains to its conversation digest", "conversation_digest",
		func(t *testing.T, lines []eventLine) (change, string) {
			return alterFirst(t, lines, events.TypeTranscriptCompacted, func(d events.TranscriptCompacted) (string, string) {
				return member("summaryMessage", d.SummaryMessage), member("summaryMessage", flipLast(d.SummaryMessage))
			}, 1)
		}},
	{"assembly-digest", "one hex digit of the first receipt's assembly digest changed", "assembly_digest",
		func(t *testing.T, lines []eventLine) (change, string) {
			return alterFirst(t, lines, events.TypePromptAssembled, func(d events.PromptAssembled) (string, string) {
				return member("assemblyDigest", d.AssemblyDigest), member("assemblyDigest", flipHex(d.AssemblyDigest))
			}, 0)
		}},
	{"estimate", "one digit of the first receipt's estimatedInputTokens changed", "estimated_input_tokens",
		func(t *testing.T, lines []eventLine) (change, string) {
			return alterFirst(t, lines, events.TypePromptAssembled, func(d events.PromptAssembled) (string, string) {
				return member("estimatedInputTokens", d.EstimatedInputTokens), member("estimatedInputTokens", d.EstimatedInputTokens^1)
			}, 0)
		}},
	{"header-base", "one hex digit of the first header base's digest changed", "header_base",
		func(t *testing.T, lines []eventLine) (change, string) {
			return alterFirst(t, lines, events.TypePromptAssembled, func(d events.PromptAssembled) (string, string) {
				if d.HeaderBase == nil {
					return "", ""
				}
				return member("digest", d.HeaderBase.Digest), member("digest", flipHex(d.HeaderBase.Digest))
			}, 0)
		}},
}

// member is a JSON object member as encoding/json writes it, which is how the log stores it.
func member(key string, value any) string {
	k, _ := json.Marshal(key)
	v, _ := json.Marshal(value)
	return string(k) + ":" + string(v)
}

// alterFirst picks the change of the first session event of type P that pick accepts (it
// returns the member to replace and its replacement, "" to pass the event by), made in the
// stored bytes, and the id of the receipt that must then fail: that event itself (next 0) or
// the first receipt after it in its stream (next 1).
func alterFirst[P any](t *testing.T, lines []eventLine, typ string, pick func(P) (string, string), next int) (change, string) {
	t.Helper()
	for i, l := range lines {
		if l.Type != typ || !strings.HasPrefix(l.Stream, "session-") {
			continue
		}
		var data P
		if err := json.Unmarshal([]byte(l.Data), &data); err != nil {
			t.Fatal(err)
		}
		old, repl := pick(data)
		if old == "" {
			continue
		}
		c := change{EventID: l.EventID, Find: old, Replace: repl}
		if next == 0 {
			return c, l.EventID
		}
		for _, later := range lines[i+1:] {
			if later.Stream == l.Stream && later.Type == events.TypePromptAssembled {
				return c, later.EventID
			}
		}
		t.Fatalf("no receipt follows %s", l.EventID)
	}
	t.Fatalf("no %s event to alter", typ)
	return change{}, ""
}

// flipLast changes the last ASCII letter of s to another ('x', or 'y' for an 'x'): one byte,
// which encodes the same length in JSON.
func flipLast(s string) string {
	b := []byte(s)
	for i := len(b) - 1; i >= 0; i-- {
		if c := b[i] | 0x20; c >= 'a' && c <= 'z' {
			if b[i] == 'x' {
				b[i] = 'y'
			} else {
				b[i] = 'x'
			}
			return string(b)
		}
	}
	panic("no letter to change in " + s)
}

func flipHex(s string) string {
	b := []byte(s)
	if b[0] == '0' {
		b[0] = '1'
	} else {
		b[0] = '0'
	}
	return string(b)
}

// TestReceiptVerifierAgrees alters session.json at random bytes (one ASCII byte of one
// session event's data, 60 times, from a fixed seed) and checks that the independent
// verifier and Zuno's code agree on each: both accept it, or both fail at the same receipt,
// with a mismatch code Zuno's error names.
func TestReceiptVerifierAgrees(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("SKIP: python3 is not installed; the independent receipt verifier (docs/verifier) is not run")
	}
	if testing.Short() {
		t.Skip("SKIP: -short: 60 alterations checked by both verifiers take about 40 s")
	}
	var session vectorFile
	readJSON(t, filepath.Join(vectorsDir, "session.json"), &session)
	rng := rand.New(rand.NewPCG(31, 5))
	type alteredEvent struct {
		EventID string `json:"eventId"`
		Data    string `json:"data"`
	}
	var cases []alteredEvent
	var goResults []*failure
	const alnum = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	for len(cases) < 60 {
		l := session.Events[rng.IntN(len(session.Events))]
		if !strings.HasPrefix(l.Stream, "session-") {
			continue
		}
		// Half the bytes are any printable byte, which mostly breaks the JSON; half are a
		// letter or digit of a receipt changed to another, which keeps it JSON and reaches
		// the digests, blobs, sizes and ids.
		inReceipt := len(cases)%2 == 1
		if inReceipt && l.Type != events.TypePromptAssembled {
			continue
		}
		i := rng.IntN(len(l.Data))
		b := byte(0x20 + rng.IntN(0x5f))
		if inReceipt {
			b = alnum[rng.IntN(len(alnum))]
			if !strings.ContainsRune(alnum, rune(l.Data[i])) {
				continue
			}
		}
		if l.Data[i] >= 0x80 || l.Data[i] == b {
			continue
		}
		data := l.Data[:i] + string(b) + l.Data[i+1:]
		c := change{EventID: l.EventID, Find: l.Data, Replace: data}
		_, fail := goReceipts(t, c.apply(t, session.Events))
		cases = append(cases, alteredEvent{l.EventID, data})
		goResults = append(goResults, fail)
	}
	input, err := json.Marshal(map[string]any{"events": session.Events, "cases": cases})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", `
import json, sys
import receipts
req = json.load(sys.stdin)
out = []
for c in req["cases"]:
    events = [dict(e, data=c["data"]) if e["eventId"] == c["eventId"] else e for e in req["events"]]
    out.append(receipts.check_session(events))
json.dump(out, sys.stdout)
`)
	cmd.Dir = "../../docs/verifier"
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	cmd.Stdin = strings.NewReader(string(input))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var pyResults [][]string
	if err := json.Unmarshal(out, &pyResults); err != nil {
		t.Fatalf("python3 answered %q: %v", out, err)
	}
	failed, codes := 0, map[string]int{}
	for i, c := range cases {
		g, p := goResults[i], pyResults[i]
		switch {
		case g == nil && p == nil:
		case g != nil && p != nil && g.EventID == p[0] && strings.Contains(g.Code, strings.SplitN(p[1], ":", 2)[0]):
			failed++
			codes[strings.SplitN(p[1], ":", 2)[0]]++
		default:
			t.Errorf("event %s altered to %q:\n  Go:     %+v\n  Python: %q", c.EventID, c.Data, g, p)
		}
	}
	t.Logf("%d alterations: %d fail in both %v, %d pass in both (bytes no receipt depends on)", len(cases), failed, codes, len(cases)-failed)
}

// encodingCase is one message of the encoding vector: each string field as the hex of its
// bytes (so that bytes which are not UTF-8 survive the JSON file), the canonical blob Zuno
// records for it and its part (docs/formats/receipts.md §3, §4).
type encodingCase struct {
	Name       string              `json:"name"`
	Role       string              `json:"role"`
	TextHex    string              `json:"textHex,omitempty"`
	ToolCallID string              `json:"toolCallId,omitempty"`
	IsError    bool                `json:"isError,omitempty"`
	ToolCalls  []map[string]string `json:"toolCallsHex,omitempty"`
	Reasoning  []map[string]string `json:"reasoningHex,omitempty"`
	Blob       string              `json:"blob"`
	Part       events.PromptPart   `json:"part"`
}

// encodingMessages are messages the session vector does not hold: reasoning items, provider
// call ids, every kind of escape, and bytes that are not UTF-8.
var encodingMessages = []struct {
	name string
	m    model.Message
}{
	{"html and separators", model.Message{Role: model.RoleUser, Text: "<a href=\"x\">&amp;</a>\u2028\u2029 done"}},
	{"control characters", model.Message{Role: model.RoleUser, Text: "\x00\x01\b\f\n\r\t\x1f\x7f\\\"end"}},
	{"non-ASCII", model.Message{Role: model.RoleUser, Text: "ü é 中文 😀 \ufeff"}},
	{"invalid UTF-8", model.Message{Role: model.RoleUser, Text: "a\xffb\xe4\xb8c\xed\xa0\x80d\xc0\xaf"}},
	{"assistant with calls and reasoning", model.Message{Role: model.RoleAssistant, Text: "Let me look.",
		ToolCalls: []model.ToolCall{{ID: "call_1", ProviderID: "toolu_01", Name: "read", Arguments: `{"path":"a<b>.go"}`},
			{ID: "call_2", Name: "shell", Arguments: "not json \xff"}},
		Reasoning: []model.Reasoning{{ID: "rs_1", Summary: "thinking & planning", EncryptedContent: "gAAAA=="}, {ID: "rs_2"}}}},
	{"tool result, error", model.Message{Role: model.RoleTool, ToolCallID: "call_2", Text: "exit 1\n", IsError: true}},
	{"tool result, empty", model.Message{Role: model.RoleTool, ToolCallID: "call_1"}},
	{"developer instruction", model.Message{Role: model.RoleDeveloper, Text: "Stop & summarise."}},
}

func hexFields(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if v != "" {
			out[k] = hex.EncodeToString([]byte(v))
		}
	}
	return out
}

func encodingCases(t *testing.T) []encodingCase {
	t.Helper()
	var out []encodingCase
	for _, c := range encodingMessages {
		logged, err := prompt.LoggedMessages([]model.Message{c.m})
		if err != nil {
			t.Fatal(err)
		}
		e := encodingCase{Name: c.name, Role: string(c.m.Role), TextHex: hex.EncodeToString([]byte(c.m.Text)),
			ToolCallID: c.m.ToolCallID, IsError: c.m.IsError, Part: logged.Parts[0], Blob: logged.Blobs[logged.Parts[0].SHA256]}
		for _, tc := range c.m.ToolCalls {
			e.ToolCalls = append(e.ToolCalls, hexFields(map[string]string{"id": tc.ID, "providerId": tc.ProviderID, "name": tc.Name, "arguments": tc.Arguments}))
		}
		for _, r := range c.m.Reasoning {
			e.Reasoning = append(e.Reasoning, hexFields(map[string]string{"id": r.ID, "summary": r.Summary, "encryptedContent": r.EncryptedContent}))
		}
		out = append(out, e)
	}
	return out
}

// TestReceiptEncodingVector: encoding.json holds the canonical blob and part of each
// message above as Zuno records it; -update rewrites it.
func TestReceiptEncodingVector(t *testing.T) {
	path := filepath.Join(vectorsDir, "encoding.json")
	got := encodingCases(t)
	if *update {
		b, err := json.MarshalIndent(map[string]any{"format": "zuno receipts v1", "description": "conversation messages, " +
			"their string fields as the hex of their bytes, with the canonical blob and the part a receipt lists for each", "messages": got}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var want struct {
		Messages []encodingCase `json:"messages"`
	}
	readJSON(t, path, &want)
	if !reflect.DeepEqual(got, want.Messages) {
		t.Fatalf("the Go code encodes the messages otherwise than encoding.json says:\n got %+v\nwant %+v", got, want.Messages)
	}
}
