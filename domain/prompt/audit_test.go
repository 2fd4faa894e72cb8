package prompt_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
)

// storedSession is a session's receipts as the turn driver stores them: each relative to the
// one before (Compact), without the transcript's messages (LeaveLogged), with only the blobs
// the session had not recorded; each step adds a developer message the transcript does not
// hold, so a receipt's base is a strict prefix of the previous conversation.
type storedSession struct {
	ids     []string
	stored  map[string]prompt.Receipt
	logged  []prompt.Logged
	pool    map[string]string
	lookups int
}

func newStoredSession(t testing.TB, steps int) *storedSession {
	t.Helper()
	s := &storedSession{stored: map[string]prompt.Receipt{}, pool: map[string]string{}}
	var prev *prompt.Receipt
	prevID := ""
	for step := range steps {
		transcript := growing(step)
		in := fullInput()
		in.Conversation = append(slices.Clone(transcript), model.Message{Role: model.RoleDeveloper, Text: fmt.Sprintf("added at %d", step)})
		assembled, err := prompt.Assemble(in)
		if err != nil {
			t.Fatal(err)
		}
		full := assembled.Receipt
		c := prompt.LeaveLogged(prompt.Compact(full, prev, prevID, nil), len(transcript))
		c.Blobs = map[string]string{}
		for _, p := range slices.Concat(c.Messages, c.Tools) {
			if _, ok := s.pool[p.SHA256]; !ok && full.Blobs[p.SHA256] != "" {
				c.Blobs[p.SHA256] = full.Blobs[p.SHA256]
			}
		}
		for _, sec := range c.Sections {
			if _, ok := s.pool[sec.SHA256]; !ok {
				c.Blobs[sec.SHA256] = full.Blobs[sec.SHA256]
			}
		}
		for d, b := range c.Blobs {
			s.pool[d] = b
		}
		logged, err := prompt.LoggedMessages(transcript)
		if err != nil {
			t.Fatal(err)
		}
		for d, b := range logged.Blobs {
			if _, ok := s.pool[d]; !ok {
				s.pool[d] = b
			}
		}
		id := fmt.Sprintf("r%d", step)
		s.ids, s.stored[id], s.logged = append(s.ids, id), c, append(s.logged, logged)
		prev, prevID = &full, id
	}
	return s
}

func (s *storedSession) auditor() *prompt.Auditor {
	return prompt.NewAuditor(func(id string) (prompt.Receipt, bool) { s.lookups++; r, ok := s.stored[id]; return r, ok },
		func(d string) (string, bool) { b, ok := s.pool[d]; return b, ok })
}

// The Auditor accepts every receipt the reference path (ExpandLogged, Verify) accepts, returns
// the request Reconstruct rebuilds, and reads each base receipt about once: a walk of N
// receipts that expanded each one on its own would look up N²/2.
func TestAuditorAgreesWithTheReferenceInLinearLookups(t *testing.T) {
	const steps = 40
	s := newStoredSession(t, steps)
	a := s.auditor()
	for i, id := range s.ids {
		req, err := a.Check(id, s.stored[id], s.logged[i], 1)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		lookups := s.lookups
		back, err := prompt.ExpandLogged(s.stored[id], func(id string) (prompt.Receipt, bool) { r, ok := s.stored[id]; return r, ok },
			func(d string) (string, bool) { b, ok := s.pool[d]; return b, ok }, s.logged[i].Parts)
		if err != nil || prompt.Verify(back) != nil {
			t.Fatalf("step %d: the reference refuses it: %v %v", i, err, prompt.Verify(back))
		}
		want, err := prompt.Reconstruct(back)
		if err != nil || !reflect.DeepEqual(req, want) {
			t.Fatalf("step %d: request %+v, the reference rebuilds %+v (%v)", i, req, want, err)
		}
		s.lookups = lookups
	}
	if s.lookups > 3*steps {
		t.Fatalf("%d lookups for %d receipts: the walk is not linear", s.lookups, steps)
	}
}

