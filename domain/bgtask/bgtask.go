// Package bgtask is the record of a session's background commands (stream bg-<sessionId>,
// docs/tools.md "Background commands"): which tasks started, and each one's completion, the
// one receipt that bg output, bg wait and a later turn read. A task has at most one
// completion: the first recorded stands, whoever records it (the process that saw it end, or
// a later process that found that process gone and the task lost with it). Pure.
package bgtask

import (
	"fmt"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// Task is one background task as the log has it.
type Task struct {
	Started events.BackgroundStarted
	// Completion is nil while no completion is recorded: the task runs, or its process died
	// before recording one and no one has recorded it lost yet.
	Completion *events.BackgroundCompleted
}

// State is a session's background tasks, in the order they started.
type State struct {
	byID  map[string]int
	tasks []Task
}

// Evolve applies one event of the bg stream.
func (s *State) Evolve(p events.Payload) error {
	switch e := p.(type) {
	case events.BackgroundStarted:
		if s.byID == nil {
			s.byID = map[string]int{}
		}
		if _, dup := s.byID[e.TaskID]; !dup {
			s.byID[e.TaskID] = len(s.tasks)
			s.tasks = append(s.tasks, Task{Started: e})
		}
	case events.BackgroundCompleted:
		if i, ok := s.byID[e.TaskID]; ok && s.tasks[i].Completion == nil {
			c := e
			s.tasks[i].Completion = &c
		}
	default:
		return domain.UnexpectedEvent("bg", p)
	}
	return nil
}

// Task returns the task with id.
func (s State) Task(id string) (Task, bool) {
	i, ok := s.byID[id]
	if !ok {
		return Task{}, false
	}
	return s.tasks[i], true
}

// Tasks are every task, oldest first.
func (s State) Tasks() []Task { return append([]Task(nil), s.tasks...) }

// Start records a task started. A task id is recorded once: the same start again records
// nothing; another start under a used id is refused (ids are drawn fresh per task).
func Start(s State, e events.BackgroundStarted) ([]events.Payload, error) {
	if e.TaskID == "" || e.SessionID == "" {
		return nil, domain.Invalid("taskId", "a background task needs its task id and session id", "record the task the supervisor started, with both ids")
	}
	if t, ok := s.Task(e.TaskID); ok {
		if t.Started == e {
			return nil, nil
		}
		return nil, domain.Invalid("taskId", fmt.Sprintf("background task %s was already started with other facts", e.TaskID), "draw a new task id for a new task")
	}
	return []events.Payload{e}, nil
}

// Complete records a task's completion. The first completion stands: a second one (the task
// recorded lost by one process and ended by another, or a re-delivery) records nothing. A
// task that never started is refused.
func Complete(s State, e events.BackgroundCompleted) ([]events.Payload, error) {
	switch e.Status {
	case events.BackgroundExited, events.BackgroundCancelled, events.BackgroundKilled, events.BackgroundLost, events.BackgroundCapped:
	default:
		return nil, domain.Invalid("status", fmt.Sprintf("%q is not a completion status", e.Status), "use exited, cancelled, killed, lost or capped")
	}
	t, ok := s.Task(e.TaskID)
	if !ok {
		return nil, domain.Invalid("taskId", fmt.Sprintf("background task %s has no recorded start", e.TaskID), "record the task's start before its completion")
	}
	if t.Completion != nil {
		return nil, nil
	}
	return []events.Payload{e}, nil
}
