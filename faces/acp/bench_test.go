package acp_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// stepsScript is a turn of ten tool steps (a read each) and an answer: eleven provider
// requests, ten steps between them.
var stepsScript = func() string {
	var turns []string
	for i := range 10 {
		turns = append(turns, fmt.Sprintf(`{"toolCalls": [{"id": "r%d", "name": "read", "arguments": {"path": "notes.txt"}}]}`, i))
	}
	return `{"turns": [` + strings.Join(append(turns, `{"text": "Read it ten times."}`), ",") + `]}`
}()

// BenchmarkStepOverheadACP is the step overhead of a turn driven over ACP against the same
// turn through zuno run, in the same run: each iteration runs the turn once each way,
// interleaved, on one store, so both see the machine's load alike. A step is
// BenchmarkStepOverhead's (commands/turn): from one provider request's start to the next's
// within a turn, read from the log (the metadata.time of each session.provider.request.1
// started). zuno run is one process per turn, as a person runs it; zuno acp is one process
// for every turn, as an editor keeps it, each turn a new session. Reported: the median step
// of each (µs/step-run, µs/step-acp), their p90, and acp/run, the ratio of the medians (the
// target is at most 1.1).
func BenchmarkStepOverheadACP(b *testing.B) {
	notes := map[string]string{"notes.txt": strings.Repeat("a line of notes\n", 40)}
	b.Run("store=sqlite", func(b *testing.B) { stepOverhead(b, newWorld(b, stepsScript, "", notes)) })
	b.Run("store=postgres", func(b *testing.B) { stepOverhead(b, newWorld(b, stepsScript, "", notes).onPostgres()) })
}

func stepOverhead(b *testing.B, w *world) {
	p := w.acp()
	initialize(p)
	var runSessions, acpSessions []string
	id := 100
	for i := 0; b.Loop(); i++ {
		out := w.run("run", "--format", "json", "read the notes")
		var first struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal([]byte(out[:strings.IndexByte(out, '\n')]), &first)
		runSessions = append(runSessions, first.SessionID)

		sid := newSession(p, id, w.dir)
		resp, _ := p.call(id+1, "session/prompt", map[string]any{"sessionId": sid,
			"prompt": []any{map[string]any{"type": "text", "text": "read the notes"}}})
		if r, _ := resp["result"].(map[string]any); r["stopReason"] != "end_turn" {
			b.Fatalf("prompt: %v", resp)
		}
		acpSessions = append(acpSessions, sid)
		id += 2
	}
	b.StopTimer()
	steps := w.steps()
	runSteps, acpSteps := pool(steps, runSessions), pool(steps, acpSessions)
	if len(runSteps) == 0 || len(acpSteps) == 0 {
		b.Fatalf("no steps read: run %d, acp %d", len(runSteps), len(acpSteps))
	}
	run50, acp50 := quantile(runSteps, 0.5), quantile(acpSteps, 0.5)
	b.ReportMetric(run50, "µs/step-run")
	b.ReportMetric(acp50, "µs/step-acp")
	b.ReportMetric(quantile(runSteps, 0.9), "µs-p90/step-run")
	b.ReportMetric(quantile(acpSteps, 0.9), "µs-p90/step-acp")
	b.ReportMetric(acp50/run50, "acp/run")
}

// steps reads every session's step times from the log, in µs, by session.
func (w *world) steps() map[string][]float64 {
	starts := map[string][]time.Time{}
	for _, line := range strings.Split(strings.TrimSpace(w.run("events", "read", "--format", "json")), "\n") {
		var e struct {
			Type string `json:"type"`
			Data struct {
				SessionID string `json:"sessionId"`
				Status    string `json:"status"`
			} `json:"data"`
			Stream   string `json:"stream"`
			Metadata struct {
				Time time.Time `json:"time"`
			} `json:"metadata"`
		}
		if json.Unmarshal([]byte(line), &e) != nil || e.Type != "session.provider.request.1" || e.Data.Status != "started" {
			continue
		}
		sid := strings.TrimPrefix(e.Stream, "session-")
		starts[sid] = append(starts[sid], e.Metadata.Time)
	}
	out := map[string][]float64{}
	for sid, ts := range starts {
		for i := 1; i < len(ts); i++ {
			out[sid] = append(out[sid], float64(ts[i].Sub(ts[i-1]).Microseconds()))
		}
	}
	return out
}

func pool(steps map[string][]float64, sessions []string) []float64 {
	var all []float64
	for _, s := range sessions {
		all = append(all, steps[s]...)
	}
	return all
}

func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}
