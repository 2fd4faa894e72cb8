package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/commands"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/commands/bundle"
)

// testBundleKey is a fixed anchor key, so the committed test vector's signature is stable in
// what it proves (the key) though not in its bytes.
var testBundleKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{'a'}, 32))

// delegationBundleScript is an orchestrator that delegates one foreground task to an explorer
// child, which reads a file and answers, and then answers itself.
const delegationBundleScript = `{"turns": [
  {"text": "One lane.", "toolCalls": [
    {"id": "call_a", "name": "task", "arguments": {"agent": "explorer", "objective": "lane A: read the notes", "deliverable": "a report", "instructions": "read only", "success_evidence": "the text"}}]},
  {"text": "Integrated the lane."}
],
"sessions": [
  {"when": "lane A", "turns": [
    {"toolCalls": [{"id": "r1", "name": "read", "arguments": {"path": "notes.txt"}}]},
    {"text": "The notes say <hi> & \u2028 bye."}]}
]}`

// bundleLog opens a real runtime over store ("sqlite" or "postgres") in a fresh directory and
// runs a delegating turn in it; it returns the runtime and the parent session.
func bundleLog(t *testing.T, store string) (*app, string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("ZUNO_DB", filepath.Join(dir, "zuno.db"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, ".config"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Setenv("ZUNO_CONFIG", filepath.Join(dir, "none.json"))
	t.Setenv("ZUNO_EVENTSTORE_URL", "")
	if store == "postgres" {
		t.Setenv("ZUNO_EVENTSTORE_URL", pgtest.NewDatabase(t))
	}
	ws := filepath.Join(dir, "ws")
	script := filepath.Join(dir, "deleg.json")
	for path, body := range map[string]string{filepath.Join(dir, "none.json"): "{}", filepath.Join(ws, "notes.txt"): "the notes\n",
		script: delegationBundleScript} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	a, err := openApp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	sid, err := runTurn(ctx, io.Discard, a, runOptions{Prompt: "one lane", Model: "scripted:" + script, Agent: "orchestrator", Dir: ws,
		Quiet: true, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	return a, sid
}

func exportBundle(t *testing.T, a *app, r zapp.ExportBundle) ([]byte, zapp.BundleSummary) {
	t.Helper()
	if r.Now.IsZero() {
		r.Now = time.Now()
	}
	var buf bytes.Buffer
	sum, err := a.Commands.ExportBundle(context.Background(), r, &buf)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), sum
}

// The bundle of a delegating session, on SQLite and on Postgres (whose JSON column keeps the
// metadata text the append function wrote): every stream of the parent and, with children,
// of the child verifies; a trusted key must be the signer's.
func TestBundleExportVerifies(t *testing.T) {
	for _, store := range []string{"sqlite", "postgres"} {
		t.Run(store, func(t *testing.T) {
			a, sid := bundleLog(t, store)
			data, sum := exportBundle(t, a, zapp.ExportBundle{Session: sid, Key: testBundleKey})
			res := bundle.Verify(data, bundle.Options{TrustedKey: testBundleKey.Public().(ed25519.PublicKey)})
			if !res.Valid || !res.Signed || res.Events != sum.Events || len(sum.Sessions) != 1 {
				t.Fatalf("parent alone: %+v (summary %+v)", res, sum)
			}
			full, sum := exportBundle(t, a, zapp.ExportBundle{Session: sid, WithChildren: true, Key: testBundleKey})
			if res := bundle.Verify(full, bundle.Options{}); !res.Valid || len(sum.Sessions) != 2 || res.Events <= len(bytes.Split(data, []byte("\n")))-3 {
				t.Fatalf("with children: %+v (summary %+v)", res, sum)
			}
			child := sum.Sessions[1]
			for _, stream := range []string{commands.SessionStream(sid), commands.JobStream(sid), commands.SessionStream(child)} {
				if !bytes.Contains(full, []byte(`"stream":"`+stream+`"`)) {
					t.Errorf("the bundle holds no event of %s", stream)
				}
			}
			other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{'b'}, 32))
			if res := bundle.Verify(full, bundle.Options{TrustedKey: other.Public().(ed25519.PublicKey)}); res.Valid || res.Code() != bundle.ReasonSignatureKey {
				t.Fatalf("another trusted key: %+v", res)
			}
			unsigned, _ := exportBundle(t, a, zapp.ExportBundle{Session: sid})
			if res := bundle.Verify(unsigned, bundle.Options{RequireSignature: true}); res.Valid || res.Code() != bundle.ReasonSignatureMissing {
				t.Fatalf("unsigned, signature required: %+v", res)
			}
			if _, err := a.Commands.ExportBundle(context.Background(), zapp.ExportBundle{Session: "ses_nope"}, io.Discard); err == nil {
				t.Fatal("a session without events was exported")
			}
		})
	}
}

// A fork's bundle holds its source's streams: the fork's history is theirs.
func TestBundleOfForkHoldsItsSource(t *testing.T) {
	a, sid := bundleLog(t, "sqlite")
	ctx := context.Background()
	res, err := a.Commands.ForkSession(ctx, commands.Meta{CommandID: "fork-1", Actor: "user"}, "1", "ses_fork", "forked")
	if err == nil {
		err = res.Err()
	}
	if err != nil {
		t.Fatal(err)
	}
	data, sum := exportBundle(t, a, zapp.ExportBundle{Session: "ses_fork"})
	if len(sum.Sessions) != 2 || sum.Sessions[1] != sid || !bytes.Contains(data, []byte(`"stream":"session-`+sid+`"`)) {
		t.Fatalf("sessions %v", sum.Sessions)
	}
	if res := bundle.Verify(data, bundle.Options{}); !res.Valid {
		t.Fatalf("%+v", res)
	}
}

// lineOf is the 1-based line holding byte i.
func lineOf(data []byte, i int) int { return bytes.Count(data[:i], []byte("\n")) + 1 }

// Every byte of a small real bundle, changed, fails verification at the line holding it, or at
// the seal for a change that leaves its line well formed and chained (a position, the
// header's time, an escape spelled otherwise).
func TestBundleAlteredAtEveryByteFails(t *testing.T) {
	a, _ := bundleLog(t, "sqlite")
	ctx := context.Background()
	if _, err := a.Commands.CreateSession(ctx, commands.Meta{CommandID: "small", Actor: "user"}, zapp.NewSession{SessionID: "ses_small", Title: "t<i>tle", Agent: "build"}); err != nil {
		t.Fatal(err)
	}
	data, _ := exportBundle(t, a, zapp.ExportBundle{Session: "ses_small", Key: testBundleKey})
	seal := bytes.Count(data, []byte("\n"))
	if len(data) < 300 {
		t.Fatalf("the bundle has %d bytes: too few offsets to alter", len(data))
	}
	own := 0
	for i := range data {
		altered := bytes.Clone(data)
		altered[i] ^= 0x01
		res := bundle.Verify(altered, bundle.Options{})
		at := lineOf(data, i)
		switch {
		case res.Valid:
			t.Fatalf("byte %d (line %d) changed, the bundle still verifies", i, at)
		case res.Line != at && res.Line != seal:
			t.Fatalf("byte %d changed: failed at line %d (%s), not its line %d or the seal's %d", i, res.Line, res.Reason, at, seal)
		case res.Line == at:
			own++
		}
	}
	if own < len(data)*9/10 {
		t.Fatalf("only %d of %d changes were named at their own line", own, len(data))
	}
}

// bundlePython is the independent verifier, beside the specification.
var bundlePython = filepath.Join("..", "..", "docs", "verifier", "zuno_verify.py")

// The agreement test of docs/formats.md: one real bundle and 99 copies each changed at one
// random byte (to a random other value, fixed seed), checked by zuno verify --bundle's function
// and by the Python verifier, which must say the same of each: valid or not, and the line.
func TestBundleVerifiersAgree(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the independent verifier cannot run (Debian package python3)")
	}
	a, sid := bundleLog(t, "sqlite")
	data, _ := exportBundle(t, a, zapp.ExportBundle{Session: sid, WithChildren: true, Key: testBundleKey})
	rng := rand.New(rand.NewPCG(31, 4))
	dir := t.TempDir()
	pub := testBundleKey.Public().(ed25519.PublicKey)
	var paths []string
	var goRes []bundle.Result
	for n := range 100 {
		altered := bytes.Clone(data)
		if n > 0 {
			i := rng.IntN(len(altered))
			altered[i] ^= byte(1 + rng.IntN(255))
		}
		path := filepath.Join(dir, fmt.Sprintf("b%03d.jsonl", n))
		if err := os.WriteFile(path, altered, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
		goRes = append(goRes, bundle.Verify(altered, bundle.Options{TrustedKey: pub}))
	}
	// One process checks all 100 (the verifier takes several files, one verdict a line).
	args := append([]string{bundlePython, "--public-key", base64.StdEncoding.EncodeToString(pub)}, paths...)
	out, err := exec.Command(python, args...).Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("python: %v", err)
	}
	verdicts := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(verdicts) != len(paths) {
		t.Fatalf("python printed %d verdicts for %d bundles:\n%s", len(verdicts), len(paths), out)
	}
	for n, line := range verdicts {
		var py struct {
			Valid  bool   `json:"valid"`
			Line   int    `json:"line"`
			Reason string `json:"reason"`
			File   string `json:"file"`
		}
		if err := json.Unmarshal([]byte(line), &py); err != nil || py.File != paths[n] {
			t.Fatalf("bundle %d: python printed %q", n, line)
		}
		g := goRes[n]
		if py.Valid != g.Valid || py.Line != g.Line {
			t.Errorf("bundle %d: Go says valid=%v line %d (%s); Python says valid=%v line %d (%s)", n, g.Valid, g.Line, g.Reason, py.Valid, py.Line, py.Reason)
		}
		if (n == 0) != g.Valid {
			t.Errorf("bundle %d: valid=%v (%s); only the unaltered bundle 0 verifies", n, g.Valid, g.Reason)
		}
	}
	if err == nil {
		t.Fatal("python exited 0 though 99 bundles do not verify")
	}
}

