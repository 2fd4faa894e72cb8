package turn_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/provider/replay"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

var updateGolden = flag.Bool("update", false, "rewrite the recorded sessions in testdata/golden")

type fixedClock struct{}

func (fixedClock) Now() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }

// The caches that keep a step's cost flat (the prompt History, the receipt's shared prefix,
// the adapters' conversation threads) must not change what is recorded: a 20-step session
// through each adapter, with fixed ids and clock, records exactly the events in
// testdata/golden, which were recorded before those caches existed (and recorded again once,
// deliberately, when receipts began leaving out the transcript's messages: only those parts
// and their blobs changed, docs/storage.md "Bytes per step"; the members the envelope implies
// are put back, as replay compares them; and once more when OpenAI requests began carrying
// the session's prompt_cache_key: only each request's mapping, body digest and size changed,
// docs/providers.md "Prompt caching"). Durations (wall time) and the
// local server's port are the only fields blanked.
func TestRecordedSessionIsUnchanged(t *testing.T) {
	for _, tc := range wireCases(t)[:2] { // the Chat Completions adapter, in both dialects
		t.Run(tc.name, func(t *testing.T) {
			got := recordedSession(t, tc)
			name := filepath.Join("testdata", "golden", strings.NewReplacer(" ", "_", ",", "").Replace(tc.name)+".jsonl")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(name, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
				for i := range min(len(g), len(w)) {
					if g[i] != w[i] {
						t.Fatalf("event %d differs:\ngot  %s\nwant %s", i, g[i], w[i])
					}
				}
				t.Fatalf("%d events recorded, %d in %s", len(g), len(w), name)
			}
		})
	}
}

var (
	durationField = regexp.MustCompile(`,"durationMs":\d+`)
	localServer   = regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
)

// recordedSession runs tc's session with deterministic ids and clock and returns its events,
// one line each: type, then data.
func recordedSession(t *testing.T, tc wireCase) []byte {
	t.Helper()
	files := make([]string, len(tc.files))
	for i, f := range tc.files {
		files[i] = wireFile(f)
	}
	h := newHarness(t)
	n := 0
	h.driver.NewID = func() string { n++; return fmt.Sprintf("id_%04d", n) }
	h.driver.Clock = fixedClock{}
	h.driver.Jitter = func() float64 { return 0 }
	h.driver.Sleep = func(context.Context, time.Duration) error { return nil }
	srv := httptest.NewServer(replay.NewSequence(files...))
	t.Cleanup(srv.Close)
	look := &probeTool{name: "look", policy: tools.Policy{SideEffect: tools.ReadOnly, Replay: tools.Safe, Concurrency: tools.ParallelSafe}}
	a := buildAgent("look")
	a.Steps = 19
	out, err := h.driver.Run(context.Background(), turn.Request{Meta: commands.Meta{CommandID: "cmd_golden", Actor: "user"}, SessionID: h.session,
		Text: "go", Agent: a, Provider: tc.open(srv.URL), ProviderName: "wire", Model: model.ModelInfo{ID: "qwen3:8b"}, Tools: []turn.Tool{look},
		MaxTokens: tc.maxTokens, Retry: model.RetryPolicy{Retries: 1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}})
	if err != nil || out.Reason != events.FinishStepLimit {
		t.Fatalf("outcome %+v %v", out, err)
	}
	recs, err := h.store.ReadStream(context.Background(), commands.SessionStream(h.session), 0, 100000)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, r := range recs {
		p, err := h.registry.Decode(r)
		if err != nil {
			t.Fatal(err)
		}
		// What the event says: the members the stored data leaves out as implied (recorded
		// here before they were) put back where they were.
		data := durationField.ReplaceAll(events.RestoreImplied(r, p), nil)
		data = localServer.ReplaceAll(data, []byte("http://local"))
		fmt.Fprintf(&b, "%s %s\n", r.Type, data)
	}
	return b.Bytes()
}
