package queries_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/events"
)

// events read shows a receipt as debug prompt does: sections and host instructions redacted,
// the conversation, digests and sizes kept; other events untouched.
func TestRedactEvent(t *testing.T) {
	r := events.PromptAssembled{SessionID: "ses_1", ReceiptID: "rcp_1", PromptReceipt: events.PromptReceipt{
		Sections: []events.PromptSection{{ID: "agents.project", SHA256: "s1", Bytes: 6}},
		Messages: []events.PromptPart{{Kind: "section", Section: "agents.project", Role: "system", SHA256: "s1"},
			{Kind: "message", Role: "developer", SHA256: "d1"}, {Kind: "message", Role: "user", SHA256: "u1"}},
		Blobs: map[string]string{"s1": "SECRET-AGENTS", "d1": "SECRET-DEV", "u1": "hello there"}}}
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	out := string(queries.RedactEvent(events.TypePromptAssembled, data))
	for _, secret := range []string{"SECRET-AGENTS", "SECRET-DEV"} {
		if strings.Contains(out, secret) {
			t.Errorf("%s shown: %s", secret, out)
		}
	}
	for _, kept := range []string{"hello there", `"s1":"<redacted>"`, `"receiptId":"rcp_1"`, `"bytes":6`} {
		if !strings.Contains(out, kept) {
			t.Errorf("%s not kept: %s", kept, out)
		}
	}
	other := json.RawMessage(`{"text":"SECRET-AGENTS"}`)
	if got := queries.RedactEvent(events.TypeUserMessageAppended, other); string(got) != string(other) {
		t.Errorf("another event changed: %s", got)
	}
	if got := queries.RedactEvent(events.TypePromptAssembled, json.RawMessage(`not json`)); string(got) != "not json" {
		t.Errorf("malformed data changed: %s", got)
	}
}

// FuzzRedactEvent: whatever a log holds, redaction never fails, a receipt's output is JSON,
// and no section's blob survives it.
func FuzzRedactEvent(f *testing.F) {
	f.Add(`{"sections":[{"sha256":"a"}],"blobs":{"a":"SECRET","b":"kept"}}`)
	f.Add(`{"messages":[{"role":"system","sha256":"a"}],"blobs":{"a":"x"}}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, data string) {
		out := queries.RedactEvent(events.TypePromptAssembled, json.RawMessage(data))
		var r struct {
			Sections []struct {
				SHA256 string `json:"sha256"`
			} `json:"sections"`
			Blobs map[string]string `json:"blobs"`
		}
		if json.Unmarshal([]byte(data), &r) != nil || len(r.Blobs) == 0 {
			return
		}
		var got struct {
			Blobs map[string]string `json:"blobs"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("redacted receipt is not JSON: %v: %s", err, out)
		}
		for _, s := range r.Sections {
			if v, ok := got.Blobs[s.SHA256]; ok && v != "<redacted>" {
				t.Fatalf("section blob %q kept: %q", s.SHA256, v)
			}
		}
	})
}
