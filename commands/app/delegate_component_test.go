package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/provider/scripted"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/events"
)

// delegationScript is a parent (orchestrator) that sends children background task calls in
// one response, ends its turn, and answers each delivered report; each child reads a file
// steps-1 times and answers.
func delegationScript(t testing.TB, children, steps int) []byte {
	var calls []scripted.ToolCall
	var sessions []scripted.Session
	for i := range children {
		lane := fmt.Sprintf("Lane %02d", i)
		args, _ := json.Marshal(map[string]any{"agent": "explorer", "objective": lane + ": read the notes", "deliverable": "what they say",
			"instructions": "read only", "success_evidence": "the text", "background": true})
		calls = append(calls, scripted.ToolCall{ID: fmt.Sprintf("t%d", i), Name: "task", Arguments: args})
		var turns []scripted.Turn
		for s := range steps - 1 {
			turns = append(turns, scripted.Turn{ToolCalls: []scripted.ToolCall{{ID: fmt.Sprintf("r%d", s), Name: "read",
				Arguments: json.RawMessage(`{"path":"notes.txt"}`)}}})
		}
		sessions = append(sessions, scripted.Session{When: lane, Turns: append(turns, scripted.Turn{Text: lane + " done."})})
	}
	parent := []scripted.Turn{{ToolCalls: calls}, {Text: "Delegated."}}
	for range children {
		parent = append(parent, scripted.Turn{Text: "Noted."})
	}
	data, err := json.Marshal(scripted.Script{Turns: parent, Sessions: sessions})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A parent's background children run, settle with reports, and each report is delivered to
// the parent once, through the Application alone (seeds 002 §7.1).
func TestComponentDelegation(t *testing.T) {
	c := newComponent(t)
	ctx := context.Background()
	c.file("notes.txt", "the notes\n")
	spec := c.script("parent", string(delegationScript(t, 3, 2)))
	res := c.run(t, app.RunTurn{Meta: meta("deleg-1"), Prompt: "three lanes", Model: spec, Agent: "orchestrator"})
	if _, err := c.app.Commands.SettleJobs(ctx); err != nil {
		t.Fatal(err)
	}
	l, _, err := commands.LoadJobs(ctx, c.store, events.NewRegistry(events.AllPayloads()...), res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	jobs := l.Jobs()
	if len(jobs) != 3 {
		t.Fatalf("%d jobs", len(jobs))
	}
	for _, jb := range jobs {
		if jb.Status != events.JobCompleted || !jb.ReportConsumed || jb.Result == nil || !strings.HasSuffix(jb.Result.FinalText, "done.") {
			t.Errorf("job %s: %s consumed %v result %+v", jb.JobID, jb.Status, jb.ReportConsumed, jb.Result)
		}
	}
	info, err := c.app.Queries.Session(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Turns) != 4 { // the first, and one per report
		t.Fatalf("parent turns: %+v", info.Turns)
	}
}

// BenchmarkDelegation: the runtime's own time per step of a parent with 8 background
// children of 20 scripted steps each, beside one agent's 20-step turn in the same run. The
// process's CPU time (user + system) per step is the runtime's own: the scripted provider and
// the read tool cost next to nothing, and wall time on 2 CPUs would credit the children's
// parallelism instead.
func BenchmarkDelegation(b *testing.B) {
	const steps = 20
	for _, bc := range []struct {
		name     string
		children int
	}{{"single", 0}, {"parent+8", 8}} {
		b.Run(bc.name, func(b *testing.B) {
			var cpu time.Duration
			total := 0
			for i := range b.N {
				b.StopTimer()
				c := newComponent(b)
				c.file("notes.txt", "the notes\n")
				in := app.RunTurn{Meta: meta(fmt.Sprintf("bench-%d", i)), Prompt: "work", Cwd: c.workspace}
				var n int
				if bc.children == 0 {
					in.Model, n = c.script("single", string(singleScript(b, steps))), steps
				} else {
					in.Model, in.Agent = c.script("parent", string(delegationScript(b, bc.children, steps))), "orchestrator"
					n = bc.children*steps + 2 + bc.children
				}
				b.StartTimer()
				before := cpuTime()
				if _, err := c.app.Commands.RunTurn(context.Background(), in); err != nil {
					b.Fatal(err)
				}
				if _, err := c.app.Commands.SettleJobs(context.Background()); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - before
				total += n
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(total), "cpu-ns/step")
		})
	}
}

func singleScript(t testing.TB, steps int) []byte {
	var turns []scripted.Turn
	for s := range steps - 1 {
		turns = append(turns, scripted.Turn{ToolCalls: []scripted.ToolCall{{ID: fmt.Sprintf("r%d", s), Name: "read",
			Arguments: json.RawMessage(`{"path":"notes.txt"}`)}}})
	}
	data, err := json.Marshal(scripted.Script{Turns: append(turns, scripted.Turn{Text: "done."})})
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
