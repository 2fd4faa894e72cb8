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
