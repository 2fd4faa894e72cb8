package replay

import (
	"context"
	"fmt"

	"github.com/zuno-run/zuno/commands"

	"github.com/zuno-run/zuno/events"
)

// hostWrite answers a replayed turn's append to a stream other than its session's: the plan
// classifier's seed, which the host writes to the work stream before the first request
// (docs/plan-classifier.md), and the Goal's progress observation (docs/goals.md). The replay never writes the real log; it accepts the append only
// when the recorded run wrote exactly these events (same ids, types and data) after the point
// the replay has reached, and moves that point past them, so the rest of the turn reads the
// work stream as the recorded run did. Anything else is a difference the turn cannot hide.
func (s *store) hostWrite(ctx context.Context, stream string, evs []events.Event) (events.AppendResult, error) {
	byID := map[string]events.Recorded{}
	for r, err := range commands.Events(ctx, s.log, stream, 0) {
		if err != nil {
			return events.AppendResult{}, err
		}
		byID[r.ID] = r
	}
	var res events.AppendResult
	for i, ev := range evs {
		r, ok := byID[ev.ID]
		if !ok || !r.SameContent(ev) {
			return events.AppendResult{}, fmt.Errorf("replay: the turn appended to %s what the recorded run did not (event %s, %s); a replay writes only its session's stream: %w", stream, ev.ID, ev.Type, errStop)
		}
		s.reached(r.Position + 1)
		if i == 0 {
			res.FirstPosition = r.Position
		}
		res.NextRevision, res.LastPosition = r.StreamRevision, r.Position
	}
	return res, nil
}
