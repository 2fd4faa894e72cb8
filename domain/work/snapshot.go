package work

import (
	"github.com/zuno-run/zuno/domain/goal"
	"github.com/zuno-run/zuno/events"
)

// Snapshot is the state as a WorkSnapshot taken at revision rev of the work stream (the last
// revision folded into it). The snapshot holds copies: the state may change after.
func (s *State) Snapshot(rev uint64) events.WorkSnapshot {
	sn := events.WorkSnapshot{SessionID: s.sessionID, WorkRevision: rev, PlanRevision: s.planRevision,
		TodoRevision: s.todoRevision, PlanSeq: s.planSeq, StepSeq: s.stepSeq, TodoSeq: s.todoSeq,
		Plans: make([]events.WorkPlan, len(s.stack)), Items: make([]events.WorkItem, len(s.items)), Goal: s.goal.Snapshot()}
	for i, p := range s.stack {
		sn.Plans[i] = clonePlan(p)
	}
	for i, it := range s.items {
		sn.Items[i] = cloneItem(it)
	}
	return sn
}

// Restore is the state a snapshot records: folding the work stream's events after
// sn.WorkRevision into it gives the state a fold of the whole stream gives.
func Restore(sn events.WorkSnapshot) *State {
	s := &State{sessionID: sn.SessionID, planRevision: sn.PlanRevision, todoRevision: sn.TodoRevision,
		planSeq: sn.PlanSeq, stepSeq: sn.StepSeq, todoSeq: sn.TodoSeq, goal: goal.Restore(sn.Goal)}
	for _, p := range sn.Plans {
		s.stack = append(s.stack, clonePlan(p))
	}
	for _, it := range sn.Items {
		if s.itemIndex == nil {
			s.itemIndex = map[string]int{}
		}
		s.itemIndex[it.ID] = len(s.items)
		s.items = append(s.items, cloneItem(it))
	}
	return s
}
