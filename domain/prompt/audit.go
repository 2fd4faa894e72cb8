package prompt

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// Auditor verifies a session's stored receipts in log order, each exactly as Verify verifies
// the receipt ExpandLogged restores (docs/formats/receipts.md), in time that grows with the
// session's size rather than its square (docs/storage.md, "`zuno verify`").
//
// A receipt is stored relative to the one before it: its header names an earlier receipt's
// (HeaderBase) and its conversation a prefix of the previous receipt's (ConversationBase).
// Expanding each receipt on its own walks both chains back to the session's start, and
// Verify then re-hashes a conversation that grew by a message or two. The Auditor keeps the
// previous receipt expanded and verified instead: its header, its conversation with the chain
// link after each part, the running token estimate, and the request's messages with the
// SHA-256 state after them. A receipt whose bases are that state is checked on what it adds:
// its own blobs, its new parts (each as Verify checks a part), and the totals and digests,
// which resume from the state. Anything else (the first receipt, a header of its own, a base
// further back, a compaction) and anything that does not pass takes the reference path,
// ExpandLogged and Verify, so a failure is reported with Verify's own mismatches.
//
// Soundness rests on one fact: a blob that hashes to its key is the only content of that key,
// and every blob the kept state was built from passed that check in an earlier receipt or in
// this one. The Auditor stops being useful at a session's first failing receipt: callers
// report that receipt and go no further.
type Auditor struct {
	lookup func(id string) (Receipt, bool)
	pool   func(digest string) (string, bool)
	roots  map[string]string // receipt id → the receipt its HeaderBase chain ends at ("": none)
	last   *audited
}

// NewAuditor returns an auditor that finds receipts (the session's, its fork history's) and
// blobs (every receipt's, in log order, then the transcript's) as ExpandLogged does.
func NewAuditor(lookup func(id string) (Receipt, bool), pool func(digest string) (string, bool)) *Auditor {
	return &Auditor{lookup: lookup, pool: pool, roots: map[string]string{}}
}

// audited is the last receipt verified, expanded.
type audited struct {
	id    string
	epoch int
	// The header: the receipt its HeaderBase chain ends at, and its digest.
	root, headerDigest string
	sections           []events.PromptSection
	sectionParts       []events.PromptPart
	tools              []events.PromptPart
	toolDecls          []model.Tool
	headerTokens       int64
	// header is the header's members as the assembly digest's ReceiptJSON writes them, and
	// layout the request's encoding around its conversation for the last receipt's model,
	// output bound and tool choice (layoutOf): both the same from one receipt to the next.
	header   []byte
	layout   requestLayout
	layoutOf Receipt
	// The conversation, the chain link after each part and the estimate of the first i+1.
	conv   []events.PromptPart
	links  []string
	tokens []int64
	// The request's messages (sections first) and their encodings, and the digest's state.
	msgs []model.Message
	wire [][]byte
	sum  History
}

// Check verifies the stored receipt id, appended when the session's transcript held logged
// (LoggedMessages); epoch changes whenever a part of logged that an earlier call saw may have
// changed (a compaction, a result recorded late). It returns the provider-visible request
// the receipt proves, for a wire check; its messages are the Auditor's and stay as they are
// only until the next Check.
func (a *Auditor) Check(id string, stored Receipt, logged Logged, epoch int) (model.Request, error) {
	if st, ok := a.fast(id, stored, logged, epoch); ok {
		a.last = st
		return st.request(stored), nil
	}
	a.last = nil
	full, err := ExpandLogged(stored, a.lookup, a.pool, logged.Parts)
	if err == nil {
		err = Verify(full)
	}
	if err == nil {
		err = CheckResumeLogged(full, logged.Parts)
	}
	if err != nil {
		return model.Request{}, err
	}
	st, err := a.adopt(id, full, epoch)
	if err != nil {
		return model.Request{}, err
	}
	a.last = st
	return st.request(stored), nil
}

// root is the receipt id's HeaderBase chain's end, "" for a missing receipt or a cycle.
func (a *Auditor) root(id string) string {
	if r, ok := a.roots[id]; ok {
		return r
	}
	a.roots[id] = "" // a cycle through id ends here
	r, ok := a.lookup(id)
	out := ""
	switch {
	case !ok:
	case r.HeaderBase == nil:
		out = id
	default:
		out = a.root(r.HeaderBase.ReceiptID)
	}
	a.roots[id] = out
	return out
}

