package prompt_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/events"
)

// growing returns the conversation of a session after n tool steps.
func growing(n int) []model.Message {
	msgs := []model.Message{{Role: model.RoleUser, Text: "fix <it> & \"quote\" \u2028 ünïcode \xff"}}
	for i := range n {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			model.Message{Role: model.RoleAssistant, Text: "step", ToolCalls: []model.ToolCall{{ID: id, Name: "read", Arguments: `{"path":"a<b>.go"}`}}},
			model.Message{Role: model.RoleTool, ToolCallID: id, Text: strings.Repeat("line\n", i%7+1), IsError: i%3 == 0})
	}
	return msgs
}

// The cached History must give byte-identical receipts to a fresh assembly at every step, and
// the spliced actual digest must equal the digest of the whole request's encoding.
func TestHistoryReceiptsEqualFreshAssembly(t *testing.T) {
	h := &prompt.History{}
	held := map[string]string{} // every blob the History's receipts returned so far
	type keptStep struct {
		got  prompt.Receipt
		req  model.Request
		want prompt.Assembled
	}
	var kept []keptStep
	for step := range 12 {
		in := fullInput()
		in.Conversation = growing(step)
		fresh := mustAssemble(t, in)
		in.History = h
		cached := mustAssemble(t, in)
		for d, b := range cached.Receipt.Blobs {
			held[d] = b
		}
		if step > 0 && len(cached.Receipt.Blobs) >= len(fresh.Receipt.Blobs) {
			t.Errorf("step %d: the cached receipt returned %d blobs, all %d again", step, len(cached.Receipt.Blobs), len(fresh.Receipt.Blobs))
		}
		// With the blobs returned earlier, it is the fresh receipt exactly.
		merged := cached.Receipt
		merged.Blobs = map[string]string{}
		for d := range fresh.Receipt.Blobs {
			merged.Blobs[d] = held[d]
		}
		if !reflect.DeepEqual(fresh.Receipt, merged) {
			t.Fatalf("step %d: cached receipt differs from a fresh assembly", step)
		}
		cached.Receipt = merged
		// What an earlier step returned is never changed by a later one (the lists grow in
		// place, behind capped slices).
		for _, k := range kept {
			if !reflect.DeepEqual(k.got.Messages, k.want.Receipt.Messages) || !reflect.DeepEqual(k.req, k.want.Request) {
				t.Fatalf("step %d changed the lists of an earlier step", step)
			}
		}
		kept = append(kept, keptStep{got: cached.Receipt, req: cached.Request, want: fresh})
		body, err := prompt.RequestBytes(cached.Request)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(body)
		if got := hex.EncodeToString(sum[:]); got != cached.Receipt.ActualDigest {
			t.Fatalf("step %d: actual digest %s, digest of the request bytes %s", step, cached.Receipt.ActualDigest, got)
		}
		if err := prompt.Verify(cached.Receipt); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
	}
	// A changed message in the middle is noticed, not served from the cache.
	in := fullInput()
	in.Conversation = growing(11)
	in.Conversation[3].Text = "changed"
	in.History = h
	got := mustAssemble(t, in)
	in.History = nil
	if want := mustAssemble(t, in); got.Receipt.ActualDigest != want.Receipt.ActualDigest {
		t.Fatal("a changed prefix was served from the cache")
	}
}

