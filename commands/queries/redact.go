package queries

import (
	"bytes"
	"encoding/json"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/events"
)

// RedactEvent returns an event's data as zuno events read shows it without --show-sensitive:
// a prompt receipt (session.prompt.assembled.1) with the blobs debug prompt redacts — each
// section's content and the system and developer messages — replaced by prompt.Redacted,
// every digest, size and id kept; any other event as recorded. Data that does not read as a
// receipt is returned as it is: the log is what it is, and verify reports it.
func RedactEvent(typ string, data json.RawMessage) json.RawMessage {
	if typ != events.TypePromptAssembled {
		return data
	}
	var doc map[string]json.RawMessage
	var r struct {
		Sections []struct {
			SHA256 string `json:"sha256"`
		} `json:"sections"`
		Messages []struct {
			Role   string `json:"role"`
			SHA256 string `json:"sha256"`
		} `json:"messages"`
		Blobs map[string]string `json:"blobs"`
	}
	if json.Unmarshal(data, &doc) != nil || json.Unmarshal(data, &r) != nil || len(r.Blobs) == 0 {
		return data
	}
	hide := func(sha string) {
		if _, ok := r.Blobs[sha]; ok {
			r.Blobs[sha] = prompt.Redacted
		}
	}
	for _, s := range r.Sections {
		hide(s.SHA256)
	}
	for _, m := range r.Messages {
		if m.Role == string(model.RoleSystem) || m.Role == string(model.RoleDeveloper) {
			hide(m.SHA256)
		}
	}
	blobs, err := marshalPlain(r.Blobs)
	if err != nil {
		return data
	}
	doc["blobs"] = blobs
	out, err := marshalPlain(doc)
	if err != nil {
		return data
	}
	return out
}

// marshalPlain is json.Marshal without escaping <, > and &: the marker reads <redacted>.
func marshalPlain(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
