package work_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

const sessionID = "ses_root"

var registry = events.NewRegistry(events.AllPayloads()...)

// world drives one work aggregate the way a command handler would, and checks on every
// command the properties every decision must have: Decide leaves the state alone, a success
// raises exactly one revision by one, and replaying the encoded log rebuilds the same state.
type world struct {
	t   testing.TB
	s   work.State
	log []events.Event
}

func newWorld(t testing.TB) *world {
	w := &world{t: t}
	t.Cleanup(w.checkReplay)
	return w
}

func snapshot(s *work.State) string {
	b, err := json.Marshal(struct {
		Plan *work.PlanView
		Todo work.TodoView
	}{s.PlanView(), s.TodoView()})
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (w *world) do(cmd work.Command) ([]events.Payload, error) {
	w.t.Helper()
	switch c := cmd.(type) {
	case work.PlanUpdate:
		if c.SessionID == "" {
			c.SessionID = sessionID
		}
		cmd = c
	case work.TodoUpdate:
		if c.SessionID == "" {
			c.SessionID = sessionID
		}
		cmd = c
	}
	before := snapshot(&w.s)
	planRev, todoRev := w.s.PlanRevision(), w.s.TodoRevision()
	out, err := work.Decide(&w.s, cmd)
	if after := snapshot(&w.s); after != before {
		w.t.Fatalf("Decide changed the state:\nbefore %s\nafter  %s", before, after)
	}
	if err != nil {
		var de *domain.Error
		if !errors.As(err, &de) {
			w.t.Fatalf("error %v is %T, want *domain.Error", err, err)
		}
		if out != nil {
			w.t.Fatalf("Decide returned events with an error: %v", out)
		}
		return nil, err
	}
	if len(out) == 0 {
		w.t.Fatalf("Decide succeeded without events")
	}
	for _, p := range out {
		if err := w.s.Evolve(p); err != nil {
			w.t.Fatal(err)
		}
		ev, err := events.Encode(events.DeriveID(fmt.Sprint(len(w.log)), 0), p, events.Metadata{Actor: "test"})
		if err != nil {
			w.t.Fatal(err)
		}
		w.log = append(w.log, ev)
	}
	switch cmd.(type) {
	case work.PlanUpdate:
		if got := w.s.PlanRevision(); got != planRev+1 || w.s.TodoRevision() != todoRev {
			w.t.Fatalf("plan revision %d -> %d, todo %d -> %d; want plan +1, todo unchanged", planRev, got, todoRev, w.s.TodoRevision())
		}
	case work.TodoUpdate:
		if got := w.s.TodoRevision(); got != todoRev+1 || w.s.PlanRevision() != planRev {
			w.t.Fatalf("todo revision %d -> %d, plan %d -> %d; want todo +1, plan unchanged", todoRev, got, planRev, w.s.PlanRevision())
		}
	}
	return out, nil
}

// must applies a command that has to succeed.
func (w *world) must(cmd work.Command) []events.Payload {
	w.t.Helper()
	out, err := w.do(cmd)
	if err != nil {
		w.t.Fatalf("%+v: %v", cmd, err)
	}
	return out
}

// checkReplay rebuilds the state from the encoded log, decoded as a reader would: from the
// start, and from a snapshot taken after each event (encoded and decoded as the log stores
// it) with the events after it folded in.
func (w *world) checkReplay() {
	decode := func(ev events.Event, i int) events.Payload {
		p, err := registry.Decode(events.Recorded{Event: ev, Stream: "work-" + sessionID, StreamRevision: uint64(i), Position: uint64(i)})
		if err != nil {
			w.t.Fatalf("decode: %v", err)
		}
		return p
	}
	var replayed work.State
	for i, ev := range w.log {
		if err := replayed.Evolve(decode(ev, i)); err != nil {
			w.t.Fatal(err)
		}
	}
	w.agrees(&replayed, "replayed")
	var prefix work.State
	for k, ev := range w.log {
		if err := prefix.Evolve(decode(ev, k)); err != nil {
			w.t.Fatal(err)
		}
		sn, err := events.Encode("snap", prefix.Snapshot(uint64(k)), events.Metadata{Actor: "host"})
		if err != nil {
			w.t.Fatal(err)
		}
		p := decode(sn, 0).(events.WorkSnapshot)
		if p.WorkRevision != uint64(k) {
			w.t.Fatalf("snapshot at %d records revision %d", k, p.WorkRevision)
		}
		restored := work.Restore(p)
		for i := k + 1; i < len(w.log); i++ {
			if err := restored.Evolve(decode(w.log[i], i)); err != nil {
				w.t.Fatal(err)
			}
		}
		w.agrees(restored, fmt.Sprintf("restored from the snapshot after event %d", k))
	}
}

// agrees checks that a state rebuilt from the log is the live state: its views, and the ids
// it would hand out next (they depend on counters the views do not show).
func (w *world) agrees(rebuilt *work.State, how string) {
	if got, want := snapshot(rebuilt), snapshot(&w.s); got != want {
		w.t.Errorf("%s differs:\nrebuilt %s\nlive    %s", how, got, want)
	}
	probe := work.PlanUpdate{SessionID: sessionID, Action: work.ActionAppend, ExpectedRevision: rev(w.s.PlanRevision()),
		Steps: []work.StepInput{{Title: "probe"}}}
	a, errA := work.Decide(rebuilt, probe)
	b, errB := work.Decide(&w.s, probe)
	if !reflect.DeepEqual(a, b) || (errA == nil) != (errB == nil) {
		w.t.Errorf("%s decides differently:\n%v %v\n%v %v", how, a, errA, b, errB)
	}
	todo := work.TodoUpdate{SessionID: sessionID, Items: []work.TodoInput{{Title: str("probe")}}}
	a, errA = work.Decide(rebuilt, todo)
	b, errB = work.Decide(&w.s, todo)
	if !reflect.DeepEqual(a, b) || (errA == nil) != (errB == nil) {
		w.t.Errorf("%s decides differently:\n%v %v\n%v %v", how, a, errA, b, errB)
	}
}

func rev(n uint64) *uint64 { return &n }
func str(s string) *string { return &s }
func strs(s ...string) *[]string {
	if s == nil {
		s = []string{}
	}
	return &s
}

func wantCode(t testing.TB, err error, code string) *domain.Error {
	t.Helper()
	var de *domain.Error
	if !errors.As(err, &de) {
		t.Fatalf("error %v, want *domain.Error with code %s", err, code)
	}
	if de.Code() != code {
		t.Fatalf("code %s (%v), want %s", de.Code(), err, code)
	}
	return de
}

func steps(titles ...string) []work.StepInput {
	out := make([]work.StepInput, len(titles))
	for i, t := range titles {
		out[i] = work.StepInput{Title: t}
	}
	return out
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
