// Package memory is the project memory aggregate (docs/memory.md): one bounded document per
// project that agents read and update across sessions with memory_read and memory_update.
// Every change names the exact revision it was written against; an update is applied at once
// unless a review policy holds it as a proposal until a person approves or rejects it.
package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// Limits: the memory is shown in every prompt of the project (the memory lane), so it is
// small; pending proposals are bounded so a looping agent cannot grow the stream's state.
const (
	MaxBytes   = 16 << 10
	MaxPending = 32
)

// Review policies (memory.review).
const (
	// ReviewAuto applies an update at once: the default (seeds 000).
	ReviewAuto = "auto"
	// ReviewApprove holds each update as a proposal until `zuno memory approve`.
	ReviewApprove = "approve"
)

// Stable codes.
const (
	// CodeMemoryLimit: the content is over the memory's size, or too many proposals wait;
	// nothing was written.
	CodeMemoryLimit = "memory_limit"
	// CodeProposalNotFound: no pending memory proposal has that id.
	CodeProposalNotFound = "memory_proposal_not_found"
)

// Proposal is an update waiting for review.
type Proposal struct {
	ID           string `json:"id"`
	BaseRevision uint64 `json:"baseRevision"`
	Content      string `json:"content"`
	SessionID    string `json:"sessionId,omitempty"`
	CallID       string `json:"callId,omitempty"`
}

// State is one project's memory, folded from its stream.
type State struct {
	Revision uint64
	Content  string
	pending  []Proposal
	closed   map[string]bool
}

// Evolve folds one event of the memory stream.
func (s *State) Evolve(p events.Payload) error {
	switch e := p.(type) {
	case events.MemoryUpdated:
		s.Revision, s.Content = e.Revision, e.Content
		if e.ProposalID != "" {
			s.close(e.ProposalID)
		}
	case events.MemoryProposed:
		s.pending = append(s.pending, Proposal{ID: e.ProposalID, BaseRevision: e.BaseRevision, Content: e.Content, SessionID: e.SessionID, CallID: e.CallID})
	case events.MemoryRejected:
		s.close(e.ProposalID)
	default:
		return domain.UnexpectedEvent("memory", p)
	}
	return nil
}

func (s *State) close(id string) {
	s.pending = slices.DeleteFunc(s.pending, func(p Proposal) bool { return p.ID == id })
	if s.closed == nil {
		s.closed = map[string]bool{}
	}
	s.closed[id] = true
}

// Pending are the proposals waiting for review, oldest first.
func (s *State) Pending() []Proposal { return slices.Clone(s.pending) }

// Update is a memory_update call.
type Update struct {
	Scope string `json:"scope"`
	// ExpectedRevision is the memory's current revision as memory_read returned it (0 before
	// the first update).
	ExpectedRevision uint64 `json:"expectedRevision"`
	Content          string `json:"content"`
	// Review is the policy in effect: ReviewAuto or ReviewApprove.
	Review    string `json:"review"`
	SessionID string `json:"sessionId"`
	CallID    string `json:"callId"`
}

// Decide returns the event of an update: applied (ReviewAuto) or proposed (ReviewApprove),
// or a typed refusal (stale_revision, memory_limit, invalid_argument).
func Decide(s *State, u Update) ([]events.Payload, error) {
	if err := CheckContent(u.Content); err != nil {
		return nil, err
	}
	if u.ExpectedRevision != s.Revision {
		return nil, domain.StaleRevision("the memory", u.ExpectedRevision, s.Revision, "memory_read")
	}
	sum, n := digest(u.Content), len(u.Content)
	switch u.Review {
	case ReviewAuto, "":
		return []events.Payload{events.MemoryUpdated{Scope: u.Scope, Revision: s.Revision + 1, Content: u.Content, Bytes: n, SHA256: sum,
			SessionID: u.SessionID, CallID: u.CallID}}, nil
	case ReviewApprove:
		if len(s.pending) >= MaxPending {
			return nil, domain.NewError(CodeMemoryLimit, fmt.Sprintf("%d memory proposals already wait for review", len(s.pending)),
				"ask the user to review them (zuno memory show, approve, reject) before proposing more")
		}
		return []events.Payload{events.MemoryProposed{Scope: u.Scope, ProposalID: ProposalID(u.Scope, u.SessionID, u.CallID),
			BaseRevision: s.Revision, Content: u.Content, Bytes: n, SHA256: sum, SessionID: u.SessionID, CallID: u.CallID}}, nil
	}
	return nil, domain.Invalid("memory.review", fmt.Sprintf("%q is not a review policy", u.Review), "use auto or approve")
}

// Review is a person's decision on a proposal.
type Review struct {
	Scope      string `json:"scope"`
	ProposalID string `json:"proposalId"`
	Approve    bool   `json:"approve"`
	Reason     string `json:"reason,omitempty"`
}

// DecideReview applies (approve) or closes (reject) a pending proposal. An approval of a
// proposal written against an older revision is stale_revision: what it replaces is not what
// its author read, so it is rejected and proposed again rather than applied blind.
func DecideReview(s *State, r Review) ([]events.Payload, error) {
	i := slices.IndexFunc(s.pending, func(p Proposal) bool { return p.ID == r.ProposalID })
	if i < 0 {
		e := domain.NewError(CodeProposalNotFound, fmt.Sprintf("no pending memory proposal %q", r.ProposalID),
			"zuno memory show lists the pending proposals")
		e.ID = r.ProposalID
		return nil, e
	}
	p := s.pending[i]
	if !r.Approve {
		return []events.Payload{events.MemoryRejected{Scope: r.Scope, ProposalID: p.ID, Reason: r.Reason}}, nil
	}
	if p.BaseRevision != s.Revision {
		e := domain.StaleRevision("proposal "+p.ID, p.BaseRevision, s.Revision, "zuno memory show")
		e.Fix = "the memory changed after this proposal was written: reject it, and let the agent read the memory and propose again"
		return nil, e
	}
	return []events.Payload{events.MemoryUpdated{Scope: r.Scope, Revision: s.Revision + 1, Content: p.Content, Bytes: len(p.Content),
		SHA256: digest(p.Content), SessionID: p.SessionID, CallID: p.CallID, ProposalID: p.ID}}, nil
}

// CheckContent bounds the memory's content: valid UTF-8, no NUL, at most MaxBytes.
func CheckContent(content string) error {
	switch {
	case len(content) > MaxBytes:
		return domain.NewError(CodeMemoryLimit, fmt.Sprintf("the memory would be %d bytes, more than %d", len(content), MaxBytes),
			"keep the memory short: replace it with a summary of what matters across sessions")
	case !utf8.ValidString(content) || strings.ContainsRune(content, 0):
		return domain.Invalid("content", "is not valid UTF-8 text", "send text")
	}
	return nil
}

// ProposalID derives a proposal's id from the call that made it, so a redelivered call names
// the same proposal.
func ProposalID(scope, sessionID, callID string) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%d:%s:%d:%s:%s", len(scope), scope, len(sessionID), sessionID, callID))
	return "mp_" + hex.EncodeToString(sum[:8])
}

// Scope is the memory scope of a project: its root's absolute path, hashed so the stream name
// is short and holds no path characters.
func Scope(projectRoot string) string {
	sum := sha256.Sum256([]byte(projectRoot))
	return hex.EncodeToString(sum[:16])
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
