package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/zuno-run/zuno/events"
)

// comparer matches the replayed turn's appends, in order, against the recorded group.
type comparer struct {
	g       *group
	next    int // index of the recorded event the next append is compared with
	diffs   []Difference
	stopped bool
	// gone is set when the turn is replayed over a workspace that no longer exists; skipped
	// are its steps that needed it, reported instead of their differences.
	gone    *detachment
	skipped []Unchecked
	// changed are the configuration files that are not as the turn read them.
	changed []ConfigChange
}

// check compares one appended event. A differing field is reported once per step and the
// recorded event is kept, so the turn goes on along the recorded path; an event of another
// type, or one past the end of the recorded group, stops the turn — unless the recorded run
// itself stopped there (killed before it finished), which is no difference.
func (c *comparer) check(ev events.Event) (events.Recorded, error) {
	if c.next >= len(c.g.recs) {
		c.stopped = true
		if !c.g.finished {
			return events.Recorded{}, errStop
		}
		c.add(len(c.g.recs)-1, ev.Type, "(event)", "(none)", ev.Type)
		return events.Recorded{}, errStop
	}
	i := c.next
	rec := c.g.recs[i]
	if ev.Type == events.TypePermissionGranted && rec.Type != events.TypePermissionGranted {
		return c.grantUnrecorded(i, ev), nil
	}
	if ev.Type != rec.Type {
		c.stopped = true
		c.add(i, rec.Type, "(event)", rec.Type, ev.Type)
		return events.Recorded{}, errStop
	}
	c.next++
	recorded, replayed := c.withImplied(i, ev)
	if ev.Type == events.TypeTurnStarted {
		recorded, replayed = c.configCompared(recorded, replayed)
		recorded, replayed = boundsCompared(recorded, replayed)
	}
	if ev.Type == events.TypePromptAssembled {
		recorded, replayed = c.headersRestored(recorded, replayed)
		recorded, replayed = conversationsByDigest(recorded, replayed)
	}
	if path, want, got, same := diff(recorded, replayed); !same {
		c.add(i, rec.Type, path, want, got)
	}
	return rec, nil
}

// grantUnrecorded keeps a replayed session.permission.granted.1 where the recording has none:
// a build before the grants were recorded applied an "always" answer in its memory only, so
// its log lacks them (docs/replay.md, "Limits"). The grant is folded as this build would have
// recorded it, without a difference: the turn's later calls then decide as that build's did
// (its memory held the grant for the rest of the turn), and the recorded ask and start around
// it are still compared. The memory copy keeps it at the position of the event it precedes.
func (c *comparer) grantUnrecorded(i int, ev events.Event) events.Recorded {
	return events.Recorded{Event: ev, Stream: c.g.recs[i].Stream, Position: c.g.recs[max(i-1, 0)].Position}
}

// withImplied is the recorded event i and its replay ev with the members they leave out as
// implied put back (docs/storage.md, "Bytes per step"): a log recorded before those were left
// out compares with its replay by this build by what the events say.
func (c *comparer) withImplied(i int, ev events.Event) (recorded, replayed json.RawMessage) {
	rec, p := c.g.recs[i], c.g.payloads[i]
	return events.RestoreImplied(rec, p), events.RestoreImplied(events.Recorded{Event: ev, Stream: rec.Stream}, p)
}

// missing reports a recorded event the replay never appended.
func (c *comparer) missing() {
	i := c.next
	c.add(i, c.g.recs[i].Type, "(event)", c.g.recs[i].Type, "(none)")
}

// add records a difference unless its step has one already. A prompt receipt's difference
// does not hide the step's others: a build whose prompts differ (a tool's declaration said
// anew, docs/prompt-budget.md) differs at every step, and what it decided besides must still
// show.
func (c *comparer) add(i int, typ, field, recorded, replayed string) {
	if c.unchecked(i, typ) {
		return
	}
	step, prompt := c.g.steps[i], typ == events.TypePromptAssembled
	if slices.ContainsFunc(c.diffs, func(d Difference) bool {
		return d.Step == step && (d.Event == events.TypePromptAssembled) == prompt
	}) {
		return
	}
	c.diffs = append(c.diffs, Difference{TurnID: c.g.started.TurnID, Step: step, Event: typ, Field: field,
		Recorded: recorded, Replayed: replayed})
}

// volatile are the fields that measure the run rather than decide it (docs/replay.md): wall
// times, and a retry's wait, of which only whether there was one is compared (its length is
// jittered).
var volatile = map[string]bool{"durationMs": true}

// diff compares two events' data as JSON and returns the first differing path (in key order)
// with both values.
func diff(recorded, replayed json.RawMessage) (path, want, got string, same bool) {
	var a, b any
	if json.Unmarshal(recorded, &a) != nil || json.Unmarshal(replayed, &b) != nil {
		if bytes.Equal(recorded, replayed) {
			return "", "", "", true
		}
		return "", clip(recorded), clip(replayed), false
	}
	return walk("", normalise(a), normalise(b))
}

func normalise(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k := range x {
			if volatile[k] {
				delete(x, k)
			}
		}
		if _, ok := x["retryInMs"]; ok {
			x["retryInMs"] = "set"
		}
		if p, ok := x["permission"].(map[string]any); ok {
			// The decision's prose, derived from the fields compared beside it: a wording fix
			// (a hint naming other layers) is not another decision (docs/replay.md).
			delete(p, "message")
			// The risk gate's grade, derived from the source and action compared beside it
			// (a pre-approval is a rule's allow), and absent from decisions recorded before it.
			delete(p, "risk")
		}
		if _, ask := x["askId"]; ask && x["key"] != nil && x["mode"] != nil {
			// An ask's gate and reason name what asked, derived from the decision's source,
			// mode and rule (docs/replay.md); asks recorded before them have neither.
			delete(x, "gate")
			delete(x, "reason")
		}
		for k, e := range x {
			x[k] = normalise(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalise(e)
		}
	}
	return v
}

func walk(path string, a, b any) (string, string, string, bool) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := make([]string, 0, len(am)+len(bm))
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			if p, x, y, same := walk(join(path, k), am[k], bm[k]); !same {
				return p, x, y, false
			}
		}
		return "", "", "", true
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok {
		for i := range max(len(as), len(bs)) {
			var x, y any
			if i < len(as) {
				x = as[i]
			}
			if i < len(bs) {
				y = bs[i]
			}
			if p, w, g, same := walk(path+"["+strconv.Itoa(i)+"]", x, y); !same {
				return p, w, g, false
			}
		}
		return "", "", "", true
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if bytes.Equal(x, y) {
		return "", "", "", true
	}
	if path == "" {
		path = "(data)"
	}
	return path, clip(x), clip(y), false
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// clip keeps a reported value to one readable line.
func clip(b []byte) string {
	if b == nil || string(b) == "null" {
		return "(absent)"
	}
	if len(b) > 160 {
		return fmt.Sprintf("%s… (%d bytes)", b[:160], len(b))
	}
	return string(b)
}
