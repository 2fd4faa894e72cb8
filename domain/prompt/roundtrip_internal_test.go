package prompt

import (
	"reflect"
	"testing"

	"github.com/zuno-run/zuno/domain/model"
)

// messageRoundTrip gives roundTrip's blob and decoded message, byte for byte and field for
// field (nil lists where the blob omits them), whichever way it takes: one row per way a
// message's encoding may not be its own fixed point, and the ways it is.
func TestMessageRoundTripIsTheRoundTrip(t *testing.T) {
	for name, m := range map[string]model.Message{
		"plain":                      {Role: model.RoleUser, Text: "go"},
		"html and U+2028":            {Role: model.RoleUser, Text: "<a> & \u2028 \u2029 é 中"},
		"controls":                   {Role: model.RoleTool, ToolCallID: "c", Text: "\x00\x01\t\n\r\x7f\"\\", IsError: true},
		"invalid UTF-8":              {Role: model.RoleUser, Text: "a\xffb\xe4\xb8c"},
		"invalid UTF-8 in a call":    {Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c", Name: "n", Arguments: "{\"a\":\"\xed\xa0\x80\"}"}}},
		"U+FFFD itself":              {Role: model.RoleUser, Text: "\uFFFD"},
		"the escape as text":         {Role: model.RoleUser, Text: `\ufffd`},
		"empty lists":                {Role: model.RoleAssistant, ToolCalls: []model.ToolCall{}, Reasoning: []model.Reasoning{}},
		"calls and reasoning":        {Role: model.RoleAssistant, Text: "t", ToolCalls: []model.ToolCall{{ID: "c", ProviderID: "p", Name: "n", Arguments: `{}`}}, Reasoning: []model.Reasoning{{ID: "r", Summary: "s", EncryptedContent: "e"}}},
		"invalid UTF-8 in reasoning": {Role: model.RoleAssistant, Reasoning: []model.Reasoning{{ID: "r\xc0"}}},
		"empty":                      {},
	} {
		t.Run(name, func(t *testing.T) { sameRoundTrip(t, m) })
	}
}

func sameRoundTrip(t *testing.T, m model.Message) {
	t.Helper()
	blob, back, err := messageRoundTrip(m)
	wantBlob, wantBack, wantErr := roundTrip(m)
	if string(blob) != string(wantBlob) || !reflect.DeepEqual(back, wantBack) || (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: %s %#v %v, the round trip gives %s %#v %v", m.Text, blob, back, err, wantBlob, wantBack, wantErr)
	}
}

func FuzzMessageRoundTrip(f *testing.F) {
	f.Add("user", "a\xffb", "", "", "", "", false)
	f.Add("assistant", "<&>", "c", "n", "{\"a\":1}", "r", true)
	f.Fuzz(func(t *testing.T, role, text, callID, name, args, reasoning string, isError bool) {
		m := model.Message{Role: model.Role(role), Text: text, IsError: isError}
		if callID != "" {
			m.ToolCalls = []model.ToolCall{{ID: callID, Name: name, Arguments: args}}
			m.ToolCallID = callID
		}
		if reasoning != "" {
			m.Reasoning = []model.Reasoning{{ID: reasoning, Summary: text}}
		}
		sameRoundTrip(t, m)
	})
}
