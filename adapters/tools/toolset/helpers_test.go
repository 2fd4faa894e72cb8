package toolset

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
)

const testSession = "session-test"

// newSet builds a Set over a fresh workspace; the artifact directory is a sibling that does
// not exist yet (it must be created on demand).
func newSet(t testing.TB, mut ...func(*Config)) (*Set, string) {
	t.Helper()
	root := t.TempDir()
	cfg := Config{Root: root, ArtifactDir: filepath.Join(t.TempDir(), "artifacts"), SessionID: testSession}
	for _, m := range mut {
		m(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, root
}

func toolNamed(t testing.TB, s *Set, name string) Tool {
	t.Helper()
	for _, tl := range s.Tools() {
		if tl.Declaration().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

var callSeq atomic.Int64

// call validates and executes one call with a fresh call id, as the driver would.
func call(t testing.TB, s *Set, name, args string) tools.Result {
	t.Helper()
	return callID(t, s, name, fmt.Sprintf("call-%d", callSeq.Add(1)), args)
}

func callID(t testing.TB, s *Set, name, id, args string) tools.Result {
	t.Helper()
	return callCtx(context.Background(), t, s, name, id, args)
}

func callCtx(ctx context.Context, t testing.TB, s *Set, name, id, args string) tools.Result {
	t.Helper()
	tl := toolNamed(t, s, name)
	parsed, err := tl.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s %s: Validate: %v", name, args, err)
	}
	r := tl.Execute(ctx, tools.Invocation{SessionID: testSession, CallID: id, Parsed: parsed})
	if !r.Outcome.Valid() {
		t.Fatalf("%s: invalid outcome %q", name, r.Outcome)
	}
	return r
}

// args renders a JSON object from key/value pairs.
func args(kv ...any) string {
	m := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func want(t testing.TB, r tools.Result, outcome tools.Outcome, code string) {
	t.Helper()
	if r.Outcome != outcome || r.ErrorCode != code {
		t.Fatalf("got %s/%q, want %s/%q; output:\n%s", r.Outcome, r.ErrorCode, outcome, code, r.Output)
	}
}

func put(t testing.TB, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func get(t testing.TB, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// facts decodes a result's Details.
func facts(t testing.TB, r tools.Result) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Metadata.Details, &m); err != nil {
		t.Fatalf("details %q: %v", r.Metadata.Details, err)
	}
	return m
}