var updateVectors = flag.Bool("update-vectors", false, "rewrite docs/formats/vectors from a real session")

// vectorVerdict is what a test vector must give.
type vectorVerdict struct {
	File  string `json:"file"`
	Valid bool   `json:"valid"`
	Line  int    `json:"line"`
	Code  string `json:"code,omitempty"`
}

// The test vectors of docs/formats.md: a real session's bundle signed with the test key, and
// the same bundle with one byte of its first message changed. With -update-vectors they are
// made anew; otherwise each must still give the verdict expected.json records.
func TestBundleVectors(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "formats", "vectors")
	if *updateVectors {
		writeVectors(t, dir)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatalf("%v (make the vectors with go test ./cmd/zuno -run TestBundleVectors -update-vectors)", err)
	}
	var want []vectorVerdict
	if err := json.Unmarshal(raw, &want); err != nil || len(want) != 2 {
		t.Fatalf("expected.json: %d verdicts, %v", len(want), err)
	}
	pub, err := os.ReadFile(filepath.Join(dir, "bundle.public-key"))
	if err != nil || strings.TrimSpace(string(pub)) != base64.StdEncoding.EncodeToString(testBundleKey.Public().(ed25519.PublicKey)) {
		t.Fatalf("bundle.public-key is not the test key's: %q, %v", pub, err)
	}
	for _, w := range want {
		data, err := os.ReadFile(filepath.Join(dir, w.File))
		if err != nil {
			t.Fatal(err)
		}
		res := bundle.Verify(data, bundle.Options{TrustedKey: testBundleKey.Public().(ed25519.PublicKey)})
		if res.Valid != w.Valid || res.Line != w.Line || (!w.Valid && res.Code() != w.Code) {
			t.Errorf("%s: %+v, want %+v", w.File, res, w)
		}
	}
}