// fast checks r against the last receipt's state, extended in place; false when r is not
// stored relative to it or does not pass (the caller then takes the reference path).
func (a *Auditor) fast(id string, r Receipt, logged Logged, epoch int) (*audited, bool) {
	st := a.last
	hb := r.HeaderBase
	if st == nil || hb == nil || r.SchemaVersion != SchemaVersion || r.Estimator != Estimator ||
		len(r.Sections)+len(r.Tools) > 0 || hb.Digest != st.headerDigest || a.root(hb.ReceiptID) != st.root {
		return nil, false
	}
	n := 0
	if b := r.ConversationBase; b != nil {
		if b.ReceiptID != st.id || st.epoch != epoch || b.Parts < 0 || b.Parts > len(st.conv) || st.link(b.Parts) != b.Digest {
			return nil, false
		}
		n = b.Parts
	}
	k := r.LoggedParts
	if k != 0 && (k < 0 || n+k > len(logged.Parts) || len(logged.Encoded) != len(logged.Parts) || len(logged.Decoded) != len(logged.Parts)) {
		return nil, false
	}
	st.truncate(n)
	v := &verifier{r: Receipt{Blobs: r.Blobs}, used: map[string]bool{}, more: a.pool}
	// A logged part was encoded from the transcript by LoggedMessages, so it passes every
	// check Verify makes of a part (kind, canonical blob, role, digest, size, estimate) when
	// the blob the reference would take for it is that encoding; the receipt's claim about it
	// is the conversation digest's to check. The reference takes the receipt's own copy, else
	// the pool's (any receipt's before the transcript's, docs/formats/receipts.md §3): a copy
	// that differs does not hash to the digest, and the reference path reports it.
	for j := n; j < n+k; j++ {
		p := logged.Parts[j]
		if b, ok := r.Blobs[p.SHA256]; ok {
			if b != logged.Encoded[j] {
				return nil, false
			}
			v.used[p.SHA256] = true
		} else if b, ok := a.pool(p.SHA256); ok && b != logged.Encoded[j] {
			return nil, false
		}
		if !st.append(p, logged.Decoded[j], logged.Encoded[j]) {
			return nil, false
		}
	}
	for _, p := range r.Messages {
		m, raw, ok := v.conversationPart(len(st.sections)+len(st.conv), p)
		if !ok || !st.append(p, m, raw) {
			return nil, false
		}
	}
	for d, b := range r.Blobs {
		if !v.used[d] || !validDigest(d) || digestString(b) != d {
			return nil, false
		}
	}
	st.id, st.epoch = id, epoch
	return st, st.link(len(st.conv)) == r.ConversationDigest && st.estimate() == r.EstimatedInputTokens &&
		st.assemblyDigest(r) == r.AssemblyDigest && st.actualDigest(r) == r.ActualDigest && st.resumeHolds(r, logged)
}

// resumeHolds checks r's checkpoint (docs/formats/receipts.md §13) against the state
// actualDigest has just left: the conversation is the transcript's messages, all of them, and
// the digest's state after them is the one recorded.
func (st *audited) resumeHolds(r Receipt, logged Logged) bool {
	rs := r.Resume
	if rs == nil {
		return true
	}
	n := len(st.conv)
	if rs.Parts != n || len(logged.Parts) != n || st.sum.sumParts != n || st.layout.whole || st.sum.sumPrefix != st.layout.prefix ||
		!slices.Equal(st.conv, logged.Parts) {
		return false
	}
	return base64.StdEncoding.EncodeToString(st.sum.sumState) == rs.SHA256State
}

// adopt keeps full, a verified expanded receipt, as the state the next receipt resumes from.
func (a *Auditor) adopt(id string, full Receipt, epoch int) (*audited, error) {
	d, err := HeaderDigest(full)
	if err != nil {
		return nil, err
	}
	h := headerOf(full)
	st := &audited{id: id, epoch: epoch, root: a.root(id), headerDigest: d, sections: h.Sections, sectionParts: h.Messages, tools: h.Tools}
	for _, s := range st.sections {
		st.headerTokens += int64(s.EstimatedTokens)
		m := model.Message{Role: model.Role(s.Role), Text: full.Blobs[s.SHA256]}
		w, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		st.msgs, st.wire = append(st.msgs, m), append(st.wire, w)
	}
	st.headerTokens += int64(MessageOverheadTokens * len(st.sections))
	for _, p := range st.tools {
		st.headerTokens += int64(p.EstimatedTokens)
		var t model.Tool
		if err := json.Unmarshal([]byte(full.Blobs[p.SHA256]), &t); err != nil {
			return nil, err
		}
		st.toolDecls = append(st.toolDecls, t)
	}
	for _, p := range full.Messages[len(st.sections):] {
		raw := full.Blobs[p.SHA256]
		var m model.Message
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return nil, err
		}
		if !st.append(p, m, raw) {
			return nil, &ReceiptError{Mismatches: []Mismatch{{Code: MismatchConversation, Subject: "receipt", Index: -1}}}
		}
	}
	if st.header, err = headerMembers(st.sections, st.sectionParts, st.tools); err != nil {
		return nil, err
	}
	st.actualDigest(full) // primes the digest's state: the next receipt hashes only its new messages
	return st, nil
}

