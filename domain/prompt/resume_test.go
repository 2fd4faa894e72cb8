package prompt_test

import (
	"testing"

	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/events"
)

// A receipt's checkpoint (docs/formats/receipts.md §13) is recorded only when it is due, and
// each of its claims is checked: the part count and the SHA-256 state by Verify, the
// transcript by CheckResumeLogged. Each row changes one thing and must fail with
// resume_state.
func TestResumeIsCheckedClaimByClaim(t *testing.T) {
	h := &prompt.History{}
	in := fullInput()
	in.Conversation = growing(20) // 41 messages: a checkpoint is due
	in.History = h
	full := mustAssemble(t, in).Receipt
	conv := len(in.Conversation)
	if got := prompt.MarkResume(full, conv, conv-1, h); got.Resume != nil {
		t.Fatal("a conversation that is not all the transcript's got a checkpoint")
	}
	small := fullInput()
	small.Conversation = growing(3)
	small.History = &prompt.History{}
	if got := prompt.MarkResume(mustAssemble(t, small).Receipt, 7, 7, small.History); got.Resume != nil {
		t.Fatal("a conversation of 7 parts got a checkpoint")
	}
	marked := prompt.MarkResume(full, conv, conv, h)
	if marked.Resume == nil || marked.Resume.Parts != conv {
		t.Fatalf("no checkpoint: %+v", marked.Resume)
	}
	if err := prompt.Verify(marked); err != nil {
		t.Fatalf("the checkpoint does not verify: %v", err)
	}
	logged, err := prompt.LoggedMessages(in.Conversation)
	if err != nil {
		t.Fatal(err)
	}
	if err := prompt.CheckResumeLogged(marked, logged.Parts); err != nil {
		t.Fatalf("the checkpoint is not the transcript's: %v", err)
	}
	// The assembly digest leaves it out: a receipt with and without one digest alike.
	if d, _ := prompt.AssemblyDigest(marked); d != full.AssemblyDigest {
		t.Fatal("resume entered the assembly digest")
	}

	state := marked.Resume.SHA256State
	for _, tc := range []struct {
		name   string
		resume events.PromptResume
		logged []events.PromptPart
	}{
		{"a part more", events.PromptResume{Parts: conv + 1, SHA256State: state}, logged.Parts},
		{"a part fewer", events.PromptResume{Parts: conv - 1, SHA256State: state}, logged.Parts},
		{"no parts", events.PromptResume{Parts: 0, SHA256State: state}, logged.Parts},
		{"a state byte", events.PromptResume{Parts: conv, SHA256State: state[:10] + flip(state[10]) + state[11:]}, logged.Parts},
		{"the length of the state", events.PromptResume{Parts: conv, SHA256State: state[:len(state)-4] + "AAA="}, logged.Parts},
		{"no state", events.PromptResume{Parts: conv}, logged.Parts},
		{"the transcript holds a message more", events.PromptResume{Parts: conv, SHA256State: state}, append(logged.Parts[:conv:conv], logged.Parts[0])},
		{"the transcript holds a message fewer", events.PromptResume{Parts: conv, SHA256State: state}, logged.Parts[:conv-1]},
		{"the transcript holds another message", events.PromptResume{Parts: conv, SHA256State: state}, swapped(logged.Parts)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := marked
			rs := tc.resume
			r.Resume = &rs
			err := prompt.Verify(r)
			if err == nil {
				err = prompt.CheckResumeLogged(r, tc.logged)
			}
			var re *prompt.ReceiptError
			if !asReceiptError(err, &re) || re.Mismatches[0].Code != prompt.MismatchResume {
				t.Fatalf("got %v, want %s", err, prompt.MismatchResume)
			}
		})
	}
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

// swapped is parts with its last two exchanged.
func swapped(parts []events.PromptPart) []events.PromptPart {
	out := append([]events.PromptPart(nil), parts...)
	n := len(out)
	out[n-1], out[n-2] = out[n-2], out[n-1]
	return out
}

func asReceiptError(err error, re **prompt.ReceiptError) bool {
	e, ok := err.(*prompt.ReceiptError)
	if ok {
		*re = e
	}
	return ok && len(e.Mismatches) > 0
}
