package prompt

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

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
	keep := 0
	for keep < len(h.given) && keep < len(msgs) && h.given[keep].Equal(msgs[keep]) {
		keep++
	}
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
	blob, back, err := roundTrip(m)
	if err != nil {
		return historyEntry{}, err
	}
	part := events.PromptPart{Kind: PartMessage, Role: string(back.Role), Bytes: len(blob),
		EstimatedTokens: messageTokens(back), SHA256: digest(blob)}
	chain, err := chainNext(prev, part)
	return historyEntry{back: back, blob: blob, part: part, chain: chain}, err
}

// MessageBlobs returns the blob each message is recorded as in a receipt's conversation, by
// digest: the same encoding Assemble gives it. A receipt leaves out the blobs of the messages
// its session's log holds in events of their own (the user's message, the provider's response,
// a tool's result: the transcript folded from the stream), since those events are in the log
// beside it (docs/storage.md, "Bytes per step"); a reader rebuilds them with this from the
// folded transcript and hands them to Expand as part of its pool.
func MessageBlobs(msgs []model.Message) (map[string]string, error) {
	out := make(map[string]string, len(msgs))
	for _, m := range msgs {
		blob, _, err := roundTrip(m)
		if err != nil {
			return nil, err
		}
		out[digest(blob)] = string(blob)
	}
	return out, nil
}

// LoggedParts returns the digests of the conversation parts a stored receipt lists itself
// (those after its ConversationBase) that are among the first logged messages of the
// conversation it was assembled from: the messages its session's transcript holds, whose blobs
// a reader rebuilds with MessageBlobs. A message the turn added (the step-limit instruction)
// is not among them, and its blob stays in the receipt.
func LoggedParts(stored Receipt, logged int) map[string]bool {
	offset := 0
	if b := stored.ConversationBase; b != nil {
		offset = b.Parts
	}
	out := map[string]bool{}
	for i, p := range stored.Messages[min(len(stored.Sections), len(stored.Messages)):] {
		if offset+i < logged && p.Kind == PartMessage {
			out[p.SHA256] = true
		}
	}
	return out
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
