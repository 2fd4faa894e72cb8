package prompt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// Mismatch codes of a ReceiptError.
const (
	MismatchSchemaVersion   = "schema_version"
	MismatchEstimator       = "estimator"
	MismatchBlobKey         = "blob_key"
	MismatchBlobDigest      = "blob_digest"
	MismatchBlobMissing     = "blob_missing"
	MismatchBlobUnused      = "blob_unreferenced"
	MismatchBlobEncoding    = "blob_not_canonical"
	MismatchID              = "id"
	MismatchOrder           = "order"
	MismatchLane            = "lane"
	MismatchRole            = "role"
	MismatchTrust           = "trust"
	MismatchKind            = "kind"
	MismatchSectionRef      = "section_ref"
	MismatchDigest          = "digest"
	MismatchSourceDigest    = "source_digest"
	MismatchBytes           = "bytes"
	MismatchTokens          = "estimated_tokens"
	MismatchName            = "name"
	MismatchInputTokens     = "estimated_input_tokens"
	MismatchAssemblyDigest  = "assembly_digest"
	MismatchActualDigest    = "actual_digest"
	MismatchNotReconstructs = "not_reconstructible"
	MismatchConversation    = "conversation_digest"
	MismatchBase            = "conversation_base"
	MismatchHeaderBase      = "header_base"
)

// Mismatch is one thing a receipt claims that its own content does not bear out.
type Mismatch struct {
	Code string
	// Subject is "receipt", "blob", "section", "message" or "tool".
	Subject string
	// Index is the position in Sections, Messages or Tools; -1 for the receipt and blobs.
	Index int
	// ID is the section id, the tool name or the blob digest.
	ID        string
	Want, Got string
}

func (m Mismatch) String() string {
	var b strings.Builder
	b.WriteString(m.Subject)
	if m.Index >= 0 {
		fmt.Fprintf(&b, "[%d]", m.Index)
	}
	if m.ID != "" {
		b.WriteString(" ")
		b.WriteString(strconv.Quote(m.ID))
	}
	b.WriteString(": ")
	b.WriteString(m.Code)
	if m.Want != "" || m.Got != "" {
		fmt.Fprintf(&b, " (want %s, got %s)", abbreviate(m.Want), abbreviate(m.Got))
	}
	return b.String()
}

func abbreviate(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return strconv.Quote(s)
}

// ReceiptError lists every mismatch Verify found, in a fixed order: receipt fields, blobs,
// sections, messages, tools, then the totals and the two digests. A changed byte in a stored
// blob shows up as the blob, each section or message using it, and the actual digest.
type ReceiptError struct {
	Mismatches []Mismatch
}

// Code returns the stable error code.
func (e *ReceiptError) Code() string { return CodeReceiptMismatch }

func (e *ReceiptError) Error() string {
	return CodeReceiptMismatch + ": " + e.Detail() + "; treat the recorded prompt as untrustworthy and investigate the event log"
}

// Detail is the message without its code and advice, for an error that wraps it and states
// both itself (each stated once: docs/errors.md).
func (e *ReceiptError) Detail() string {
	const shown = 5
	var b strings.Builder
	fmt.Fprintf(&b, "the prompt receipt does not prove its request (%d mismatches): ", len(e.Mismatches))
	for i, m := range e.Mismatches[:min(len(e.Mismatches), shown)] {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(m.String())
	}
	if n := len(e.Mismatches) - shown; n > 0 {
		fmt.Fprintf(&b, "; and %d more", n)
	}
	return b.String()
}

// Has reports whether the error lists a mismatch with this code about the subject with this id
// ("" matches any id).
func (e *ReceiptError) Has(code, subject, id string) bool {
	return slices.ContainsFunc(e.Mismatches, func(m Mismatch) bool {
		return m.Code == code && m.Subject == subject && (id == "" || m.ID == id)
	})
}

type verifier struct {
	r    Receipt
	ms   []Mismatch
	used map[string]bool
	// more finds a blob r does not hold (nil: none): an Auditor checks a receipt's new parts
	// without building its expanded blob map.
	more func(digest string) (string, bool)
}

