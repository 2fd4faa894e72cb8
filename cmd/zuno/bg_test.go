package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/commands"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/events"
)

// Issue 24's must-show, in one process (each `zuno run` of a testscript is a process of its
// own; bg_outlives_turn.txtar shows the same across processes): "a background command started
// in turn 1 keeps running after the turn ends; its completion is an event turn 2 can read".
// Turn 1 starts a task that sleeps, then writes a marker; turn 1 returns before the marker
// exists; the task finishes on its own afterwards (the turn's surface is closed by then), its
// completion recorded in bg-<session>; turn 2, in the same application, waits on it and reads
// that receipt. Real processes, the real sandbox, a real SQLite log.
func TestBackgroundTaskOutlivesItsTurn(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "ws")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfgFile, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZUNO_CONFIG", cfgFile)
	t.Setenv("ZUNO_DB", filepath.Join(dir, "zuno.db"))
	t.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	t.Chdir(work)
	turn1 := writeScript(t, dir, "t1.json", `{"turns": [
  {"toolCalls": [{"id": "b1", "name": "shell", "arguments": {"command": "sleep 1.5; echo done > marker; echo out", "background": true}}]},
  {"text": "started"}]}`)

	ctx := context.Background()
	a, err := openApp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	res, err := a.Commands.RunTurn(ctx, zapp.RunTurn{Meta: commands.Meta{CommandID: zapp.NewID("cmd_"), Actor: "user"},
		Prompt: "start it", Model: "scripted:" + turn1, Cwd: work})
	if err != nil {
		t.Fatal(err)
	}
	sid := res.SessionID
	marker := filepath.Join(work, "marker")
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the marker exists when turn 1 returns: the task did not take a moment")
	}
	bgEvents := streamTypes(t, a, commands.BackgroundStream(sid))
	if len(bgEvents) != 1 || bgEvents[0].Type != events.TypeBackgroundStarted {
		t.Fatalf("after turn 1 the bg stream holds %v, want the start only (was the task killed with the turn?)", typesOf(bgEvents))
	}
	var started events.BackgroundStarted
	decode(t, bgEvents[0], &started)

	// The task runs on after its turn and ends on its own.
	deadline := time.Now().Add(15 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the task did not finish after its turn ended (was it killed with the turn?)")
		}
		time.Sleep(50 * time.Millisecond)
	}

	turn2 := writeScript(t, dir, "t2.json", fmt.Sprintf(`{"turns": [
  {"toolCalls": [{"id": "w2", "name": "bg", "arguments": {"action": "wait", "taskID": %q, "timeoutMs": 10000}}]},
  {"toolCalls": [{"id": "l2", "name": "bg", "arguments": {"action": "list"}}]},
  {"text": "read it"}]}`, started.TaskID))
	if _, err := a.Commands.RunTurn(ctx, zapp.RunTurn{Meta: commands.Meta{CommandID: zapp.NewID("cmd_"), Actor: "user"},
		SessionID: sid, Prompt: "what happened", Model: "scripted:" + turn2}); err != nil {
		t.Fatal(err)
	}
	bgEvents = streamTypes(t, a, commands.BackgroundStream(sid))
	if len(bgEvents) != 2 || bgEvents[1].Type != events.TypeBackgroundCompleted {
		t.Fatalf("after the task ended the bg stream holds %v", typesOf(bgEvents))
	}
	var done events.BackgroundCompleted
	decode(t, bgEvents[1], &done)
	if done.Status != events.BackgroundExited || done.ExitCode == nil || *done.ExitCode != 0 || done.TotalWritten != 4 ||
		done.CallID != "b1" || done.TaskID != started.TaskID {
		t.Fatalf("completion %+v", done)
	}
	outputs := toolOutputs(t, a, sid)
	wantWait := fmt.Sprintf("[bg wait %s status=exited exitCode=0 completion=recorded windowFrom=0 cursor=4 bytes=4", started.TaskID)
	if !strings.HasPrefix(outputs["w2"], wantWait) || !strings.HasSuffix(outputs["w2"], "]\nout\n") {
		t.Fatalf("turn 2's bg wait: %q, want it to start %q", outputs["w2"], wantWait)
	}
	if !strings.Contains(outputs["l2"], started.TaskID+" status=exited exitCode=0 completion=recorded") {
		t.Fatalf("turn 2's bg list: %q", outputs["l2"])
	}
	// The receipt bg reported is the recorded one.
	var details struct {
		Completion *events.BackgroundCompleted `json:"completion"`
	}
	if err := json.Unmarshal([]byte(detailsOf(t, a, sid, "w2")), &details); err != nil || details.Completion == nil ||
		details.Completion.OutputSHA256 != done.OutputSHA256 || details.Completion.EndedAt != done.EndedAt {
		t.Fatalf("bg wait's completion %+v (%v), recorded %+v", details.Completion, err, done)
	}
}

func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func streamTypes(t *testing.T, a *app, stream string) []events.Recorded {
	t.Helper()
	recs, err := a.store.ReadStream(context.Background(), stream, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func decode(t *testing.T, rec events.Recorded, into any) {
	t.Helper()
	if err := json.Unmarshal(rec.Data, into); err != nil {
		t.Fatal(err)
	}
}

// settledCalls are the session's settled tool calls by call id.
func settledCalls(t *testing.T, a *app, sid string) map[string]events.ToolSettled {
	t.Helper()
	out := map[string]events.ToolSettled{}
	for _, rec := range streamTypes(t, a, commands.SessionStream(sid)) {
		if rec.Type != events.TypeToolSettled {
			continue
		}
		p, err := a.registry.Decode(rec)
		if err != nil {
			t.Fatal(err)
		}
		s := p.(events.ToolSettled)
		out[s.CallID] = s
	}
	return out
}

func toolOutputs(t *testing.T, a *app, sid string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for id, s := range settledCalls(t, a, sid) {
		out[id] = s.Output
	}
	return out
}

func detailsOf(t *testing.T, a *app, sid, callID string) string {
	t.Helper()
	return string(settledCalls(t, a, sid)[callID].Metadata.Details)
}

func typesOf(recs []events.Recorded) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.Type
	}
	return out
}
