package memory_test

import (
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/memory"
	"github.com/zuno-run/zuno/events"
)

func fold(t *testing.T, s *memory.State, evs []events.Payload) {
	t.Helper()
	for _, e := range evs {
		if err := s.Evolve(e); err != nil {
			t.Fatal(err)
		}
	}
}

// Each row is a rule of docs/memory.md: bounded, revisioned, applied by default, held for
// review when the policy says so.
func TestDecide(t *testing.T) {
	s := &memory.State{}
	evs, err := memory.Decide(s, memory.Update{Scope: "p", Content: "a", SessionID: "s", CallID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := evs[0].(events.MemoryUpdated); !ok {
		t.Fatalf("applied by default: %#v", evs)
	}
	fold(t, s, evs)
	for _, c := range []struct {
		name string
		u    memory.Update
		code string
	}{
		{"stale revision", memory.Update{Scope: "p", ExpectedRevision: 0, Content: "b"}, domain.CodeStaleRevision},
		{"a revision from the future", memory.Update{Scope: "p", ExpectedRevision: 2, Content: "b"}, domain.CodeStaleRevision},
		{"exactly the cap", memory.Update{Scope: "p", ExpectedRevision: 1, Content: strings.Repeat("x", memory.MaxBytes)}, ""},
		{"a byte over the cap", memory.Update{Scope: "p", ExpectedRevision: 1, Content: strings.Repeat("x", memory.MaxBytes+1)}, memory.CodeMemoryLimit},
		{"invalid UTF-8", memory.Update{Scope: "p", ExpectedRevision: 1, Content: "\xff"}, domain.CodeInvalidArgument},
		{"NUL", memory.Update{Scope: "p", ExpectedRevision: 1, Content: "a\x00b"}, domain.CodeInvalidArgument},
		{"unknown policy", memory.Update{Scope: "p", ExpectedRevision: 1, Content: "b", Review: "later"}, domain.CodeInvalidArgument},
		{"empty content clears", memory.Update{Scope: "p", ExpectedRevision: 1, Content: ""}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := memory.Decide(s, c.u)
			if domain.CodeOf(err) != c.code && !(c.code == "" && err == nil) {
				t.Fatalf("got %v, want %q", err, c.code)
			}
		})
	}
	var e *domain.Error
	if _, err := memory.Decide(s, memory.Update{Scope: "p", Content: "b"}); !asErr(err, &e) || e.Expected != 0 || e.Current != 1 {
		t.Fatalf("stale names expected and current: %v", err)
	}
}

func TestReview(t *testing.T) {
	s := &memory.State{}
	u := memory.Update{Scope: "p", Content: "first", Review: memory.ReviewApprove, SessionID: "s", CallID: "c1"}
	evs, err := memory.Decide(s, u)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := evs[0].(events.MemoryProposed)
	if !ok || p.ProposalID != memory.ProposalID("p", "s", "c1") {
		t.Fatalf("held for review: %#v", evs)
	}
	fold(t, s, evs)
	if s.Revision != 0 || s.Content != "" {
		t.Fatal("a proposal changed the memory")
	}
	second, _ := memory.Decide(s, memory.Update{Scope: "p", Content: "second", Review: memory.ReviewApprove, SessionID: "s", CallID: "c2"})
	fold(t, s, second)
	evs, err = memory.DecideReview(s, memory.Review{Scope: "p", ProposalID: p.ProposalID, Approve: true})
	if err != nil {
		t.Fatal(err)
	}
	fold(t, s, evs)
	if s.Revision != 1 || s.Content != "first" || len(s.Pending()) != 1 {
		t.Fatalf("approved: revision %d %q, %d pending", s.Revision, s.Content, len(s.Pending()))
	}
	id2 := second[0].(events.MemoryProposed).ProposalID
	if _, err := memory.DecideReview(s, memory.Review{Scope: "p", ProposalID: id2, Approve: true}); domain.CodeOf(err) != domain.CodeStaleRevision {
		t.Fatalf("an approval over a moved memory: %v", err)
	}
	if _, err := memory.DecideReview(s, memory.Review{Scope: "p", ProposalID: p.ProposalID, Approve: true}); domain.CodeOf(err) != memory.CodeProposalNotFound {
		t.Fatalf("approving twice: %v", err)
	}
	evs, err = memory.DecideReview(s, memory.Review{Scope: "p", ProposalID: id2})
	if err != nil {
		t.Fatal(err)
	}
	fold(t, s, evs)
	if len(s.Pending()) != 0 || s.Content != "first" {
		t.Fatal("reject applied or kept the proposal")
	}
	for i := range memory.MaxPending {
		evs, err := memory.Decide(s, memory.Update{Scope: "p", ExpectedRevision: 1, Content: "x", Review: memory.ReviewApprove, CallID: string(rune('a' + i))})
		if err != nil {
			t.Fatal(err)
		}
		fold(t, s, evs)
	}
	if _, err := memory.Decide(s, memory.Update{Scope: "p", ExpectedRevision: 1, Content: "x", Review: memory.ReviewApprove, CallID: "over"}); domain.CodeOf(err) != memory.CodeMemoryLimit {
		t.Fatalf("pending proposals are bounded: %v", err)
	}
}

func asErr(err error, e **domain.Error) bool {
	d, ok := err.(*domain.Error)
	*e = d
	return ok
}
