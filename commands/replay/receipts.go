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

// loggedBlobsAligned returns a recorded and a replayed prompt receipt without the blobs of
// conversation messages that only one of them carries: a log recorded before receipts left
// out the blobs of messages the transcript holds stores them, and this build rebuilds them
// from the transcript (docs/storage.md, "Bytes per step"). A blob is named by its SHA-256 and
// each receipt's message list, compared as it is, names its messages by that digest, so a
// message that differs still shows; only where its bytes are kept does not. A blob of a
// section or a tool, or one both keep, is compared as it was.
func loggedBlobsAligned(recorded, replayed json.RawMessage) (json.RawMessage, json.RawMessage) {
	var a, b events.PromptAssembled
	if json.Unmarshal(recorded, &a) != nil || json.Unmarshal(replayed, &b) != nil {
		return recorded, replayed
	}
	da, db := dropOneSided(a.PromptReceipt, b.Blobs), dropOneSided(b.PromptReceipt, a.Blobs)
	if !da && !db {
		return recorded, replayed
	}
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return recorded, replayed
	}
	return ja, jb
}

// dropOneSided deletes from r's blobs those of its conversation messages that other lacks,
// and reports whether it deleted any.
func dropOneSided(r prompt.Receipt, other map[string]string) bool {
	dropped := false
	for _, p := range r.Messages {
		if _, mine := r.Blobs[p.SHA256]; p.Kind == prompt.PartMessage && mine {
			if _, theirs := other[p.SHA256]; !theirs {
				delete(r.Blobs, p.SHA256)
				dropped = true
			}
		}
	}
	return dropped
}
