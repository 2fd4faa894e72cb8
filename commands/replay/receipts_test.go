package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/events"
)

// twoReceipts assembles a turn's first two prompts and returns the first (whole), and the
// second as this build stores it (relative to the first, header left out) and as a log
// recorded before header bases stores it (the header whole).
func twoReceipts(t *testing.T) (first, compact, whole prompt.Receipt) {
	t.Helper()
	in := prompt.Input{Model: "m",
		Agent:        prompt.AgentPrompt{Name: "build", Source: "builtin:build", Trust: prompt.TrustHost, Text: "You build."},
		Tools:        []prompt.ToolDecl{{Tool: model.Tool{Name: "shell", Description: "run a command", Schema: json.RawMessage(`{"type":"object"}`)}}},
		Conversation: []model.Message{{Role: model.RoleUser, Text: "hi"}},
	}
	assemble := func() prompt.Receipt {
		a, err := prompt.Assemble(in)
		if err != nil {
			t.Fatal(err)
		}
		return a.Receipt
	}
	first = assemble()
	in.Conversation = append(in.Conversation, model.Message{Role: model.RoleAssistant, Text: "hello"}, model.Message{Role: model.RoleUser, Text: "more"})
	compact = prompt.Compact(assemble(), &first, "r1", nil)
	if compact.HeaderBase == nil {
		t.Fatal("the second receipt does not leave its header out")
	}
	whole, err := prompt.RestoreHeader(compact, func(id string) (prompt.Receipt, bool) { return first, id == "r1" })
	if err != nil || whole.ConversationBase == nil {
		t.Fatalf("old form: %v, conversation base %v", err, whole.ConversationBase)
	}
	return first, compact, whole
}

// A receipt recorded with its header whole and replayed with it left out (or the other way
// round) is the same prompt: no difference. One whose header differs is a difference.
func TestReceiptHeaderFormsCompareEqual(t *testing.T) {
	first, compact, whole := twoReceipts(t)
	changed := compact
	changed.HeaderBase = &events.PromptHeaderBase{ReceiptID: "r1", Digest: "00" + compact.HeaderBase.Digest[2:]}
	otherTools := whole
	otherTools.Tools = nil
	for _, c := range []struct {
		name               string
		recorded, replayed prompt.Receipt
		differs            bool
	}{
		{"old log, this build", whole, compact, false},
		{"this log, old form", compact, whole, false},
		{"same form", compact, compact, false},
		{"another header digest", whole, changed, true},
		{"other tools", compact, otherTools, true},
	} {
		g := recordedGroup(t,
			events.TurnStarted{SessionID: "s", TurnID: "t"},
			events.PromptAssembled{SessionID: "s", ReceiptID: "r1", PromptReceipt: first},
			events.PromptAssembled{SessionID: "s", ReceiptID: "r2", PromptReceipt: c.recorded})
		replayed, err := events.Encode(events.DeriveID("cmd", 2), events.PromptAssembled{SessionID: "s", ReceiptID: "r2", PromptReceipt: c.replayed},
			events.Metadata{CommandID: "cmd", Actor: "agent:build"})
		if err != nil {
			t.Fatal(err)
		}
		cmp := &comparer{g: g}
		for _, rec := range g.recs[:2] {
			if _, err := cmp.check(rec.Event); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := cmp.check(replayed); err != nil {
			t.Fatal(err)
		}
		if got := len(cmp.diffs) > 0; got != c.differs {
			t.Errorf("%s: differences %+v, want some: %v", c.name, cmp.diffs, c.differs)
		}
	}
}

// A receipt recorded with its conversation's parts and blobs and replayed leaving out the
// transcript's messages (this build restores them from the transcript), or the other way
// round, is the same prompt: no difference. Another conversation, or a blob of no message
// that only one side keeps, is one.
func TestReceiptLoggedFormsCompareEqual(t *testing.T) {
	first, compact, _ := twoReceipts(t)
	// As the turn records them after the first receipt: only blobs the session lacks.
	old := compact
	old.Blobs = map[string]string{}
	for _, p := range compact.Messages {
		old.Blobs[p.SHA256] = compact.Blobs[p.SHA256]
	}
	lean := prompt.LeaveLogged(compact, 3)
	lean.Blobs = map[string]string{}
	if lean.LoggedParts != 2 || len(lean.Messages) != 0 || len(old.Blobs) != 2 {
		t.Fatalf("the second receipt leaves out %d messages and lists %d", lean.LoggedParts, len(lean.Messages))
	}
	other := lean
	other.ConversationDigest, other.ActualDigest = first.ConversationDigest, first.ActualDigest
	sum := sha256.Sum256([]byte("not a message"))
	extraBlob := lean
	extraBlob.Blobs = map[string]string{hex.EncodeToString(sum[:]): "not a message"}
	for d, b := range lean.Blobs {
		extraBlob.Blobs[d] = b
	}
	for _, c := range []struct {
		name               string
		recorded, replayed prompt.Receipt
		differs            bool
	}{
		{"old log, this build", old, lean, false},
		{"this log, old form", lean, old, false},
		{"same form", lean, lean, false},
		{"another conversation", old, other, true},
		{"a blob of no message on one side", extraBlob, lean, true},
	} {
		cmp := &comparer{g: recordedGroup(t, events.TurnStarted{SessionID: "s", TurnID: "t"},
			events.PromptAssembled{SessionID: "s", ReceiptID: "r2", PromptReceipt: c.recorded})}
		replayed, err := events.Encode(events.DeriveID("cmd", 1), events.PromptAssembled{SessionID: "s", ReceiptID: "r2", PromptReceipt: c.replayed},
			events.Metadata{CommandID: "cmd", Actor: "agent:build"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cmp.check(cmp.g.recs[0].Event); err != nil {
			t.Fatal(err)
		}
		if _, err := cmp.check(replayed); err != nil {
			t.Fatal(err)
		}
		if got := len(cmp.diffs) > 0; got != c.differs {
			t.Errorf("%s: differences %+v, want some: %v", c.name, cmp.diffs, c.differs)
		}
	}
}
