package prompt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// History caches the canonical encoding of a conversation between steps. A turn's
// conversation only grows, so each message is encoded, digested and chained once, and a step
// costs what its new messages cost rather than the whole history's (the per-step overhead of
// step 1,000 stays that of step 10). The zero value is ready to use; it is not safe for
// concurrent use.
type History struct {
	entries []historyEntry
	// given are the caller's messages the entries were encoded from, apart from the entries
	// so that comparing a conversation with them reads one compact array.
	given []model.Message
	// The request digest's SHA-256 state after the first sumParts conversation messages of a
	// request whose model and sections hashed to sumPrefix.
	sumPrefix string
	sumParts  int
	sumState  []byte
	// check has validated the first check.Checked() messages.
	check model.ConversationCheck
	// returned counts the leading entries whose blobs a successful Assemble has returned.
	returned int

	// The request's lists (sections first, then the conversation), grown in place while the
	// sections stay the same: a step appends its new messages instead of copying the whole
	// history. Each Assemble hands out slices capped at their length, so what it returned
	// earlier never changes and a caller's append never writes into the buffer.
	parts []events.PromptPart
	msgs  []model.Message
	wire  [][]byte
	// listed counts the sections and conversation entries the lists hold.
	listedSections, listedConv int

	tools encodedTools
}

// lists returns the request's parts, messages and wire encodings: the sections followed by
// conv.
func (h *History) lists(secParts []events.PromptPart, secMsgs []model.Message, secWire [][]byte, conv []historyEntry) (
	[]events.PromptPart, []model.Message, [][]byte) {
	reuse := h.listedSections == len(secParts) && h.listedConv <= len(conv) && len(h.parts) == h.listedSections+h.listedConv
	for i := 0; reuse && i < len(secParts); i++ {
		reuse = h.parts[i] == secParts[i] && h.msgs[i].Equal(secMsgs[i])
	}
	if !reuse {
		n := len(secParts) + len(conv)
		h.parts = append(make([]events.PromptPart, 0, n), secParts...)
		h.msgs = append(make([]model.Message, 0, n), secMsgs...)
		h.wire = append(make([][]byte, 0, n), secWire...)
		h.listedSections, h.listedConv = len(secParts), 0
	}
	for _, e := range conv[h.listedConv:] {
		h.parts = append(h.parts, e.part)
		h.msgs = append(h.msgs, e.back)
		h.wire = append(h.wire, e.blob)
	}
	h.listedConv = len(conv)
	n := len(h.parts)
	return h.parts[:n:n], h.msgs[:n:n], h.wire[:n:n]
}

type historyEntry struct {
	back  model.Message // what the blob decodes to: what the request carries
	blob  []byte
	part  events.PromptPart
	chain string // the conversation chain after this part
}

// encode returns the entries of msgs, reusing the cached ones. prepare(msgs) must have run
// first, so the entries cached are a prefix of msgs; preparing again here would also reset
// the conversation check that has just walked the new messages, and make every step
// validate the whole conversation again.
func (h *History) encode(msgs []model.Message) ([]historyEntry, error) {
	for _, m := range msgs[len(h.entries):] {
		e, err := encodeMessage(m, chainAt(h.entries, len(h.entries)))
		if err != nil {
			return nil, err
		}
		h.entries = append(h.entries, e)
		h.given = append(h.given, m)
	}
	return h.entries[:len(msgs)], nil
}

// prepare drops the cached state of every message from the first one that differs from msgs.
func (h *History) prepare(msgs []model.Message) {
	keep := model.CommonPrefix(h.given, msgs)
	h.entries, h.given = h.entries[:keep], h.given[:keep]
	if keep < h.sumParts {
		h.sumParts = 0 // the saved hash state covers messages that changed
	}
	if keep < h.check.Checked() {
		h.check.Reset()
	}
	h.returned = min(h.returned, keep)
	if keep < h.listedConv {
		h.listedSections = -1 // the lists hold a message that changed: rebuild them
	}
}

func encodeMessage(m model.Message, prev string) (historyEntry, error) {
	part, blob, back, err := messagePart(m)
	if err != nil {
		return historyEntry{}, err
	}
	chain, err := chainNext(prev, part)
	return historyEntry{back: back, blob: blob, part: part, chain: chain}, err
}

// Logged is a session's conversation as its transcript holds it, the messages its events
// record (the user's, the provider's responses, the tools' results), in the form a receipt
// lists it: each message's part in order, and each part's blob by digest, encoded as Assemble
// encodes them. A receipt leaves these parts out (LoggedParts, docs/storage.md "Bytes per
// step"); a reader folds the session's transcript, and ExpandLogged takes them from here.
type Logged struct {
	Parts []events.PromptPart
	Blobs map[string]string
	// Encoded are each part's blob and Decoded the message it decodes to, in order: an
	// Auditor takes a logged part as it is, since it was encoded here, not read from a receipt.
	Encoded []string
	Decoded []model.Message
}