// Compact stores only the new part of the conversation; Expand restores a receipt that
// verifies and is identical to the full one, through a chain of several bases.
func TestCompactAndExpandRoundTrip(t *testing.T) {
	h := &prompt.History{}
	stored := map[string]prompt.Receipt{}
	var prev *prompt.Receipt
	prevID := ""
	pool := map[string]string{}
	for step := range 6 {
		in := fullInput()
		in.Conversation = growing(step)
		whole := mustAssemble(t, in).Receipt // without a History: every blob
		in.History = h
		full := mustAssemble(t, in).Receipt
		c := prompt.Compact(full, prev, prevID, nil)
		if cached := prompt.Compact(full, prev, prevID, h); !reflect.DeepEqual(cached, c) {
			t.Fatalf("step %d: Compact with the History differs", step)
		}
		// Record only blobs the session does not hold yet, as the turn driver does.
		c.Blobs = map[string]string{}
		for d, b := range full.Blobs {
			if _, ok := pool[d]; !ok {
				c.Blobs[d] = b
				pool[d] = b
			}
		}
		id := fmt.Sprintf("r%d", step)
		stored[id] = c
		if step > 0 && (c.ConversationBase == nil || c.ConversationBase.ReceiptID != prevID) {
			t.Fatalf("step %d: no base recorded", step)
		}
		if step > 0 && (c.HeaderBase == nil || c.HeaderBase.ReceiptID != prevID || len(c.Sections)+len(c.Tools) != 0) {
			t.Fatalf("step %d: the unchanged sections and tools were recorded again", step)
		}
		if step > 0 && len(c.Messages) >= len(full.Messages) {
			t.Fatalf("step %d: compact receipt lists %d parts, full %d", step, len(c.Messages), len(full.Messages))
		}
		lookup := func(id string) (prompt.Receipt, bool) { r, ok := stored[id]; return r, ok }
		blob := func(d string) (string, bool) { b, ok := pool[d]; return b, ok }
		back, err := prompt.Expand(c, lookup, blob)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, whole) {
			t.Fatalf("step %d: expanded receipt differs from the full one", step)
		}
		// A receipt of a log recorded before header bases (its header whole, its
		// conversation relative) expands to the same receipt.
		old, err := prompt.RestoreHeader(c, lookup)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := prompt.Expand(old, lookup, blob); err != nil || !reflect.DeepEqual(back, whole) {
			t.Fatalf("step %d: the old form expands to another receipt (%v)", step, err)
		}
		if err := prompt.Verify(back); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		prev, prevID = &full, id
	}
	// A base whose prefix was altered is refused; a compact receipt is not verifiable alone.
	c := stored["r5"]
	bad := stored["r4"]
	bad.Messages = append(bad.Messages[:len(bad.Messages)-1:len(bad.Messages)-1], bad.Messages[len(bad.Messages)-1])
	bad.Messages[len(bad.Sections)].Bytes++
	stored["r4"] = bad
	if _, err := prompt.Expand(c, func(id string) (prompt.Receipt, bool) { r, ok := stored[id]; return r, ok }, nil); err == nil ||
		!strings.Contains(err.Error(), prompt.MismatchBase) {
		t.Fatalf("Expand over an altered base = %v", err)
	}
	var re *prompt.ReceiptError
	if err := prompt.Verify(c); !errors.As(err, &re) || !re.Has(prompt.MismatchBase, "receipt", "r4") {
		t.Fatalf("Verify(compact) = %v", err)
	}
}

// Sections and tools are left out only while they are those of the previous receipt: a
// changed tool list is recorded whole, and the next step points at that receipt.
func TestCompactHeaderOnlyWhenUnchanged(t *testing.T) {
	stored := map[string]prompt.Receipt{}
	lookup := func(id string) (prompt.Receipt, bool) { r, ok := stored[id]; return r, ok }
	var prev *prompt.Receipt
	prevID := ""
	for step, tools := range []int{4, 4, 3, 3} {
		in := fullInput()
		in.Conversation = growing(step)
		in.Tools = in.Tools[:tools]
		full := mustAssemble(t, in).Receipt
		c := prompt.Compact(full, prev, prevID, nil)
		id := fmt.Sprintf("r%d", step)
		stored[id] = c
		if shared := step == 1 || step == 3; shared != (c.HeaderBase != nil) {
			t.Fatalf("step %d: header base %+v, want one: %v", step, c.HeaderBase, shared)
		}
		if c.HeaderBase == nil && (!reflect.DeepEqual(c.Sections, full.Sections) || !reflect.DeepEqual(c.Tools, full.Tools)) {
			t.Fatalf("step %d: a changed header was not recorded whole", step)
		}
		back, err := prompt.Expand(c, lookup, func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Sections, full.Sections) || !reflect.DeepEqual(back.Tools, full.Tools) || !reflect.DeepEqual(back.Messages, full.Messages) {
			t.Fatalf("step %d: expanded header differs from the assembled one", step)
		}
		prev, prevID = &full, id
	}
}

