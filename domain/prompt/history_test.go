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

// A receipt that leaves out its transcript's messages (LeaveLogged) lists only what the caller
// added after them, and expands (ExpandLogged, with the transcript's parts and blobs) to the
// receipt a fresh assembly gives, at every step. Without the transcript it does not expand;
// with a transcript whose message changed it fails verification.
func TestLoggedMessagesRestoreFromTheTranscript(t *testing.T) {
	stored := map[string]prompt.Receipt{}
	lookup := func(id string) (prompt.Receipt, bool) { r, ok := stored[id]; return r, ok }
	pool := map[string]string{}
	blob := func(d string) (string, bool) { b, ok := pool[d]; return b, ok }
	added := model.Message{Role: model.RoleDeveloper, Text: "added by the turn"}
	var prev *prompt.Receipt
	prevID := ""
	for step := range 4 {
		transcript := growing(step)
		in := fullInput()
		in.Conversation = append(slices.Clone(transcript), added)
		full := mustAssemble(t, in).Receipt
		c := prompt.LeaveLogged(prompt.Compact(full, prev, prevID, nil), len(transcript))
		if want := min(step, 1) + 1; c.LoggedParts != want { // the user's message, then a call and its result
			t.Fatalf("step %d: %d logged parts left out, want %d", step, c.LoggedParts, want)
		}
		if own := c.Messages[len(c.Sections):]; len(own) != 1 || own[0].Role != string(model.RoleDeveloper) {
			t.Fatalf("step %d: the receipt lists %+v, want only the added message", step, own)
		}
		c.Blobs = map[string]string{} // what the session does not hold yet, as the turn driver records
		for _, p := range slices.Concat(c.Messages, c.Tools) {
			if _, ok := pool[p.SHA256]; !ok && full.Blobs[p.SHA256] != "" {
				c.Blobs[p.SHA256], pool[p.SHA256] = full.Blobs[p.SHA256], full.Blobs[p.SHA256]
			}
		}
		for _, s := range c.Sections {
			if _, ok := pool[s.SHA256]; !ok {
				c.Blobs[s.SHA256], pool[s.SHA256] = full.Blobs[s.SHA256], full.Blobs[s.SHA256]
			}
		}
		id := fmt.Sprintf("r%d", step)
		stored[id] = c
		logged, err := prompt.LoggedMessages(transcript)
		if err != nil {
			t.Fatal(err)
		}
		withTranscript := func(d string) (string, bool) {
			if b, ok := pool[d]; ok {
				return b, true
			}
			b, ok := logged.Blobs[d]
			return b, ok
		}
		back, err := prompt.ExpandLogged(c, lookup, withTranscript, logged.Parts)
		if err != nil {
			t.Fatal(err)
		}
		if err := prompt.Verify(back); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if whole := mustAssemble(t, in).Receipt; !reflect.DeepEqual(back, whole) {
			t.Fatalf("step %d: the expanded receipt is not the assembled one", step)
		}
		var re *prompt.ReceiptError
		if _, err := prompt.Expand(c, lookup, blob); !errors.As(err, &re) || !re.Has(prompt.MismatchBase, "receipt", "transcript") {
			t.Fatalf("step %d: expanded without the transcript: %v", step, err)
		}
		if step > 0 {
			changed := slices.Clone(transcript)
			changed[len(changed)-1].Text += " (edited)"
			other, err := prompt.LoggedMessages(changed)
			if err != nil {
				t.Fatal(err)
			}
			back, err := prompt.ExpandLogged(c, lookup, func(d string) (string, bool) {
				if b, ok := other.Blobs[d]; ok {
					return b, true
				}
				return withTranscript(d)
			}, other.Parts)
			if err != nil || !errors.As(prompt.Verify(back), &re) || !re.Has(prompt.MismatchConversation, "receipt", "") {
				t.Fatalf("step %d: with an edited transcript: %v, %v", step, err, prompt.Verify(back))
			}
		}
		prev, prevID = &full, id
	}
}

// A receipt whose count of left-out transcript messages is forged does not expand, and one
// that was not expanded does not verify: the proof always runs on the whole prompt.
func TestLoggedPartsForgedOrUnexpandedAreRefused(t *testing.T) {
	transcript := growing(2)
	in := fullInput()
	in.Conversation = slices.Clone(transcript)
	full := mustAssemble(t, in).Receipt
	c := prompt.LeaveLogged(full, len(transcript))
	if c.LoggedParts == 0 {
		t.Fatal("nothing left out")
	}
	logged, err := prompt.LoggedMessages(transcript)
	if err != nil {
		t.Fatal(err)
	}
	none := func(string) (prompt.Receipt, bool) { return prompt.Receipt{}, false }
	for name, parts := range map[string]int{"negative": -1, "more than the transcript": len(transcript) + 1} {
		forged := c
		forged.LoggedParts = parts
		var re *prompt.ReceiptError
		if _, err := prompt.ExpandLogged(forged, none, nil, logged.Parts); !errors.As(err, &re) || !re.Has(prompt.MismatchBase, "receipt", "transcript") {
			t.Errorf("%s: ExpandLogged = %v, want a base mismatch naming the transcript", name, err)
		}
	}
	var re *prompt.ReceiptError
	if err := prompt.Verify(c); !errors.As(err, &re) || !re.Has(prompt.MismatchBase, "receipt", "transcript") {
		t.Fatalf("Verify(not expanded) = %v, want a base mismatch naming the transcript", err)
	}
}

// The History's encoding of the tools is handed out again only for the same declarations: a
// changed description or schema, a tool more, or the caller's own bytes changed in place after
// a step are assembled as a fresh assembly would.
func TestHistoryNoticesChangedTools(t *testing.T) {
	edits := []struct {
		name string
		edit func(in *prompt.Input)
	}{
		{"description", func(in *prompt.Input) { in.Tools[1].Description = "read, differently" }},
		{"schema", func(in *prompt.Input) {
			in.Tools[0].Schema = []byte(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
		}},
		{"schema bytes changed in place", func(in *prompt.Input) {
			s := in.Tools[2].Schema
			copy(s, `{"type":"object"}`+strings.Repeat(" ", len(s)-len(`{"type":"object"}`)))
		}},
		{"one tool more", func(in *prompt.Input) { in.Tools = append(in.Tools, in.Tools[0]); in.Tools[4].Name = "glob" }},
		{"one tool fewer", func(in *prompt.Input) { in.Tools = in.Tools[1:] }},
	}
	for _, e := range edits {
		t.Run(e.name, func(t *testing.T) {
			h := &prompt.History{}
			in := fullInput()
			in.Conversation, in.History = growing(1), h
			mustAssemble(t, in)
			in.Conversation = growing(2)
			e.edit(&in)
			got := mustAssemble(t, in)
			in.History = nil
			want := mustAssemble(t, in)
			if !reflect.DeepEqual(got.Receipt.Tools, want.Receipt.Tools) || !reflect.DeepEqual(got.Request.Tools, want.Request.Tools) ||
				got.Receipt.ActualDigest != want.Receipt.ActualDigest {
				t.Fatalf("tools after the edit: got %+v, want %+v", got.Receipt.Tools, want.Receipt.Tools)
			}
			for _, p := range got.Receipt.Tools {
				if _, ok := got.Receipt.Blobs[p.SHA256]; !ok {
					t.Fatalf("tool %s: its blob is not in the receipt", p.Name)
				}
			}
		})
	}
}