// LoggedMessages encodes a transcript's messages as a receipt's parts and blobs.
func LoggedMessages(msgs []model.Message) (Logged, error) {
	l := Logged{Parts: make([]events.PromptPart, 0, len(msgs)), Blobs: make(map[string]string, len(msgs)),
		Encoded: make([]string, 0, len(msgs)), Decoded: make([]model.Message, 0, len(msgs))}
	if err := l.AppendMessages(msgs); err != nil {
		return Logged{}, err
	}
	return l, nil
}

// AppendMessages encodes more of the transcript's messages after l's, as LoggedMessages
// encodes them; l.Blobs, when not nil, keeps its first blob of a digest. An audit extends
// one Logged by each step's messages, without a Logged and a map of their own per step
// (docs/storage.md, "Receipts and wire records in one pass"). On an error l may hold some
// of msgs.
func (l *Logged) AppendMessages(msgs []model.Message) error {
	for _, m := range msgs {
		part, blob, back, err := messagePart(m)
		if err != nil {
			return err
		}
		b := string(blob)
		l.Parts = append(l.Parts, part)
		if _, ok := l.Blobs[part.SHA256]; !ok && l.Blobs != nil {
			l.Blobs[part.SHA256] = b
		}
		l.Encoded, l.Decoded = append(l.Encoded, b), append(l.Decoded, back)
	}
	return nil
}

// LeaveLogged returns a stored receipt without the conversation parts that are the first
// logged messages of the conversation it was assembled from, which are the transcript's: a
// reader restores them from the transcript (ExpandLogged). Those are the parts it lists first
// (after its ConversationBase); a message the caller added after the logged ones (the
// step-limit instruction) stays listed.
func LeaveLogged(stored Receipt, logged int) Receipt {
	sections := min(len(stored.Sections), len(stored.Messages))
	start := 0
	if b := stored.ConversationBase; b != nil {
		start = b.Parts
	}
	own := stored.Messages[sections:]
	k := max(0, min(logged-start, len(own)))
	if k == 0 {
		return stored
	}
	out := stored
	out.Messages = append(slices.Clone(stored.Messages[:sections]), own[k:]...)
	out.LoggedParts = k
	return out
}

// messagePart encodes a conversation message as a receipt lists it: its part, its blob, and
// the message the blob decodes to.
func messagePart(m model.Message) (events.PromptPart, []byte, model.Message, error) {
	blob, back, err := messageRoundTrip(m)
	if err != nil {
		return events.PromptPart{}, nil, model.Message{}, err
	}
	return events.PromptPart{Kind: PartMessage, Role: string(back.Role), Bytes: len(blob),
		EstimatedTokens: messageTokens(back), SHA256: digest(blob)}, blob, back, nil
}

// messageRoundTrip is roundTrip(m) in one encoding when that encoding is already the fixed
// point: every message of a session is encoded once by the turn and once by every reader of
// its receipts, and the round trip's decoding and second encoding were two thirds of it
// (docs/storage.md, "`zuno verify`"). encoding/json decodes what it encoded back to the same
// strings, except an invalid UTF-8 byte, which it writes as the escape \ufffd; a blob
// without that escape therefore decodes to m, but for the empty lists it omits, which decode
// as nil. Any other blob takes the round trip.
func messageRoundTrip(m model.Message) ([]byte, model.Message, error) {
	blob, err := json.Marshal(m)
	if err != nil || bytes.Contains(blob, []byte(`\ufffd`)) {
		return roundTrip(m)
	}
	back := m
	back.ToolCalls, back.Reasoning = nilIfEmpty(slices.Clone(m.ToolCalls)), nilIfEmpty(slices.Clone(m.Reasoning))
	return blob, back, nil
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func chainAt(es []historyEntry, n int) string {
	if n == 0 {
		return ""
	}
	return es[n-1].chain
}

// chainNext extends the conversation chain by one part: sha256 of the previous link and the
// part's JSON, which binds the part's role, size and estimate as well as its digest.
func chainNext(prev string, p events.PromptPart) (string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte("zuno.prompt.conversation.1\n"))
	h.Write([]byte(prev))
	h.Write([]byte{'\n'})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// chainAt returns the chain after the first n of parts when the cache holds exactly those.
func (h *History) chainAt(parts []events.PromptPart, n int) (string, bool) {
	if h == nil || n == 0 || n > len(h.entries) || h.entries[n-1].part != parts[n-1] {
		return "", false
	}
	return h.entries[n-1].chain, true
}

// ConversationDigest chains conversation parts from the start.
func ConversationDigest(parts []events.PromptPart) (string, error) {
	chain := ""
	for _, p := range parts {
		var err error
		if chain, err = chainNext(chain, p); err != nil {
			return "", err
		}
	}
	return chain, nil
}
