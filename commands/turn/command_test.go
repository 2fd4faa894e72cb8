package turn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/eventstore/memstore"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// countRequests counts the provider requests started in the session and the turns started.
func countRequests(t *testing.T, h *harness) (requests, turns int) {
	for _, ev := range h.events(t) {
		switch e := ev.(type) {
		case events.ProviderRequest:
			if e.Status == events.RequestStarted {
				requests++
			}
		case events.TurnStarted:
			turns++
		}
	}
	return requests, turns
}

// A turn is a command: re-delivering it with the same command id starts nothing new and
// returns the first outcome, in the same process and after a restart. The script holds one
// model turn only, so a second provider request would fail with script_exhausted.
func TestRedeliveredTurnRunsOnce(t *testing.T) {
	h := newHarness(t)
	meta := commands.Meta{CommandID: "cmd_turn_once", Actor: "user"}
	req := func() turn.Request {
		return turn.Request{Meta: meta, SessionID: h.session, Text: "say done", Agent: buildAgent(),
			Provider:     script(t, `{"turns":[{"text":"done","usage":{"inputTokens":7,"outputTokens":1}}]}`),
			ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}}
	}
	first, err := h.driver.Run(context.Background(), req())
	if err != nil || first.Duplicate || first.Text != "done" {
		t.Fatalf("first delivery: %+v %v", first, err)
	}
	if first.TurnID != turn.TurnID(meta.CommandID) {
		t.Fatalf("turn id %s is not derived from the command id", first.TurnID)
	}
	again, err := h.driver.Run(context.Background(), req())
	if err != nil || !again.Duplicate || again.TurnID != first.TurnID || again.Text != first.Text ||
		again.Reason != first.Reason || again.Usage != first.Usage || again.Steps != first.Steps {
		t.Fatalf("re-delivery: %+v %v, first %+v", again, err, first)
	}

	// Restart: a new store handle and a new driver over the same file.
	h.store.Close()
	store := memstore.Open(h.log)
	t.Cleanup(func() { store.Close() })
	h.store = store
	h.driver = &turn.Driver{Store: store, Registry: h.registry, Clock: commands.SystemClock{}}
	restarted, err := h.driver.Run(context.Background(), req())
	if err != nil || !restarted.Duplicate || restarted.Text != "done" || restarted.TurnID != first.TurnID {
		t.Fatalf("after a restart: %+v %v", restarted, err)
	}
	if requests, turns := countRequests(t, h); requests != 1 || turns != 1 {
		t.Fatalf("%d provider requests and %d turns, want one of each", requests, turns)
	}
	// Every event of the turn carries the command's id, the first its digest; the correlation
	// id is the session's own, which its stream names.
	recs, _ := store.ReadStream(context.Background(), commands.SessionStream(h.session), 1, 100)
	for i, r := range recs {
		if r.Metadata.CommandID != meta.CommandID || (r.Metadata.CommandDigest != "") != (i == 0) ||
			r.Metadata.CorrelationID != "" || r.Metadata.CorrelationIn(r.Stream) != h.session {
			t.Fatalf("event %d %s metadata %+v", i, r.Type, r.Metadata)
		}
	}
}

// The same command id with another prompt is refused, and writes nothing.
func TestTurnCommandIDReused(t *testing.T) {
	h := newHarness(t)
	meta := commands.Meta{CommandID: "cmd_reused", Actor: "user"}
	run := func(text string) (turn.Outcome, error) {
		return h.driver.Run(context.Background(), turn.Request{Meta: meta, SessionID: h.session, Text: text, Agent: buildAgent(),
			Provider: script(t, `{"turns":[{"text":"ok"}]}`), ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}})
	}
	if _, err := run("first"); err != nil {
		t.Fatal(err)
	}
	before := len(h.events(t))
	_, err := run("second")
	var re *commands.CommandIDReusedError
	if !errors.As(err, &re) || re.CommandID != meta.CommandID {
		t.Fatalf("reused id: %v", err)
	}
	if n := len(h.events(t)); n != before {
		t.Fatalf("a refused turn appended %d events", n-before)
	}
}

// A re-delivered turn whose first delivery is still running is reported in progress; once
// that process is gone, the re-delivery settles the turn (interrupted, its call uncertain)
// and does not start it again.
func TestRedeliveredTurnInProgress(t *testing.T) {
	h := newHarness(t)
	owner := &events.TurnOwner{Host: "h", PID: 42}
	alive := true
	d := &turn.Driver{Store: h.store, Registry: h.registry, Clock: commands.SystemClock{}, Owner: owner,
		Alive: func(o events.TurnOwner) bool { return alive && o == *owner }}
	meta := commands.Meta{CommandID: "cmd_in_progress", Actor: "user"}
	crash := &probeTool{name: "poke", hold: time.Minute}
	req := func() turn.Request {
		return turn.Request{Meta: meta, SessionID: h.session, Text: "go", Agent: buildAgent("poke"), Tools: []turn.Tool{crash},
			Provider:     script(t, `{"turns":[{"toolCalls":[{"id":"a","name":"poke","arguments":{"n":1}}]},{"text":"again"}]}`),
			ProviderName: "scripted", Model: model.ModelInfo{ID: "scripted"}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx, req())
	}()
	for crash.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	_, err := d.Run(context.Background(), req())
	var de *domain.Error
	if !errors.As(err, &de) || de.Code() != turn.CodeTurnInProgress {
		t.Fatalf("re-delivery while running: %v", err)
	}
	alive = false
	out, err := d.Run(context.Background(), req())
	if err != nil || !out.Duplicate || out.Reason != events.FinishInterrupted {
		t.Fatalf("re-delivery after the owner died: %+v %v", out, err)
	}
	if crash.calls.Load() != 1 {
		t.Fatalf("the call ran %d times", crash.calls.Load())
	}
	if requests, turns := countRequests(t, h); requests != 1 || turns != 1 {
		t.Fatalf("%d provider requests and %d turns, want one of each", requests, turns)
	}
	cancel()
	<-done
}
