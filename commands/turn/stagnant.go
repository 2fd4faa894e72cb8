package turn

import (
	"encoding/json"
	"fmt"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// CodeStagnantToolLoop ends a turn whose model kept reading unchanged durable state: three
// consecutive steps whose only call was the same read-only work tool (plan_get or todo_get)
// returning the same semantic fingerprint (docs/plan-classifier.md, "stagnant_tool_loop").
const CodeStagnantToolLoop = "stagnant_tool_loop"

// stagnantLimit is how many identical observations in a row end the turn.
const stagnantLimit = 3

// fingerprinted are the read tools whose results carry the work state's fingerprint
// (adapters/tools/worktools: the plan and todo views together; intent is no part of it).
var fingerprinted = map[string]bool{tools.NamePlanGet: true, tools.NameTodoGet: true}

// stagnation counts consecutive identical read-only observations of one turn. It lives with
// the run: a turn resumed in another process starts counting again, which at worst allows
// three more reads, never stops a turn that made progress.
type stagnation struct {
	// fingerprints are this step's results of fingerprinted reads, by call id.
	fingerprints map[string]string
	// inputArrived: an input (a steering message, a report) joined the turn this step.
	inputArrived bool
	key          string
	count        int
}

// staged sees every event the turn stages: the fingerprints of settled reads, and inputs
// delivered into the turn, which are news the next read may answer differently.
func (s *stagnation) staged(p events.Payload) {
	switch e := p.(type) {
	case events.ToolSettled:
		if !fingerprinted[e.Tool] || e.Outcome != string(tools.OutcomeCompleted) {
			return
		}
		var d struct {
			Fingerprint string `json:"fingerprint"`
		}
		if json.Unmarshal(e.Metadata.Details, &d) == nil && d.Fingerprint != "" {
			if s.fingerprints == nil {
				s.fingerprints = map[string]string{}
			}
			s.fingerprints[e.CallID] = d.Fingerprint
		}
	case events.UserMessageAppended:
		s.inputArrived = true
	case events.TurnStarted:
		s.inputArrived = false // the turn's own message, staged just before, is no news
	}
}

// observe closes one step whose response asked for calls: it counts the step when its only
// call was a fingerprinted read whose fingerprint (and tool) equals the previous step's, and
// resets the count on anything else — another tool, several calls, a mutation, an input. It
// returns the turn's typed failure once the count reaches stagnantLimit.
func (s *stagnation) observe(calls []model.ToolCall) *events.ErrorInfo {
	fps, arrived := s.fingerprints, s.inputArrived
	s.fingerprints, s.inputArrived = nil, false
	if arrived || len(calls) != 1 || fps[calls[0].ID] == "" {
		s.key, s.count = "", 0
		return nil
	}
	key := calls[0].Name + "\x00" + fps[calls[0].ID]
	if key == s.key {
		s.count++
	} else {
		s.key, s.count = key, 1
	}
	if s.count < stagnantLimit {
		return nil
	}
	return &events.ErrorInfo{Code: CodeStagnantToolLoop,
		Message: fmt.Sprintf("%d consecutive steps only called %s and the work state it returned did not change", s.count, calls[0].Name),
		Fix: "the durable state will not change by reading it again: act on it (plan_update, todo_update, or the work itself), " +
			"or answer; continue the session with a new message"}
}