// link is the conversation digest of the first n parts.
func (st *audited) link(n int) string {
	if n == 0 {
		return ""
	}
	return st.links[n-1]
}

// truncate keeps the first n parts of the conversation.
func (st *audited) truncate(n int) {
	st.conv, st.links, st.tokens = st.conv[:n], st.links[:n], st.tokens[:n]
	st.msgs, st.wire = st.msgs[:len(st.sections)+n], st.wire[:len(st.sections)+n]
	if st.sum.sumParts > n {
		st.sum.sumParts = 0 // the saved state covers parts that are gone
	}
}

// append adds a checked part, the message its blob decodes to and the blob.
func (st *audited) append(p events.PromptPart, m model.Message, raw string) bool {
	link, err := chainNext(st.link(len(st.conv)), p)
	if err != nil {
		return false
	}
	total := int64(p.EstimatedTokens)
	if n := len(st.tokens); n > 0 {
		total += st.tokens[n-1]
	}
	st.conv, st.links, st.tokens = append(st.conv, p), append(st.links, link), append(st.tokens, total)
	st.msgs, st.wire = append(st.msgs, m), append(st.wire, []byte(raw))
	return true
}

// estimate is estimateInput of the expanded receipt.
func (st *audited) estimate() int64 {
	n := st.headerTokens + int64(MessageOverheadTokens*len(st.conv))
	if k := len(st.tokens); k > 0 {
		n += st.tokens[k-1]
	}
	return n
}

// assemblyDigest is AssemblyDigest of the expanded receipt. Its ReceiptJSON is r's with the
// header's members, which are the larger part of it and the same at every receipt of the
// state: r is encoded without them and st.header is put where they go.
func (st *audited) assemblyDigest(r Receipt) string {
	r.Sections, r.Messages, r.Tools, r.HeaderBase = nil, nil, nil, nil
	b, err := assemblyJSON(r)
	at := bytes.Index(b, []byte(headerHole))
	if err != nil || at < 0 {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(assemblyPrefix))
	h.Write(b[:at])
	h.Write(st.header)
	h.Write(b[at+len(headerHole):])
	return hex.EncodeToString(h.Sum(nil))
}

// headerMembers are the members the assembly digest's ReceiptJSON writes for a header: its
// sections, its section parts and its tools (docs/formats/receipts.md §8).
func headerMembers(sections []events.PromptSection, sectionParts, tools []events.PromptPart) ([]byte, error) {
	hdr, err := json.Marshal(struct {
		Sections []events.PromptSection `json:"sections"`
		Messages []events.PromptPart    `json:"messages"`
		Tools    []events.PromptPart    `json:"tools"`
	}{sections, sectionParts[:min(len(sectionParts), len(sections))], tools})
	if err != nil {
		return nil, err
	}
	return hdr[1 : len(hdr)-1], nil
}

// headerHole is how ReceiptJSON writes a receipt without sections, messages or tools; a
// string member cannot hold it (its quotes would be escaped), so its first occurrence is
// the members themselves.
const headerHole = `"sections":null,"messages":null,"tools":null`

func (st *audited) actualDigest(r Receipt) string {
	req := st.request(r)
	if l := st.layoutOf; st.layout.head == nil && !st.layout.whole || l.Model != r.Model || l.MaxTokens != r.MaxTokens ||
		l.ToolChoiceMode != r.ToolChoiceMode || l.ToolChoiceName != r.ToolChoiceName {
		layout, err := newRequestLayout(req, st.wire, len(st.sections))
		if err != nil {
			return ""
		}
		st.layout = layout
		st.layoutOf = Receipt{Model: r.Model, MaxTokens: r.MaxTokens, ToolChoiceMode: r.ToolChoiceMode, ToolChoiceName: r.ToolChoiceName}
	}
	d, err := st.layout.digest(req, st.wire, len(st.sections), &st.sum)
	if err != nil {
		return ""
	}
	return d
}

// request is the request Reconstruct rebuilds from the expanded receipt.
func (st *audited) request(r Receipt) model.Request {
	n := len(st.msgs)
	return model.Request{Model: r.Model, MaxTokens: r.MaxTokens, Messages: st.msgs[:n:n], Tools: st.toolDecls,
		ToolChoice: model.ToolChoice{Mode: model.ToolChoiceMode(r.ToolChoiceMode), Name: r.ToolChoiceName}}
}
