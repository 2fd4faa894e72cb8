package model

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strconv"
)

// Tool call ids are the runtime's, not the provider's (docs/turns.md, "Tool call ids"). Servers
// differ: OpenAI and Anthropic give ids unique everywhere, several local servers number the
// calls of each response from call_0, some give none, and a faulty one may repeat an id within
// one response. A call id names the call's events, its permission ask and its result, so it
// must be unique in the session whatever the provider sent.

// providerCallID is what a provider's id must look like to be used as the runtime id: the
// characters every provider accepts back and a length every one allows. An id that is also a
// key in events and asks must not carry separators or control characters from a server.
var providerCallID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// RuntimeCallID is the id derived for call index of the response to request requestID. A
// replay of the request derives the same; the hash keeps it within 40 characters (OpenAI's
// limit on tool call ids) and free of anything but [a-z0-9_].
func RuntimeCallID(requestID string, index int) string {
	sum := sha256.Sum256([]byte("tool-call\n" + requestID + "\n" + strconv.Itoa(index)))
	return "call_" + hex.EncodeToString(sum[:12])
}

// AssignCallIDs gives the calls of one response their runtime ids, keeping each provider id in
// ProviderID. The provider's id is the runtime id when it is well formed, unique in the response
// and not used before (used reports the session's ids); otherwise the id is derived from the
// request id and the call's index. A missing, empty or repeated provider id is normal input.
// Keeping a usable provider id keeps the ids people and scripts already see.
func AssignCallIDs(requestID string, calls []ToolCall, used func(string) bool) {
	count := make(map[string]int, len(calls))
	for _, c := range calls {
		count[c.ProviderID]++
	}
	taken := make(map[string]bool, len(calls))
	for i := range calls {
		c := &calls[i]
		id := c.ProviderID
		if !providerCallID.MatchString(id) || count[id] > 1 || used(id) {
			id = RuntimeCallID(requestID, i)
		}
		// A provider id equal to the id derived for another call of this response gives way.
		for n := 0; taken[id] || (id != c.ProviderID && used(id)); n++ {
			id = RuntimeCallID(requestID+"#"+strconv.Itoa(n), i)
		}
		taken[id] = true
		c.ID = id
	}
}

// WireIDs maps a conversation's runtime call ids to the ids an adapter sends back to its
// provider. A call keeps its provider's id when that id is usable and unique within its
// message; otherwise (none given, or repeated within the response) the runtime id is sent
// in both the call and its result, which the provider sees consistently because the
// conversation is sent whole. The zero value is ready; use one per request, in message order.
type WireIDs struct{ byRuntime map[string]string }

// Calls returns the wire id of each call of an assistant message, and remembers them for
// the results that follow.
func (w *WireIDs) Calls(calls []ToolCall) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i] = c.ID
		if c.ProviderID == "" || !providerCallID.MatchString(c.ProviderID) {
			continue
		}
		unique := true
		for j, o := range calls {
			unique = unique && (j == i || o.ProviderID != c.ProviderID)
		}
		if unique {
			out[i] = c.ProviderID
		}
	}
	if w.byRuntime == nil {
		w.byRuntime = map[string]string{}
	}
	for i, c := range calls {
		w.byRuntime[c.ID] = out[i]
	}
	return out
}

// Result returns the wire id of the call a tool message answers.
func (w *WireIDs) Result(runtimeID string) string {
	if id, ok := w.byRuntime[runtimeID]; ok {
		return id
	}
	return runtimeID
}
