package console_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/zuno-run/zuno/adapters/provider/scripted"
	"github.com/zuno-run/zuno/commands/app"
)

// BenchmarkTimeline: one request for a session's timeline page, whose turn made 100 read
// calls, against the API's GET /api/sessions/{id} in the same run (the baseline: it folds
// the same stream into the session and its turns, and writes JSON); and the receipt page of
// its last step against the API's GET .../prompt (the same query, as JSON). Each is a real request over loopback to the real server.
func BenchmarkTimeline(b *testing.B) {
	f := newFixture(b, options{})
	if err := os.WriteFile(filepath.Join(f.workspace, "notes.txt"), []byte("the notes\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	var calls []scripted.Turn
	for i := range 100 {
		calls = append(calls, scripted.Turn{ToolCalls: []scripted.ToolCall{{ID: fmt.Sprintf("r%d", i), Name: "read",
			Arguments: json.RawMessage(`{"path":"notes.txt"}`)}}})
	}
	res := f.run(app.RunTurn{Meta: meta("bench"), Prompt: "read a lot", Model: f.script("bench", scripted.Script{Turns: append(calls, scripted.Turn{Text: "done"})})})
	for _, bc := range []struct{ name, path string }{
		{"api-session-json", "/api/sessions/" + res.SessionID},
		{"console-timeline", "/console/sessions/" + res.SessionID},
		{"api-prompt-json", "/api/sessions/" + res.SessionID + "/prompt"},
		{"console-prompt-receipt", "/console/sessions/" + res.SessionID + "/prompt"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var bytes int64
			for b.Loop() {
				r, err := http.Get(f.base + bc.path)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, r.Body)
				r.Body.Close()
				if r.StatusCode != 200 {
					b.Fatalf("%s: %d", bc.path, r.StatusCode)
				}
				bytes = n
			}
			b.ReportMetric(float64(bytes), "bytes/page")
		})
	}
}
