package events

// Memory stream ("memory-<scope>") payloads: the project memory agents keep across sessions
// with memory_read and memory_update (docs/memory.md). One stream per project; its revision
// is the memory's.

const (
	TypeMemoryUpdated  = "memory.updated.1"
	TypeMemoryProposed = "memory.update.proposed.1"
	TypeMemoryRejected = "memory.update.rejected.1"
)

// MemoryUpdated applied new content: Revision is the memory's revision after it, Content the
// whole memory, Bytes and SHA256 describe it. An update applied at once names the session and
// call that asked; an approved proposal names the proposal too (and the call that proposed it).
type MemoryUpdated struct {
	Scope      string `json:"scope"`
	Revision   uint64 `json:"revision"`
	Content    string `json:"content"`
	Bytes      int    `json:"bytes"`
	SHA256     string `json:"sha256"`
	SessionID  string `json:"sessionId,omitempty"`
	CallID     string `json:"callId,omitempty"`
	ProposalID string `json:"proposalId,omitempty"`
}

func (MemoryUpdated) EventType() string { return TypeMemoryUpdated }

// MemoryProposed holds an update for review (memory.review "approve"): nothing is applied
// until it is approved. BaseRevision is the revision it was written against; an approval
// after the memory moved on is refused as stale.
type MemoryProposed struct {
	Scope        string `json:"scope"`
	ProposalID   string `json:"proposalId"`
	BaseRevision uint64 `json:"baseRevision"`
	Content      string `json:"content"`
	Bytes        int    `json:"bytes"`
	SHA256       string `json:"sha256"`
	SessionID    string `json:"sessionId,omitempty"`
	CallID       string `json:"callId,omitempty"`
}

func (MemoryProposed) EventType() string { return TypeMemoryProposed }

// MemoryRejected closes a proposal without applying it.
type MemoryRejected struct {
	Scope      string `json:"scope"`
	ProposalID string `json:"proposalId"`
	Reason     string `json:"reason,omitempty"`
}

func (MemoryRejected) EventType() string { return TypeMemoryRejected }