func (v *verifier) add(code, subject string, index int, id, want, got string) {
	v.ms = append(v.ms, Mismatch{Code: code, Subject: subject, Index: index, ID: id, Want: want, Got: got})
}

// blob returns the content stored under d, recording a mismatch when it is absent.
func (v *verifier) blob(subject string, index int, id, d string) (string, bool) {
	v.used[d] = true
	b, ok := v.r.Blobs[d]
	if !ok && v.more != nil {
		b, ok = v.more(d)
	}
	if !ok {
		v.add(MismatchBlobMissing, subject, index, id, d, "")
	}
	return b, ok
}

// Verify re-derives everything a receipt claims from its blobs: each blob's digest, every
// section's and part's digest, size and estimate, the lane order, the total estimate, the
// assembly digest, and the actual digest of the request rebuilt from the blobs. It returns
// nil or a *ReceiptError naming each mismatch.
//
// Verify proves a receipt is self-consistent; that it is the receipt that was appended is
// the event log's job: command-derived ids, and the hash chain `zuno verify` walks
// (docs/storage.md, "Hash chain").
func Verify(r Receipt) error {
	v := &verifier{r: r, used: map[string]bool{}}
	if r.SchemaVersion != SchemaVersion {
		v.add(MismatchSchemaVersion, "receipt", -1, "", strconv.Itoa(SchemaVersion), strconv.Itoa(r.SchemaVersion))
	}
	if r.Estimator != Estimator {
		v.add(MismatchEstimator, "receipt", -1, "", Estimator, r.Estimator)
	}
	keys := make([]string, 0, len(r.Blobs))
	for k := range r.Blobs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !validDigest(k) {
			v.add(MismatchBlobKey, "blob", -1, k, "lower-case hex SHA-256", k)
		} else if got := digestString(r.Blobs[k]); got != k {
			v.add(MismatchBlobDigest, "blob", -1, k, k, got)
		}
	}
	v.sections()
	v.messages()
	v.tools()
	for _, k := range keys {
		if !v.used[k] {
			v.add(MismatchBlobUnused, "blob", -1, k, "", "")
		}
	}
	if r.ConversationBase != nil {
		v.add(MismatchBase, "receipt", -1, r.ConversationBase.ReceiptID, "an expanded receipt (prompt.Expand)", "a receipt relative to another")
	}
	if r.HeaderBase != nil {
		v.add(MismatchHeaderBase, "receipt", -1, r.HeaderBase.ReceiptID, "an expanded receipt (prompt.Expand)", "a receipt relative to another")
	}
	if r.LoggedParts != 0 {
		v.add(MismatchBase, "receipt", -1, "transcript", "an expanded receipt (prompt.ExpandLogged)", "a receipt that leaves out its transcript's messages")
	}
	if got, err := ConversationDigest(v.r.Messages[min(len(v.r.Messages), len(v.r.Sections)):]); err != nil || got != r.ConversationDigest {
		v.add(MismatchConversation, "receipt", -1, "", got, r.ConversationDigest)
	}
	if got := estimateInput(r); got != r.EstimatedInputTokens {
		v.add(MismatchInputTokens, "receipt", -1, "", strconv.FormatInt(got, 10), strconv.FormatInt(r.EstimatedInputTokens, 10))
	}
	if got, err := AssemblyDigest(r); err != nil || got != r.AssemblyDigest {
		v.add(MismatchAssemblyDigest, "receipt", -1, "", got, r.AssemblyDigest)
	}
	if req, err := Reconstruct(r); err != nil {
		v.add(MismatchNotReconstructs, "receipt", -1, "", "", err.Error())
	} else if body, err := RequestBytes(req); err != nil {
		v.add(MismatchNotReconstructs, "receipt", -1, "", "", err.Error())
	} else {
		if got := digest(body); got != r.ActualDigest {
			v.add(MismatchActualDigest, "receipt", -1, "", got, r.ActualDigest)
		}
		v.resume(req, body)
	}
	if len(v.ms) == 0 {
		return nil
	}
	return &ReceiptError{Mismatches: v.ms}
}

