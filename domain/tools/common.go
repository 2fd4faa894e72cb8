package tools

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/zuno-run/zuno/domain"
)

// ParamIntent is the common tool parameter intent: a UI label a model may put on any call
// ("Run the tests"). It is not a task type and changes nothing about the call (seeds: the
// general tool parameter intent is only a UI label); the scheduler takes it off before the
// tool's own validator sees the arguments, so no tool refuses it as unknown and no tool's
// state (e.g. a progress fingerprint) sees it. The call as recorded keeps it.
const ParamIntent = "intent"

// SplitCommon returns a call's arguments without the common parameters. Text that is not a
// JSON object, or has no common parameter, is returned unchanged for the tool's validator to
// judge; the other members keep their bytes and order (duplicates included, for the
// validator to refuse). An intent that is not one string is refused here.
func SplitCommon(args string) (string, error) {
	trimmed := bytes.TrimSpace([]byte(args))
	if len(trimmed) == 0 || trimmed[0] != '{' || !strings.Contains(args, `"`+ParamIntent+`"`) || !json.Valid(trimmed) {
		return args, nil
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil {
		return args, nil
	}
	var b strings.Builder
	b.WriteByte('{')
	found := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return args, nil
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return args, nil
		}
		if key == ParamIntent {
			if found {
				return "", domain.Invalid(ParamIntent, "intent appears twice", `send "intent" once`)
			}
			var s string
			if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
				return "", domain.Invalid(ParamIntent, "intent must be a string (a UI label for the call)",
					`send "intent" as a short string such as "Run the tests", or leave it out`)
			}
			found = true
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(raw)
	}
	if !found {
		return args, nil
	}
	b.WriteByte('}')
	return b.String(), nil
}
