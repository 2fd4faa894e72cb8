package prompt

import (
	"bytes"
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// ResumeEvery is how many conversation parts apart receipts record a checkpoint (Resume): a
// receipt does when its conversation reaches a multiple of it past its base's, so `zuno debug
// prompt --step N` reads at most about this many parts' steps after the checkpoint before N
// (docs/formats/receipts.md §13). About 200 bytes a checkpoint, a dozen steps of one tool call
// apart.
const ResumeEvery = 32

// MismatchResume is a Resume whose part count, transcript or SHA-256 state is not the
// receipt's (docs/formats/receipts.md §13).
const MismatchResume = "resume_state"

// MarkResume gives stored, the receipt as it is stored, its checkpoint when it is due: its
// conversation (conv parts) is exactly the transcript's first logged messages, h's digest state
// is the one Assemble left after them, and the conversation has reached a multiple of
// ResumeEvery past its base (or it has none, as at a turn's first step). The state is the one
// the turn computed its actual digest with, so it costs nothing to record.
func MarkResume(stored Receipt, conv, logged int, h *History) Receipt {
	base := 0
	if b := stored.ConversationBase; b != nil {
		base = b.Parts
	}
	if h == nil || conv <= 0 || conv != logged || h.sumParts != conv || len(h.sumState) == 0 ||
		(stored.ConversationBase != nil && conv/ResumeEvery <= base/ResumeEvery) || conv < ResumeEvery {
		return stored
	}
	stored.Resume = &events.PromptResume{Parts: conv, SHA256State: base64.StdEncoding.EncodeToString(h.sumState)}
	return stored
}

// requestHead is how the request JSON (RequestBytes) opens, up to its messages.
func requestHead(modelName string) ([]byte, error) {
	name, err := json.Marshal(modelName)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(`{"model":`), name...), `,"messages":`...), nil
}

// sha256State is the SHA-256 state after b, as a Resume records it.
func sha256State(b []byte) string {
	h := sha256.New()
	h.Write(b)
	state, err := h.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(state)
}

// resume checks an expanded receipt's Resume against its request JSON, body (Verify's step
// 12): the part count is the conversation's, and the state is SHA-256's after the request's
// bytes up to the "]" that closes its messages.
func (v *verifier) resume(req model.Request, body []byte) {
	rs := v.r.Resume
	if rs == nil {
		return
	}
	conv := len(v.r.Messages) - min(len(v.r.Sections), len(v.r.Messages))
	if rs.Parts != conv || conv == 0 {
		v.add(MismatchResume, "receipt", -1, "parts", strconv.Itoa(conv), strconv.Itoa(rs.Parts))
		return
	}
	head, err := requestHead(req.Model)
	msgs, merr := json.Marshal(req.Messages)
	end := len(head) + len(msgs) - 1
	if err != nil || merr != nil || !bytes.HasPrefix(body, head) || end >= len(body) || body[end] != ']' {
		v.add(MismatchResume, "receipt", -1, "sha256State", "a request JSON whose messages follow its model", "")
		return
	}
	if got := sha256State(body[:end]); got != rs.SHA256State {
		v.add(MismatchResume, "receipt", -1, "sha256State", got, rs.SHA256State)
	}
}

// CheckResumeLogged checks what Verify cannot see in an expanded receipt alone: that a
// Resume's parts are the transcript's messages when the receipt was appended, all of them
// (logged, LoggedMessages' parts), and nothing else. A checkpoint stands for that prefix of
// the transcript, so a later step read from it takes the messages after it from the events.
func CheckResumeLogged(full Receipt, logged []events.PromptPart) error {
	rs := full.Resume
	if rs == nil {
		return nil
	}
	conv := full.Messages[min(len(full.Sections), len(full.Messages)):]
	if len(logged) == rs.Parts && slices.Equal(conv, logged) {
		return nil
	}
	return &ReceiptError{Mismatches: []Mismatch{{Code: MismatchResume, Subject: "receipt", Index: -1, ID: "transcript",
		Want: fmt.Sprintf("a conversation that is the transcript's %d messages", rs.Parts),
		Got:  fmt.Sprintf("%d parts, the transcript holding %d messages", len(conv), len(logged))}}}
}
