package replay

import (
	"encoding/json"
	"slices"

	"github.com/zuno-run/zuno/events"
)

// ConfigChange is a configuration file a turn read that is not what the replay reads now:
// changed (another digest), gone, or new. Digests are absent where there is no file.
type ConfigChange struct {
	TurnID   string `json:"turnId"`
	Layer    string `json:"layer"`
	Path     string `json:"path"`
	Recorded string `json:"recorded,omitempty"`
	Now      string `json:"now,omitempty"`
}

// configCompared takes the configuration files out of a turn's start before it is compared:
// which files the turn read is an input, like the model's answers, not a decision
// (docs/replay.md, "Configuration"). A file that is not as it was is reported as a change, so
// the differences it causes in the decisions are explained, not hidden.
func (c *comparer) configCompared(recorded, replayed json.RawMessage) (json.RawMessage, json.RawMessage) {
	was, recorded := takeConfig(recorded)
	now, replayed := takeConfig(replayed)
	c.changed = append(c.changed, configChanges(c.g.started.TurnID, was, now)...)
	return recorded, replayed
}

// takeConfig removes "config" from a turn's start and returns it.
func takeConfig(raw json.RawMessage) ([]events.ConfigFile, json.RawMessage) {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, raw
	}
	var files []events.ConfigFile
	if b, ok := m["config"]; ok {
		_ = json.Unmarshal(b, &files)
		delete(m, "config")
	}
	out, err := json.Marshal(m)
	if err != nil {
		return files, raw
	}
	return files, out
}

// configChanges lists the files of was and now that differ, by path, in was's order then now's.
func configChanges(turnID string, was, now []events.ConfigFile) []ConfigChange {
	var out []ConfigChange
	find := func(fs []events.ConfigFile, path string) (events.ConfigFile, bool) {
		i := slices.IndexFunc(fs, func(f events.ConfigFile) bool { return f.Path == path })
		if i < 0 {
			return events.ConfigFile{}, false
		}
		return fs[i], true
	}
	for _, w := range was {
		if n, ok := find(now, w.Path); !ok || n.SHA256 != w.SHA256 {
			out = append(out, ConfigChange{TurnID: turnID, Layer: w.Layer, Path: w.Path, Recorded: w.SHA256, Now: n.SHA256})
		}
	}
	for _, n := range now {
		if _, ok := find(was, n.Path); !ok {
			out = append(out, ConfigChange{TurnID: turnID, Layer: n.Layer, Path: n.Path, Now: n.SHA256})
		}
	}
	return out
}
