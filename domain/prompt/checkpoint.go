package prompt

import (
	"crypto/sha256"
	"encoding"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"maps"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// Checkpointed is what FromCheckpoint checks a receipt with: an earlier receipt of the same
// run carrying Resume (docs/formats/receipts.md §13), the stored receipts after it, the header
// its header chain ends at, and the transcript's messages after its parts.
type Checkpointed struct {
	ID      string
	Receipt Receipt // stored, with Resume
	// HeaderID and Header: the receipt that records the checkpoint's header (no HeaderBase),
	// as the index found it; the header digest binds what it holds.
	HeaderID string
	Header   Receipt
	// After are the stored receipts after the checkpoint, up to the one checked, by id.
	After map[string]Receipt
	// Logged are the transcript's messages after the checkpoint's Resume.Parts, when the
	// checked receipt was appended: Logged.Parts[i] is conversation position Parts+i.
	Logged Logged
}

// Resumed is a receipt checked from a checkpoint: its header restored and the conversation
// parts from Shown on (with their blobs); the first Shown parts are summed up by ShownDigest.
type Resumed struct {
	Receipt     Receipt
	Parts       int    // the conversation's parts
	From        int    // the parts the checkpoint stands for
	Shown       int    // the parts not listed
	ShownDigest string // the conversation digest after the first Shown parts
	// Request is the provider-visible request with the sections' messages and the listed ones.
	Request model.Request
}

// FromCheckpoint checks the stored receipt id as Verify checks the receipt ExpandLogged
// restores, taking the conversation's first Resume.Parts parts from the checkpoint: their
// digest is the checkpoint's ConversationDigest, their estimate its own less its header's, and
// the actual digest resumes from its SHA-256 state. Everything after them is checked from the
// stored receipts and the transcript's messages. It accepts only: any receipt not stored
// relative to the checkpoint, and any mismatch, is a reason ("" when verified) to take the
// reference path, which reports mismatches (debug prompt --from-start).
//
// The answer is the reference's when the checkpoint is the log's: that is what `zuno verify
// --wire` checks of every receipt, Resume included.
func FromCheckpoint(id string, r Receipt, c Checkpointed) (Resumed, string) {
	rs := c.Receipt.Resume
	if rs == nil || rs.Parts <= 0 {
		return Resumed{}, "the checkpoint receipt records no resume state"
	}
	state, err := base64.StdEncoding.DecodeString(rs.SHA256State)
	if err != nil {
		return Resumed{}, "the checkpoint's resume state is not base64"
	}
	root, why := c.header(r)
	if why != "" {
		return Resumed{}, why
	}
	if r.Model != c.Receipt.Model {
		return Resumed{}, "the step's model is not the checkpoint's"
	}
	chain, why := c.chain(id, r)
	if why != "" {
		return Resumed{}, why
	}
	conv, why := c.rebuild(chain)
	if why != "" {
		return Resumed{}, why
	}
	return c.verify(r, root, conv, state)
}

// header is r's header: the receipt its HeaderBase chain ends at, through the receipts after
// the checkpoint, then the checkpoint's own header. It must be the checkpoint's, whose
// request the SHA-256 state began with.
func (c Checkpointed) header(r Receipt) (Receipt, string) {
	hb := r.HeaderBase
	if hb == nil || len(r.Sections)+len(r.Tools) > 0 {
		return Receipt{}, "the step records a header of its own"
	}
	cur, seen := hb.ReceiptID, map[string]bool{}
	for !seen[cur] {
		seen[cur] = true
		if cur == c.ID || cur == c.HeaderID {
			break
		}
		x, ok := c.After[cur]
		if !ok || x.HeaderBase == nil {
			return Receipt{}, "the step's header is not the checkpoint's"
		}
		cur = x.HeaderBase.ReceiptID
	}
	if cur != c.ID && cur != c.HeaderID {
		return Receipt{}, "the step's header chain has a cycle"
	}
	if c.Header.HeaderBase != nil {
		return Receipt{}, "the checkpoint's header receipt names a base"
	}
	d, err := HeaderDigest(c.Header)
	mine := d
	if b := c.Receipt.HeaderBase; b != nil {
		mine = b.Digest
	} else if c.ID != c.HeaderID {
		mine = ""
	}
	if err != nil || d != hb.Digest || mine != d {
		return Receipt{}, "the step's header is not the checkpoint's"
	}
	return c.Header, ""
}

// chain is r and its ConversationBase receipts back to the checkpoint, oldest first.
func (c Checkpointed) chain(id string, r Receipt) ([]Receipt, string) {
	chain, seen := []Receipt{r}, map[string]bool{id: true}
	for cur := r; ; {
		b := cur.ConversationBase
		if b == nil {
			return nil, "the step's conversation does not continue the checkpoint's run"
		}
		if b.ReceiptID == c.ID {
			break
		}
		next, ok := c.After[b.ReceiptID]
		if !ok || seen[b.ReceiptID] {
			return nil, "the step's conversation does not continue the checkpoint's run"
		}
		seen[b.ReceiptID] = true
		chain, cur = append(chain, next), next
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain, ""
}

// resumedConv is the conversation after the checkpoint's parts, with the link after each.
type resumedConv struct {
	from  int
	start string // the link after the checkpoint's parts
	parts []events.PromptPart
	links []string
	// logged holds the blob of each part taken from the transcript, by index in parts.
	logged map[int]string
	blobs  map[string]string // the chain's, the checked receipt's winning
}

func (rc *resumedConv) link(n int) (string, bool) {
	switch {
	case n == rc.from:
		return rc.start, true
	case n > rc.from && n-rc.from <= len(rc.links):
		return rc.links[n-rc.from-1], true
	}
	return "", false
}

func (rc *resumedConv) add(p events.PromptPart, blob string) bool {
	prev, _ := rc.link(rc.from + len(rc.parts))
	link, err := chainNext(prev, p)
	if err != nil {
		return false
	}
	if blob != "" {
		rc.logged[len(rc.parts)] = blob
	}
	rc.parts, rc.links = append(rc.parts, p), append(rc.links, link)
	return true
}

// rebuild is rebuildConversation from the checkpoint: each receipt's base must end at or after
// the checkpoint's parts, and its logged parts must be the transcript's after them.
func (c Checkpointed) rebuild(chain []Receipt) (resumedConv, string) {
	rs := c.Receipt.Resume
	rc := resumedConv{from: rs.Parts, start: c.Receipt.ConversationDigest, logged: map[int]string{}, blobs: map[string]string{}}
	for i, x := range chain {
		b := x.ConversationBase
		if got, ok := rc.link(b.Parts); !ok || got != b.Digest {
			return rc, "a base the step's conversation names is not the checkpoint's continuation"
		}
		keep := b.Parts - rc.from
		rc.parts, rc.links = rc.parts[:keep], rc.links[:keep]
		for j := range rc.logged {
			if j >= keep {
				delete(rc.logged, j)
			}
		}
		if k := x.LoggedParts; k != 0 {
			at := b.Parts - rc.from
			if k < 0 || at+k > len(c.Logged.Parts) || len(c.Logged.Encoded) != len(c.Logged.Parts) {
				return rc, "the step's transcript messages are not after the checkpoint's"
			}
			for j := at; j < at+k; j++ {
				if !rc.add(c.Logged.Parts[j], c.Logged.Encoded[j]) {
					return rc, "a part does not encode"
				}
			}
		}
		for _, p := range x.Messages[min(len(x.Sections), len(x.Messages)):] {
			if !rc.add(p, "") {
				return rc, "a part does not encode"
			}
		}
		for d, blob := range x.Blobs {
			if _, ok := rc.blobs[d]; !ok || i == len(chain)-1 {
				rc.blobs[d] = blob
			}
		}
	}
	return rc, ""
}

// verify checks r, its header root and its conversation after the checkpoint as Verify checks
// the expanded receipt; state is the checkpoint's SHA-256 state.
func (c Checkpointed) verify(r Receipt, root Receipt, rc resumedConv, state []byte) (Resumed, string) {
	sections := len(root.Sections)
	if len(root.Messages) < sections {
		return Resumed{}, "the header lists fewer messages than sections"
	}
	x := r
	x.Sections, x.Tools, x.HeaderBase, x.ConversationBase, x.LoggedParts = root.Sections, root.Tools, nil, nil, 0
	x.Messages = append(append([]events.PromptPart{}, root.Messages[:sections]...), rc.parts...)
	blobs := map[string]string{}
	maps.Copy(blobs, root.Blobs)
	maps.Copy(blobs, rc.blobs)
	maps.Copy(blobs, r.Blobs)
	for j, b := range rc.logged {
		if have, ok := blobs[rc.parts[j].SHA256]; ok && have != b {
			return Resumed{}, "a receipt records another blob for a transcript message"
		}
		blobs[rc.parts[j].SHA256] = b
	}
	v := &verifier{r: Receipt{Sections: x.Sections, Messages: x.Messages, Tools: x.Tools, Blobs: r.Blobs}, used: map[string]bool{},
		more: func(d string) (string, bool) { b, ok := blobs[d]; return b, ok }}
	if r.SchemaVersion != SchemaVersion || r.Estimator != Estimator {
		return Resumed{}, "the step's schema or estimator is not this build's"
	}
	for d, b := range r.Blobs {
		if !validDigest(d) || digestString(b) != d {
			return Resumed{}, "a blob of the step does not hash to its key"
		}
	}
	v.sections()
	v.messages()
	v.tools()
	for d := range r.Blobs {
		if !v.used[d] {
			v.add(MismatchBlobUnused, "blob", -1, d, "", "")
		}
	}
	if len(v.ms) > 0 {
		return Resumed{}, "the step's receipt has a mismatch: " + v.ms[0].String()
	}
	parts := rc.from + len(rc.parts)
	if got, _ := rc.link(parts); got != r.ConversationDigest {
		return Resumed{}, "the conversation digest differs"
	}
	if !c.estimateHolds(r, root, rc) {
		return Resumed{}, "the estimate differs"
	}
	x.Blobs = nil
	if got, err := AssemblyDigest(x); err != nil || got != r.AssemblyDigest {
		return Resumed{}, "the assembly digest differs"
	}
	req, why := c.request(r, root, rc, blobs)
	if why != "" {
		return Resumed{}, why
	}
	if why := c.actual(r, req, rc, blobs, state); why != "" {
		return Resumed{}, why
	}
	return c.resumed(r, x, rc, req, blobs), ""
}

// estimateHolds checks estimatedInputTokens: the checkpoint's conversation estimate is its own
// total less its header's and its parts' overhead (the header is r's).
func (c Checkpointed) estimateHolds(r, root Receipt, rc resumedConv) bool {
	header := int64(MessageOverheadTokens * len(root.Sections))
	for _, s := range root.Sections {
		header += int64(s.EstimatedTokens)
	}
	for _, p := range root.Tools {
		header += int64(p.EstimatedTokens)
	}
	before := c.Receipt.EstimatedInputTokens - header - int64(MessageOverheadTokens*rc.from)
	n := header + before + int64(MessageOverheadTokens*(rc.from+len(rc.parts)))
	for _, p := range rc.parts {
		n += int64(p.EstimatedTokens)
	}
	return n == r.EstimatedInputTokens
}

// request is the request r proves without the checkpoint's messages: the sections' messages,
// then the messages after the checkpoint.
func (c Checkpointed) request(r, root Receipt, rc resumedConv, blobs map[string]string) (model.Request, string) {
	req := model.Request{Model: r.Model, MaxTokens: r.MaxTokens,
		ToolChoice: model.ToolChoice{Mode: model.ToolChoiceMode(r.ToolChoiceMode), Name: r.ToolChoiceName}}
	for _, s := range root.Sections {
		req.Messages = append(req.Messages, model.Message{Role: model.Role(s.Role), Text: blobs[s.SHA256]})
	}
	for _, p := range rc.parts {
		var m model.Message
		if err := json.Unmarshal([]byte(blobs[p.SHA256]), &m); err != nil {
			return req, "a message blob does not decode"
		}
		req.Messages = append(req.Messages, m)
	}
	for _, p := range root.Tools {
		var t model.Tool
		if err := json.Unmarshal([]byte(blobs[p.SHA256]), &t); err != nil {
			return req, "a tool blob does not decode"
		}
		req.Tools = append(req.Tools, t)
	}
	return req, ""
}

// actual resumes the request digest from the checkpoint's state: the messages after it, each
// a canonical blob (so its encoding is the blob), then the request's end.
func (c Checkpointed) actual(r Receipt, req model.Request, rc resumedConv, blobs map[string]string, state []byte) string {
	wire := make([][]byte, 0, len(req.Messages))
	for _, m := range req.Messages[:len(req.Messages)-len(rc.parts)] {
		w, err := json.Marshal(m)
		if err != nil {
			return "a section does not encode"
		}
		wire = append(wire, w)
	}
	sections := len(wire)
	layout, err := newRequestLayout(req, wire, sections)
	if err != nil || layout.whole {
		return "the request's encoding is not one the checkpoint's state resumes"
	}
	h := sha256.New()
	if err := h.(encoding.BinaryUnmarshaler).UnmarshalBinary(state); err != nil {
		return "the checkpoint's resume state is not a SHA-256 state"
	}
	for _, p := range rc.parts {
		h.Write([]byte{','})
		h.Write([]byte(blobs[p.SHA256]))
	}
	if rs := r.Resume; rs != nil {
		// The step's own checkpoint: the state here, after the whole conversation, which must be
		// the transcript's.
		mid, err := h.(encoding.BinaryMarshaler).MarshalBinary()
		if err != nil || rs.Parts != rc.from+len(rc.parts) || len(c.Logged.Parts) != len(rc.parts) ||
			base64.StdEncoding.EncodeToString(mid) != rs.SHA256State {
			return "the step's own resume state differs"
		}
		for i, p := range rc.parts {
			if p != c.Logged.Parts[i] {
				return "the step's own resume state differs"
			}
		}
	}
	h.Write([]byte{']'})
	h.Write(layout.tail)
	if hex.EncodeToString(h.Sum(nil)) != r.ActualDigest {
		return "the actual digest differs"
	}
	return ""
}

// resumed is the view of a checked receipt: the parts after its own base listed (the step's
// additions), the ones before summed up.
func (c Checkpointed) resumed(r, x Receipt, rc resumedConv, req model.Request, blobs map[string]string) Resumed {
	sections := len(x.Sections)
	shown := r.ConversationBase.Parts
	skip := shown - rc.from
	out := Resumed{Parts: rc.from + len(rc.parts), From: rc.from, Shown: shown}
	out.ShownDigest, _ = rc.link(shown)
	x.Messages = append(x.Messages[:sections:sections], rc.parts[skip:]...)
	x.Blobs = map[string]string{}
	for _, s := range x.Sections {
		x.Blobs[s.SHA256] = blobs[s.SHA256]
	}
	for _, p := range x.Messages[sections:] {
		x.Blobs[p.SHA256] = blobs[p.SHA256]
	}
	for _, p := range x.Tools {
		x.Blobs[p.SHA256] = blobs[p.SHA256]
	}
	out.Receipt = x
	req.Messages = append(req.Messages[:sections:sections], req.Messages[sections+skip:]...)
	out.Request = req
	return out
}