func (v *verifier) sections() {
	ids := map[string]bool{}
	lastLane := -1
	for i, s := range v.r.Sections {
		const subj = "section"
		if s.ID == "" || ids[s.ID] {
			v.add(MismatchID, subj, i, s.ID, "a unique non-empty id", s.ID)
		}
		ids[s.ID] = true
		if s.Order != i {
			v.add(MismatchOrder, subj, i, s.ID, strconv.Itoa(i), strconv.Itoa(s.Order))
		}
		if rank, ok := laneRank(s.Lane); !ok || rank < lastLane {
			v.add(MismatchLane, subj, i, s.ID, "a lane at or after "+laneName(lastLane), s.Lane)
		} else {
			lastLane = rank
		}
		if s.Role != string(model.RoleSystem) && s.Role != string(model.RoleDeveloper) && s.Role != string(model.RoleUser) {
			v.add(MismatchRole, subj, i, s.ID, "system, developer or user", s.Role)
		}
		if _, ok := trustRank[s.Trust]; !ok {
			v.add(MismatchTrust, subj, i, s.ID, "host, user, project or session", s.Trust)
		}
		if s.SourceSHA256 != "" && !validDigest(s.SourceSHA256) {
			v.add(MismatchSourceDigest, subj, i, s.ID, "lower-case hex SHA-256", s.SourceSHA256)
		}
		content, ok := v.blob(subj, i, s.ID, s.SHA256)
		if !ok {
			continue
		}
		v.checkContent(subj, i, s.ID, s.SHA256, content, s.Bytes, s.EstimatedTokens, EstimateTokens(content))
	}
}

func (v *verifier) checkContent(subj string, i int, id, claimed, content string, bytesClaimed, tokensClaimed, tokens int) {
	if got := digestString(content); got != claimed {
		v.add(MismatchDigest, subj, i, id, claimed, got)
	}
	if len(content) != bytesClaimed {
		v.add(MismatchBytes, subj, i, id, strconv.Itoa(len(content)), strconv.Itoa(bytesClaimed))
	}
	if tokens != tokensClaimed {
		v.add(MismatchTokens, subj, i, id, strconv.Itoa(tokens), strconv.Itoa(tokensClaimed))
	}
}

func (v *verifier) messages() {
	secs := v.r.Sections
	for i, p := range v.r.Messages {
		const subj = "message"
		if i < len(secs) {
			// Sections open the request, one message each, in order.
			s := secs[i]
			if p.Kind != PartSection || p.Section != s.ID {
				v.add(MismatchSectionRef, subj, i, p.Section, PartSection+" "+s.ID, p.Kind+" "+p.Section)
				continue
			}
			if p.Role != s.Role {
				v.add(MismatchRole, subj, i, p.Section, s.Role, p.Role)
			}
			if p.SHA256 != s.SHA256 || p.Bytes != s.Bytes || p.EstimatedTokens != s.EstimatedTokens {
				v.add(MismatchDigest, subj, i, p.Section, s.SHA256, p.SHA256)
			}
			continue
		}
		v.conversationPart(i, p)
	}
	if len(v.r.Messages) < len(secs) {
		for i := len(v.r.Messages); i < len(secs); i++ {
			v.add(MismatchSectionRef, "message", i, secs[i].ID, PartSection+" "+secs[i].ID, "")
		}
	}
}