// flipFirst changes a hex digest's first digit (to another digit, whatever it was).
func flipFirst(d string) string {
	if d[0] == '0' {
		return "1" + d[1:]
	}
	return "0" + d[1:]
}

// A receipt changed anywhere is refused where the reference refuses it, with the reference's
// first mismatch, whether the short path or the reference path meets it first.
func TestAuditorRefusesAChangedReceiptWithTheReferenceMismatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *prompt.Receipt)
		code   string
	}{
		{"estimate", func(r *prompt.Receipt) { r.EstimatedInputTokens++ }, prompt.MismatchInputTokens},
		{"conversation digest", func(r *prompt.Receipt) { r.ConversationDigest = flipFirst(r.ConversationDigest) }, prompt.MismatchConversation},
		{"assembly digest", func(r *prompt.Receipt) { r.AssemblyDigest = flipFirst(r.AssemblyDigest) }, prompt.MismatchAssemblyDigest},
		{"actual digest", func(r *prompt.Receipt) { r.ActualDigest = flipFirst(r.ActualDigest) }, prompt.MismatchActualDigest},
		{"a part's size", func(r *prompt.Receipt) { r.Messages[len(r.Messages)-1].Bytes++ }, prompt.MismatchBytes},
		{"a base's digest", func(r *prompt.Receipt) { r.ConversationBase.Digest = flipFirst(r.ConversationBase.Digest) }, prompt.MismatchBase},
		{"the model", func(r *prompt.Receipt) { r.Model += "x" }, prompt.MismatchAssemblyDigest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStoredSession(t, 8)
			r := s.stored["r5"]
			r.Messages = slices.Clone(r.Messages)
			if r.ConversationBase != nil {
				b := *r.ConversationBase
				r.ConversationBase = &b
			}
			tc.change(&r)
			s.stored["r5"] = r
			a := s.auditor()
			for i, id := range s.ids {
				_, err := a.Check(id, s.stored[id], s.logged[i], 1)
				if i < 5 {
					if err != nil {
						t.Fatalf("step %d: %v", i, err)
					}
					continue
				}
				var re *prompt.ReceiptError
				if !errors.As(err, &re) || re.Mismatches[0].Code != tc.code {
					t.Fatalf("step %d: %v, want %s first", i, err, tc.code)
				}
				return
			}
		})
	}
}

// FuzzAuditor alters a stored receipt in the middle of a session and holds the Auditor to the
// reference: it accepts the receipt exactly when ExpandLogged and Verify do, and refuses it
// with the same first mismatch. The short path must never accept what the reference refuses.
func FuzzAuditor(f *testing.F) {
	s := newStoredSession(f, 8)
	for _, id := range []string{"r5", "r6"} {
		b, _ := json.Marshal(s.stored[id])
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var r prompt.Receipt
		if json.Unmarshal(data, &r) != nil {
			return
		}
		stored := map[string]prompt.Receipt{}
		for id, x := range s.stored {
			stored[id] = x
		}
		stored["r5"] = r
		lookup := func(id string) (prompt.Receipt, bool) { x, ok := stored[id]; return x, ok }
		pool := func(d string) (string, bool) { b, ok := s.pool[d]; return b, ok }
		a := prompt.NewAuditor(lookup, pool)
		for i, id := range s.ids[:6] {
			_, got := a.Check(id, stored[id], s.logged[i], 1)
			if i < 5 {
				if got != nil {
					t.Fatalf("step %d: %v", i, got)
				}
				continue
			}
			back, want := prompt.ExpandLogged(r, lookup, pool, s.logged[i].Parts)
			if want == nil {
				want = prompt.Verify(back)
			}
			if (got == nil) != (want == nil) || (got != nil && firstCode(got) != firstCode(want)) {
				t.Fatalf("the auditor says %v, the reference %v", got, want)
			}
		}
	})
}

func firstCode(err error) string {
	var re *prompt.ReceiptError
	if errors.As(err, &re) && len(re.Mismatches) > 0 {
		return re.Mismatches[0].Code
	}
	return err.Error()
}
