package prompt_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/zuno-run/zuno/domain/prompt"
)

// FuzzFromCheckpoint alters one byte of a stored receipt after a checkpoint (its JSON, as the
// log holds it) and holds FromCheckpoint to the reference: whatever it accepts, ExpandLogged
// and Verify accept too (docs/formats/receipts.md §13: the path only ever accepts, and its
// answer is the reference's while the checkpoint is the log's).
func FuzzFromCheckpoint(f *testing.F) {
	h := &prompt.History{}
	var (
		stored []prompt.Receipt
		prev   *prompt.Receipt
	)
	id := func(i int) string { return fmt.Sprintf("rcp_%02d", i) }
	for step := range 24 {
		in := fullInput()
		in.Conversation = growing(step)
		in.History = h
		full := mustAssembleF(f, in)
		conv := len(in.Conversation)
		prevID := ""
		if step > 0 {
			prevID = id(step - 1)
		}
		s := prompt.MarkResume(prompt.Compact(full, prev, prevID, h), conv, conv, h)
		stored = append(stored, s)
		fullCopy := full
		prev = &fullCopy
	}
	cp := -1
	for i, s := range stored {
		if s.Resume != nil {
			cp = i
			break
		}
	}
	if cp < 0 || cp > 20 {
		f.Fatalf("checkpoint at %d", cp)
	}
	target := len(stored) - 1
	// Unaltered, the target is accepted from the checkpoint: the property below is not vacuous.
	after := map[string]prompt.Receipt{}
	for i := cp + 1; i <= target; i++ {
		after[id(i)] = stored[i]
	}
	if _, why := prompt.FromCheckpoint(id(target), stored[target], prompt.Checkpointed{ID: id(cp), Receipt: stored[cp],
		HeaderID: id(0), Header: stored[0], After: after}); why != "" {
		f.Fatalf("the unaltered receipt is not accepted from the checkpoint: %s", why)
	}
	f.Add(target, 0, byte('x'))
	f.Add(target, 40, byte('1'))
	f.Add(cp+1, 120, byte('0'))
	f.Fuzz(func(t *testing.T, which, at int, b byte) {
		if which <= cp || which > target {
			return
		}
		receipts := append([]prompt.Receipt(nil), stored...)
		raw, err := json.Marshal(receipts[which])
		if err != nil || len(raw) == 0 {
			t.Fatal(err)
		}
		raw[(at%len(raw)+len(raw))%len(raw)] = b
		var altered prompt.Receipt
		if json.Unmarshal(raw, &altered) != nil {
			return
		}
		receipts[which] = altered
		after := map[string]prompt.Receipt{}
		for i := cp + 1; i <= target; i++ {
			after[id(i)] = receipts[i]
		}
		_, why := prompt.FromCheckpoint(id(target), receipts[target], prompt.Checkpointed{ID: id(cp), Receipt: receipts[cp],
			HeaderID: id(0), Header: receipts[0], After: after})
		if why != "" {
			return
		}
		lookup := func(x string) (prompt.Receipt, bool) {
			for i := range receipts {
				if id(i) == x {
					return receipts[i], true
				}
			}
			return prompt.Receipt{}, false
		}
		pool := func(d string) (string, bool) {
			for _, r := range receipts {
				if v, ok := r.Blobs[d]; ok {
					return v, true
				}
			}
			return "", false
		}
		full, err := prompt.ExpandLogged(receipts[target], lookup, pool, nil)
		if err == nil {
			err = prompt.Verify(full)
		}
		if err != nil {
			t.Fatalf("receipt %d altered at %d to %q: accepted from the checkpoint, the reference says %v", which, at, b, err)
		}
	})
}
