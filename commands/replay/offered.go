package replay

import (
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// addedTools are the tools the built-in agents gained after logs were recorded without them:
// a replay leaves one out of a turn whose recorded receipt did not offer it, so a log recorded
// before the tool existed replays as it was decided instead of reporting every step changed.
// Any other difference in the offer (a tool the configuration disables or enables now) is
// still the replay's to report.
var addedTools = map[string]bool{tools.NameQuestion: true, tools.NameQuestionAsync: true, tools.NamePlanExit: true,
	tools.NameGoalGet: true, tools.NameGoalUpdate: true, tools.NameGoalRequestInput: true, tools.NameTaskContext: true}

// recordedOffer is the tools a turn's first prompt receipt declared, with those its request
// hooks removed, following header bases back through the session's earlier receipts; nil when
// the turn recorded no receipt (nothing to narrow to).
func recordedOffer(registry *events.Registry, before []events.Recorded, g *group) map[string]bool {
	receipts := map[string]events.PromptAssembled{}
	for _, rec := range before {
		if rec.Type != events.TypePromptAssembled {
			continue
		}
		if p, err := registry.Decode(rec); err == nil {
			e := p.(events.PromptAssembled)
			receipts[e.ReceiptID] = e
		}
	}
	var first *events.PromptAssembled
	for _, p := range g.payloads {
		if e, ok := p.(events.PromptAssembled); ok {
			first = &e
			break
		}
	}
	if first == nil {
		return nil
	}
	e := *first
	for hops := 0; e.HeaderBase != nil && hops < len(receipts); hops++ {
		base, ok := receipts[e.HeaderBase.ReceiptID]
		if !ok {
			return nil
		}
		e = base
	}
	if e.HeaderBase != nil {
		return nil
	}
	names := map[string]bool{}
	for _, t := range e.Tools {
		names[t.Name] = true
	}
	for _, n := range first.Hooks.RemovedTools {
		names[n] = true
	}
	return names
}

// narrowed is ts without the added tools the recorded offer did not hold; all of ts when
// there is no recorded offer. A tool the tools config names stays: the config decides it (a
// recording that disabled it left it out of its offer, and the config must still find it),
// and a config that enables it now is a difference the replay reports.
func narrowed(ts []tools.Tool, offer, configured map[string]bool) []tools.Tool {
	if offer == nil {
		return ts
	}
	out := ts[:0:0]
	for _, t := range ts {
		name := t.Declaration().Name
		if _, named := configured[name]; named || offer[name] || !addedTools[name] {
			out = append(out, t)
		}
	}
	return out
}
