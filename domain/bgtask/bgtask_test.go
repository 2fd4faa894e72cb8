package bgtask_test

import (
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/bgtask"
	"github.com/zuno-run/zuno/events"
)

var started = events.BackgroundStarted{SessionID: "ses_1", TaskID: "bg_1", CallID: "c1", Command: "sleep 1", Dir: "/w",
	LogPath: "/d/bg_1.log", Holder: "h/1/a", StartedAt: "2026-12-01T10:00:00Z"}

func completed(status string) events.BackgroundCompleted {
	return events.BackgroundCompleted{SessionID: "ses_1", TaskID: "bg_1", CallID: "c1", Status: status, LogPath: "/d/bg_1.log", Holder: "h/1/a"}
}

func fold(t *testing.T, ps ...events.Payload) bgtask.State {
	t.Helper()
	var s bgtask.State
	for _, p := range ps {
		if err := s.Evolve(p); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// Each row is a sentence of docs/tools.md, "Background commands".
func TestDecisions(t *testing.T) {
	other := started
	other.Command = "rm -rf /"
	lost := completed(events.BackgroundLost)
	rows := []struct {
		sentence string
		history  []events.Payload
		decide   func(bgtask.State) ([]events.Payload, error)
		want     int    // events decided
		code     string // error code, "" for none
	}{
		{"a task is recorded when it starts", nil, func(s bgtask.State) ([]events.Payload, error) { return bgtask.Start(s, started) }, 1, ""},
		{"the same start again records nothing", []events.Payload{started}, func(s bgtask.State) ([]events.Payload, error) { return bgtask.Start(s, started) }, 0, ""},
		{"a used task id with other facts is refused", []events.Payload{started}, func(s bgtask.State) ([]events.Payload, error) { return bgtask.Start(s, other) }, 0, domain.CodeInvalidArgument},
		{"a start needs its ids", nil, func(s bgtask.State) ([]events.Payload, error) {
			return bgtask.Start(s, events.BackgroundStarted{TaskID: "bg_2"})
		}, 0, domain.CodeInvalidArgument},
		{"a started task's completion is recorded", []events.Payload{started}, func(s bgtask.State) ([]events.Payload, error) {
			return bgtask.Complete(s, completed(events.BackgroundExited))
		}, 1, ""},
		{"a task has one completion: the first stands", []events.Payload{started, completed(events.BackgroundExited)}, func(s bgtask.State) ([]events.Payload, error) {
			return bgtask.Complete(s, lost)
		}, 0, ""},
		{"a task recorded lost is not completed again by a late report", []events.Payload{started, lost}, func(s bgtask.State) ([]events.Payload, error) {
			return bgtask.Complete(s, completed(events.BackgroundKilled))
		}, 0, ""},
		{"a completion without a start is refused", nil, func(s bgtask.State) ([]events.Payload, error) {
			return bgtask.Complete(s, completed(events.BackgroundExited))
		}, 0, domain.CodeInvalidArgument},
		{"a completion's status is one of four", []events.Payload{started}, func(s bgtask.State) ([]events.Payload, error) {
			return bgtask.Complete(s, completed("running"))
		}, 0, domain.CodeInvalidArgument},
	}
	for _, r := range rows {
		t.Run(r.sentence, func(t *testing.T) {
			got, err := r.decide(fold(t, r.history...))
			if domain.CodeOf(err) != r.code || (r.code != "" && err == nil) || len(got) != r.want {
				t.Fatalf("got %d events, error %v; want %d, code %q", len(got), err, r.want, r.code)
			}
		})
	}
}

// The fold keeps start order and the first completion of each task.
func TestFold(t *testing.T) {
	second := started
	second.TaskID = "bg_2"
	first := completed(events.BackgroundExited)
	s := fold(t, started, second, first, completed(events.BackgroundLost))
	tasks := s.Tasks()
	if len(tasks) != 2 || tasks[0].Started.TaskID != "bg_1" || tasks[1].Started.TaskID != "bg_2" ||
		tasks[0].Completion == nil || tasks[0].Completion.Status != events.BackgroundExited || tasks[1].Completion != nil {
		t.Fatalf("tasks %+v", tasks)
	}
	if _, ok := s.Task("bg_3"); ok {
		t.Fatal("an unknown task was found")
	}
	var bad bgtask.State
	if err := bad.Evolve(events.TurnLeased{}); domain.CodeOf(err) != domain.CodeUnexpectedEvent {
		t.Fatalf("foreign event: %v", err)
	}
}