func writeVectors(t *testing.T, dir string) {
	a, _ := bundleLog(t, "sqlite")
	ctx := context.Background()
	if _, err := a.Commands.CreateSession(ctx, commands.Meta{CommandID: "vector", Actor: "user"}, zapp.NewSession{SessionID: "ses_vector", Title: "vector", Agent: "build"}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commands.AppendMessage(ctx, commands.Meta{CommandID: "vector-msg", Actor: "user"}, "ses_vector", "msg_vector", "hello <world> & é"); err != nil {
		t.Fatal(err)
	}
	data, _ := exportBundle(t, a, zapp.ExportBundle{Session: "ses_vector", Key: testBundleKey})
	altered := bytes.Replace(data, []byte("hello"), []byte("jello"), 1)
	verdicts := []vectorVerdict{{File: "bundle.jsonl", Valid: true}, {File: "bundle-altered.jsonl", Line: 3, Code: bundle.ReasonChainAltered}}
	expected, _ := json.MarshalIndent(verdicts, "", "  ")
	pub := base64.StdEncoding.EncodeToString(testBundleKey.Public().(ed25519.PublicKey))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string][]byte{"bundle.jsonl": data, "bundle-altered.jsonl": altered,
		"expected.json": append(expected, '\n'), "bundle.public-key": []byte(pub + "\n")} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The Python verifier hands the event records to receipts.py's check_session, when that module
// is beside it, after the chains verify and before the seal; a receipt it refuses fails the
// bundle at that event's line.
func TestPythonVerifierCallsReceiptChecks(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: the independent verifier cannot run (Debian package python3)")
	}
	dir := t.TempDir()
	src, err := os.ReadFile(bundlePython)
	if err != nil {
		t.Fatal(err)
	}
	hook := `def check_session(events):
    for e in events:
        if e["kind"] == "event" and e["type"] == "session.user_message.appended.1" and e["revision"] == 1:
            return (e["eventId"], "receipt_mismatch: refused by the test's module")
    return None
`
	for name, body := range map[string][]byte{"zuno_verify.py": src, "receipts.py": []byte(hook)} {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vector := filepath.Join("..", "..", "docs", "formats", "vectors", "bundle.jsonl")
	out, err := exec.Command(python, filepath.Join(dir, "zuno_verify.py"), vector).Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, output %s", err, out)
	}
	if !regexp.MustCompile(`^\{"valid": false, "line": 3, "eventId": "[0-9a-f-]+", "stream": "session-ses_vector", "revision": 1, "reason": "receipt_mismatch: refused by the test's module"\}\n$`).Match(out) {
		t.Fatalf("verdict %s", out)
	}
}