// conversationPart checks the conversation part at index i of messages and returns the
// message its blob decodes to and the blob (ok false when it records a mismatch).
func (v *verifier) conversationPart(i int, p events.PromptPart) (model.Message, string, bool) {
	const subj = "message"
	if p.Kind != PartMessage {
		v.add(MismatchKind, subj, i, p.Section, PartMessage, p.Kind)
		return model.Message{}, "", false
	}
	raw, ok := v.blob(subj, i, "", p.SHA256)
	if !ok {
		return model.Message{}, "", false
	}
	var m model.Message
	if !canonical(raw, &m) {
		v.add(MismatchBlobEncoding, subj, i, p.SHA256, "the JSON encoding of a message", abbreviateRaw(raw))
		return model.Message{}, "", false
	}
	before := len(v.ms)
	if string(m.Role) != p.Role {
		v.add(MismatchRole, subj, i, "", string(m.Role), p.Role)
	}
	v.checkContent(subj, i, "", p.SHA256, raw, p.Bytes, p.EstimatedTokens, messageTokens(m))
	return m, raw, len(v.ms) == before
}

func (v *verifier) tools() {
	for i, p := range v.r.Tools {
		const subj = "tool"
		if p.Kind != PartTool {
			v.add(MismatchKind, subj, i, p.Name, PartTool, p.Kind)
			continue
		}
		raw, ok := v.blob(subj, i, p.Name, p.SHA256)
		if !ok {
			continue
		}
		var t model.Tool
		if !canonical(raw, &t) {
			v.add(MismatchBlobEncoding, subj, i, p.Name, "the JSON encoding of a tool", abbreviateRaw(raw))
			continue
		}
		if t.Name != p.Name {
			v.add(MismatchName, subj, i, p.Name, t.Name, p.Name)
		}
		v.checkContent(subj, i, p.Name, p.SHA256, raw, p.Bytes, p.EstimatedTokens, toolTokens(t))
	}
}

// canonical decodes raw into v and reports whether raw is exactly v's encoding. A blob that
// decodes but is not canonical (extra fields, other spacing) would let the recorded bytes
// and the rebuilt request differ while both digests still matched their own inputs.
func canonical[T any](raw string, v *T) bool {
	if json.Unmarshal([]byte(raw), v) != nil {
		return false
	}
	again, err := json.Marshal(v)
	return err == nil && bytes.Equal(again, []byte(raw))
}

