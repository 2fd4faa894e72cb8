package replay

import "encoding/json"

// boundsCompared leaves the turn's recorded tool output limits ("bounds", docs/config.md
// "Bounds") out of the comparison when the recording has none: a build before they were
// recorded ran under limits it did not write down, so only a log that records them is held
// to them. A log that records them compares them like any other member.
func boundsCompared(recorded, replayed json.RawMessage) (json.RawMessage, json.RawMessage) {
	var rec map[string]json.RawMessage
	if json.Unmarshal(recorded, &rec) != nil {
		return recorded, replayed
	}
	if _, ok := rec["bounds"]; ok {
		return recorded, replayed
	}
	var rep map[string]json.RawMessage
	if json.Unmarshal(replayed, &rep) != nil {
		return recorded, replayed
	}
	delete(rep, "bounds")
	out, err := json.Marshal(rep)
	if err != nil {
		return recorded, replayed
	}
	return recorded, out
}