// A header base that does not hold the header the receipt's digest names, is missing or
// circular, or sits beside a header of the receipt's own, is refused; a receipt relative to a
// header base does not verify alone.
func TestExpandRefusesABadHeaderBase(t *testing.T) {
	in := fullInput()
	first := mustAssemble(t, in).Receipt
	in.Conversation = growing(2)
	second := prompt.Compact(mustAssemble(t, in).Receipt, &first, "r0", nil)
	if second.HeaderBase == nil {
		t.Fatal("no header base")
	}
	altered := first
	altered.Sections = slices.Clone(first.Sections)
	altered.Sections[0].Priority++
	own := second
	own.Tools = first.Tools
	loop := second
	loop.HeaderBase = &events.PromptHeaderBase{ReceiptID: "r1", Digest: second.HeaderBase.Digest}
	for name, c := range map[string]struct {
		r      prompt.Receipt
		stored map[string]prompt.Receipt
	}{
		"altered base": {second, map[string]prompt.Receipt{"r0": altered}},
		"missing base": {second, map[string]prompt.Receipt{}},
		"cycle":        {loop, map[string]prompt.Receipt{"r1": loop}},
		"own tools":    {own, map[string]prompt.Receipt{"r0": first}},
	} {
		_, err := prompt.Expand(c.r, func(id string) (prompt.Receipt, bool) { r, ok := c.stored[id]; return r, ok }, nil)
		var re *prompt.ReceiptError
		if !errors.As(err, &re) || !re.Has(prompt.MismatchHeaderBase, "receipt", "") {
			t.Errorf("%s: Expand = %v", name, err)
		}
	}
	var re *prompt.ReceiptError
	if err := prompt.Verify(second); !errors.As(err, &re) || !re.Has(prompt.MismatchHeaderBase, "receipt", "r0") {
		t.Fatalf("Verify(relative to a header base) = %v", err)
	}
}

// A receipt that leaves out the blobs of its logged messages (LoggedParts) expands and
// verifies with MessageBlobs of the transcript as the pool, at every step; a message the
// caller added after the logged ones keeps its blob, and without the transcript the left-out
// blobs are reported missing.
func TestLoggedMessagesRebuildFromTheTranscript(t *testing.T) {
	stored := map[string]prompt.Receipt{}
	lookup := func(id string) (prompt.Receipt, bool) { r, ok := stored[id]; return r, ok }
	recorded := map[string]bool{}
	var prev *prompt.Receipt
	prevID := ""
	for step := range 4 {
		logged := growing(step)
		in := fullInput()
		in.Conversation = append(slices.Clone(logged), model.Message{Role: model.RoleDeveloper, Text: "added by the turn"})
		full := mustAssemble(t, in).Receipt
		c := prompt.Compact(full, prev, prevID, nil)
		left := prompt.LoggedParts(c, len(logged))
		c.Blobs = map[string]string{}
		for d, b := range full.Blobs {
			if !recorded[d] && !left[d] {
				c.Blobs[d], recorded[d] = b, true
			}
		}
		added := c.Messages[len(c.Messages)-1].SHA256
		if left[added] || c.Blobs[added] == "" && !recorded[added] {
			t.Fatalf("step %d: the added message's blob is left out", step)
		}
		if want := min(step, 1) + 1; len(left) != want { // the user's message, then a call and its result
			t.Fatalf("step %d: %d logged parts left out, want %d", step, len(left), want)
		}
		id := fmt.Sprintf("r%d", step)
		stored[id] = c
		transcript, err := prompt.MessageBlobs(logged)
		if err != nil {
			t.Fatal(err)
		}
		pool := func(d string) (string, bool) {
			for _, r := range stored {
				if b, ok := r.Blobs[d]; ok {
					return b, true
				}
			}
			b, ok := transcript[d]
			return b, ok
		}
		back, err := prompt.Expand(c, lookup, pool)
		if err != nil {
			t.Fatal(err)
		}
		if err := prompt.Verify(back); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if !reflect.DeepEqual(back.Blobs, full.Blobs) {
			t.Fatalf("step %d: the rebuilt blobs are not the assembled ones", step)
		}
		if step > 0 {
			back, err := prompt.Expand(c, lookup, func(d string) (string, bool) {
				for _, r := range stored {
					if b, ok := r.Blobs[d]; ok {
						return b, true
					}
				}
				return "", false
			})
			var re *prompt.ReceiptError
			if err != nil || !errors.As(prompt.Verify(back), &re) || !re.Has(prompt.MismatchBlobMissing, "message", "") {
				t.Fatalf("step %d: without the transcript: %v, %v", step, err, prompt.Verify(back))
			}
		}
		prev, prevID = &full, id
	}
}