func abbreviateRaw(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func laneName(rank int) string {
	if rank < 0 {
		return "the first lane"
	}
	return laneOrder[rank]
}

// Reconstruct rebuilds the provider-visible request from a receipt's blobs. It checks only
// that every referenced blob is present and decodes; Verify checks the digests.
func Reconstruct(r Receipt) (model.Request, error) {
	req := model.Request{
		Model: r.Model, MaxTokens: r.MaxTokens,
		ToolChoice: model.ToolChoice{Mode: model.ToolChoiceMode(r.ToolChoiceMode), Name: r.ToolChoiceName},
	}
	var ms []Mismatch
	fail := func(code, subject string, i int, id, want, got string) {
		ms = append(ms, Mismatch{Code: code, Subject: subject, Index: i, ID: id, Want: want, Got: got})
	}
	sections := make(map[string]events.PromptSection, len(r.Sections))
	for _, s := range r.Sections {
		sections[s.ID] = s
	}
	for i, p := range r.Messages {
		switch p.Kind {
		case PartSection:
			s, ok := sections[p.Section]
			if !ok {
				fail(MismatchSectionRef, "message", i, p.Section, "a section of the receipt", p.Section)
				continue
			}
			text, ok := r.Blobs[s.SHA256]
			if !ok {
				fail(MismatchBlobMissing, "message", i, p.Section, s.SHA256, "")
				continue
			}
			req.Messages = append(req.Messages, model.Message{Role: model.Role(s.Role), Text: text})
		case PartMessage:
			raw, ok := r.Blobs[p.SHA256]
			if !ok {
				fail(MismatchBlobMissing, "message", i, "", p.SHA256, "")
				continue
			}
			var m model.Message
			if err := json.Unmarshal([]byte(raw), &m); err != nil {
				fail(MismatchBlobEncoding, "message", i, p.SHA256, "the JSON encoding of a message", err.Error())
				continue
			}
			req.Messages = append(req.Messages, m)
		default:
			fail(MismatchKind, "message", i, "", PartSection+" or "+PartMessage, p.Kind)
		}
	}
	for i, p := range r.Tools {
		raw, ok := r.Blobs[p.SHA256]
		if !ok {
			fail(MismatchBlobMissing, "tool", i, p.Name, p.SHA256, "")
			continue
		}
		var t model.Tool
		if err := json.Unmarshal([]byte(raw), &t); err != nil {
			fail(MismatchBlobEncoding, "tool", i, p.Name, "the JSON encoding of a tool", err.Error())
			continue
		}
		req.Tools = append(req.Tools, t)
	}
	if len(ms) > 0 {
		return model.Request{}, &ReceiptError{Mismatches: ms}
	}
	return req, nil
}

// Compact returns r as it is stored relative to prev, an earlier full receipt of the same
// session named prevID: when they share a prefix of their conversation, only the parts after
// that prefix are listed (ConversationBase); when their sections and tools are the same, those
// are left out (HeaderBase). The blobs are left to the caller (who records only new ones). A
// receipt with nothing in common with prev is returned whole.
//
// h, when it is the History r was assembled with, supplies the prefix's chain digest without
// re-hashing the prefix.
func Compact(r Receipt, prev *Receipt, prevID string, h *History) Receipt {
	if prev == nil || prevID == "" {
		return r
	}
	return compactHeader(compactConversation(r, prev, prevID, h), prev, prevID)
}

// header is the part of a receipt HeaderBase shares: its sections, their messages (which
// open the request) and its tools.
type header struct {
	Sections []events.PromptSection `json:"sections"`
	Messages []events.PromptPart    `json:"messages"`
	Tools    []events.PromptPart    `json:"tools"`
}

func headerOf(r Receipt) header {
	return header{Sections: r.Sections, Messages: r.Messages[:min(len(r.Sections), len(r.Messages))], Tools: r.Tools}
}

// HeaderDigest is the SHA-256 (hex) of a receipt's header, its sections, section messages and
// tools as JSON, which HeaderBase.Digest records.
func HeaderDigest(r Receipt) (string, error) {
	b, err := json.Marshal(headerOf(r))
	if err != nil {
		return "", err
	}
	return digest(append([]byte("zuno.prompt.header.1\n"), b...)), nil
}

// compactHeader leaves out r's header when prev's is the same, field for field.
func compactHeader(r Receipt, prev *Receipt, prevID string) Receipt {
	mine, theirs := headerOf(r), headerOf(*prev)
	if len(mine.Sections)+len(mine.Tools) == 0 || !slices.Equal(mine.Sections, theirs.Sections) ||
		!slices.Equal(mine.Messages, theirs.Messages) || !slices.Equal(mine.Tools, theirs.Tools) {
		return r
	}
	d, err := HeaderDigest(r)
	if err != nil {
		return r
	}
	out := r
	out.Sections, out.Tools = nil, nil
	out.Messages = slices.Clone(r.Messages[len(mine.Messages):])
	out.HeaderBase = &events.PromptHeaderBase{ReceiptID: prevID, Digest: d}
	return out
}

// compactConversation lists only the conversation parts after the prefix r shares with prev.
func compactConversation(r Receipt, prev *Receipt, prevID string, h *History) Receipt {
	sections := min(len(r.Sections), len(r.Messages))
	mine, theirs := r.Messages[sections:], prev.Messages[min(len(prev.Sections), len(prev.Messages)):]
	n := commonPrefix(mine, theirs)
	if n == 0 {
		return r
	}
	chain, ok := h.chainAt(mine, n)
	if !ok {
		var err error
		if chain, err = ConversationDigest(mine[:n]); err != nil {
			return r
		}
	}
	out := r
	out.Messages = append(slices.Clone(r.Messages[:sections]), mine[n:]...)
	out.ConversationBase = &events.PromptConversationBase{ReceiptID: prevID, Parts: n, Digest: chain}
	return out
}

// commonPrefix is how many leading parts a and b share. Two receipts assembled with one
// History list their parts in one array that grows in place (History.lists), so where they
// are views of the same memory the shared prefix is known without comparing a part.
func commonPrefix(a, b []events.PromptPart) int {
	n := min(len(a), len(b))
	if n > 0 && &a[0] == &b[0] {
		return n
	}
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// Expand restores the header (HeaderBase) and the full conversation of a stored receipt by
// following its base chains through lookup (receipt id → stored receipt). A receipt records
// only blobs its session had not recorded before, so each referenced blob comes from the
// receipt itself, else from the receipts on its chain, else from pool (every blob of the
// session; nil for none). The result has no ConversationBase or HeaderBase, holds exactly the
// blobs it references, and can be verified and reconstructed on its own. A base that is
// missing, circular, or not the prefix (or header) it claims is a *ReceiptError; a missing
// blob is left for Verify to report.
func Expand(r Receipt, lookup func(id string) (Receipt, bool), pool func(digest string) (string, bool)) (Receipt, error) {
	return ExpandLogged(r, lookup, pool, nil)
}

// ExpandLogged is Expand for receipts that leave out the messages their session's transcript
// holds (LoggedParts): logged are the transcript's messages as parts (Logged.Parts), in order,
// and their blobs are expected in pool. A receipt that names more of them than logged holds is
// a *ReceiptError; parts that are not the ones it was assembled with fail Verify's
// conversation digest.
func ExpandLogged(r Receipt, lookup func(id string) (Receipt, bool), pool func(digest string) (string, bool), logged []events.PromptPart) (Receipt, error) {
	r, err := RestoreHeader(r, lookup)
	if err != nil {
		return Receipt{}, err
	}
	chain, err := conversationChain(r, lookup)
	if err != nil {
		return Receipt{}, err
	}
	conv, blobs, err := rebuildConversation(chain, logged)
	if err != nil {
		return Receipt{}, err
	}
	out := r
	out.Messages = append(slices.Clone(r.Messages[:min(len(r.Sections), len(r.Messages))]), conv...)
	out.ConversationBase, out.LoggedParts = nil, 0
	out.Blobs = referencedBlobs(out, blobs, pool)
	// A blob the stored receipt itself carries but does not reference stays, so Verify
	// reports it rather than Expand hiding it.
	for d, b := range r.Blobs {
		out.Blobs[d] = b
	}
	return out, nil
}

func baseError(id, want, got string) error {
	return &ReceiptError{Mismatches: []Mismatch{{Code: MismatchBase, Subject: "receipt", Index: -1, ID: id, Want: want, Got: got}}}
}

// conversationChain is r followed by its ConversationBase receipts, back to the first stored
// whole.
func conversationChain(r Receipt, lookup func(id string) (Receipt, bool)) ([]Receipt, error) {
	chain := []Receipt{r}
	seen := map[string]bool{}
	for cur := r; cur.ConversationBase != nil; {
		id := cur.ConversationBase.ReceiptID
		if seen[id] {
			return nil, baseError(id, "a chain of earlier receipts", "a cycle")
		}
		seen[id] = true
		base, ok := lookup(id)
		if !ok {
			return nil, baseError(id, "the base receipt in the log", "missing")
		}
		chain = append(chain, base)
		cur = base
	}
	return chain, nil
}

// rebuildConversation rebuilds the conversation forwards from the chain's oldest receipt:
// each receipt's base prefix, checked against its digest, then the parts it left to the
// transcript (taken from logged), then its own. The blobs are the chain's, the newest
// receipt's copy winning.
//
// The chain link after each part is kept as the parts are added, so a base's prefix digest is
// looked up rather than hashed again: a chain of N receipts costs what its parts cost, not N
// times the conversation (debug prompt at step 1,000 took seconds when it did).
func rebuildConversation(chain []Receipt, logged []events.PromptPart) ([]events.PromptPart, map[string]string, error) {
	blobs := map[string]string{}
	var (
		conv  []events.PromptPart
		links []string // links[i]: the conversation digest of conv[:i+1]
	)
	add := func(parts []events.PromptPart) error {
		for _, p := range parts {
			prev := ""
			if len(links) > 0 {
				prev = links[len(links)-1]
			}
			link, err := chainNext(prev, p)
			if err != nil {
				return err
			}
			conv, links = append(conv, p), append(links, link)
		}
		return nil
	}
	for i := len(chain) - 1; i >= 0; i-- {
		c := chain[i]
		if b := c.ConversationBase; b != nil {
			if b.Parts < 0 || b.Parts > len(conv) {
				return nil, nil, baseError(b.ReceiptID, fmt.Sprintf("at most %d parts", len(conv)), strconv.Itoa(b.Parts))
			}
			got := ""
			if b.Parts > 0 {
				got = links[b.Parts-1]
			}
			if got != b.Digest {
				return nil, nil, baseError(b.ReceiptID, b.Digest, got)
			}
			conv, links = conv[:b.Parts], links[:b.Parts]
		} else {
			conv, links = conv[:0], links[:0]
		}
		if k := c.LoggedParts; k != 0 {
			start := len(conv)
			if k < 0 || start+k > len(logged) {
				return nil, nil, baseError("transcript", fmt.Sprintf("messages %d to %d of the transcript", start, start+k), fmt.Sprintf("%d messages", len(logged)))
			}
			if err := add(logged[start : start+k]); err != nil {
				return nil, nil, err
			}
		}
		if err := add(c.Messages[min(len(c.Sections), len(c.Messages)):]); err != nil {
			return nil, nil, err
		}
		for d, blob := range c.Blobs {
			if _, ok := blobs[d]; !ok || i == 0 {
				blobs[d] = blob
			}
		}
	}
	return conv, blobs, nil
}

// referencedBlobs holds the blobs out references, from blobs, else from pool (nil for none).
func referencedBlobs(out Receipt, blobs map[string]string, pool func(digest string) (string, bool)) map[string]string {
	held := map[string]string{}
	need := func(d string) {
		if b, ok := blobs[d]; ok {
			held[d] = b
		} else if pool != nil {
			if b, ok := pool(d); ok {
				held[d] = b
			}
		}
	}
	for _, s := range out.Sections {
		need(s.SHA256)
	}
	for _, p := range out.Messages {
		need(p.SHA256)
	}
	for _, p := range out.Tools {
		need(p.SHA256)
	}
	return held
}

// RestoreHeader puts back the sections, section messages and tools r left out, from the
// receipt at the end of its HeaderBase chain, which records them. A base that is missing,
// circular, or does not hold the header r's digest names is a *ReceiptError, as is a receipt
// that names a base and has a header of its own.
func RestoreHeader(r Receipt, lookup func(id string) (Receipt, bool)) (Receipt, error) {
	hb := r.HeaderBase
	if hb == nil {
		return r, nil
	}
	fail := func(want, got string) error {
		return &ReceiptError{Mismatches: []Mismatch{{Code: MismatchHeaderBase, Subject: "receipt", Index: -1, ID: hb.ReceiptID, Want: want, Got: got}}}
	}
	if len(r.Sections)+len(r.Tools) > 0 {
		return Receipt{}, fail("no sections or tools beside a header base", fmt.Sprintf("%d sections, %d tools", len(r.Sections), len(r.Tools)))
	}
	base, seen := r, map[string]bool{}
	for base.HeaderBase != nil {
		id := base.HeaderBase.ReceiptID
		if seen[id] {
			return Receipt{}, fail("a chain of earlier receipts", "a cycle")
		}
		seen[id] = true
		next, ok := lookup(id)
		if !ok {
			return Receipt{}, fail("the base receipt "+id+" in the log", "missing")
		}
		base = next
	}
	if got, err := HeaderDigest(base); err != nil || got != hb.Digest {
		return Receipt{}, fail(hb.Digest, got)
	}
	h := headerOf(base)
	out := r
	out.Sections, out.Tools = slices.Clone(h.Sections), slices.Clone(h.Tools)
	out.Messages = append(slices.Clone(h.Messages), r.Messages...)
	out.HeaderBase = nil
	return out, nil
}
