package replay

import (
	"encoding/json"

	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/events"
)

// headersRestored returns a recorded and a replayed prompt receipt with the header (sections,
// section messages, tools) each leaves out put back from the turn's recorded receipts, when
// either leaves it out: a log recorded before receipts named a header base stores every
// header whole, and this build stores an unchanged one as a reference (docs/events.md,
// HeaderBase). Both forms prove the same prompt, so only what they prove is compared. A
// header that cannot be restored leaves both as they were, and the difference shows.
func (c *comparer) headersRestored(recorded, replayed json.RawMessage) (json.RawMessage, json.RawMessage) {
	var a, b events.PromptAssembled
	if json.Unmarshal(recorded, &a) != nil || json.Unmarshal(replayed, &b) != nil || (a.HeaderBase == nil && b.HeaderBase == nil) {
		return recorded, replayed
	}
	lookup := func(id string) (prompt.Receipt, bool) {
		for _, p := range c.g.payloads {
			if r, ok := p.(events.PromptAssembled); ok && r.ReceiptID == id {
				return r.PromptReceipt, true
			}
		}
		return prompt.Receipt{}, false
	}
	ra, errA := prompt.RestoreHeader(a.PromptReceipt, lookup)
	rb, errB := prompt.RestoreHeader(b.PromptReceipt, lookup)
	if errA != nil || errB != nil {
		return recorded, replayed
	}
	a.PromptReceipt, b.PromptReceipt = ra, rb
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return recorded, replayed
	}
	return ja, jb
}

// conversationsByDigest returns a recorded and a replayed prompt receipt with their
// conversation compared by its digests alone when the two store it in different forms: a log
// recorded before receipts left out the transcript's messages lists their parts and blobs, and
// this build leaves them out (loggedParts) and restores them from the transcript
// (docs/storage.md, "Bytes per step"). Both forms prove the same prompt: the conversation
// digest, still compared, chains every part of the conversation (role, size, estimate and the
// SHA-256 of its content), and the actual digest covers the request itself, so a message that
// differs still shows. Sections, tools and their blobs are compared as they were.
func conversationsByDigest(recorded, replayed json.RawMessage) (json.RawMessage, json.RawMessage) {
	var a, b events.PromptAssembled
	if json.Unmarshal(recorded, &a) != nil || json.Unmarshal(replayed, &b) != nil || sameForm(a.PromptReceipt, b.PromptReceipt) {
		return recorded, replayed
	}
	a.PromptReceipt, b.PromptReceipt = withoutConversation(a.PromptReceipt), withoutConversation(b.PromptReceipt)
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return recorded, replayed
	}
	return ja, jb
}

// sameForm reports whether two receipts leave out the same number of logged messages and keep
// blobs under the same digests.
func sameForm(a, b prompt.Receipt) bool {
	if a.LoggedParts != b.LoggedParts || len(a.Blobs) != len(b.Blobs) {
		return false
	}
	for d := range a.Blobs {
		if _, ok := b.Blobs[d]; !ok {
			return false
		}
	}
	return true
}

// withoutConversation returns r without its conversation's parts, the number it leaves out,
// and the blobs only those parts reference.
func withoutConversation(r prompt.Receipt) prompt.Receipt {
	kept := map[string]bool{}
	for _, s := range r.Sections {
		kept[s.SHA256] = true
	}
	for _, t := range r.Tools {
		kept[t.SHA256] = true
	}
	var msgs []events.PromptPart
	blobs := make(map[string]string, len(r.Blobs))
	for d, b := range r.Blobs {
		blobs[d] = b
	}
	for _, p := range r.Messages {
		if p.Kind == prompt.PartMessage {
			if !kept[p.SHA256] {
				delete(blobs, p.SHA256)
			}
			continue
		}
		msgs = append(msgs, p)
	}
	r.Messages, r.Blobs, r.LoggedParts = msgs, blobs, 0
	return r
}
