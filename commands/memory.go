package commands

import (
	"context"

	"github.com/zuno-run/zuno/domain/memory"
	"github.com/zuno-run/zuno/events"
)

// MemoryStream holds one project's memory (docs/memory.md).
func MemoryStream(scope string) string { return "memory-" + scope }

// UpdateMemory is memory_update. Its command id derives from the tool call and its digest
// from the request: a redelivered call returns its first result and writes nothing.
type UpdateMemory struct {
	Meta
	Update memory.Update `json:"update"`
}

// ReviewMemory approves or rejects a pending proposal (`zuno memory approve|reject`).
type ReviewMemory struct {
	Meta
	Review memory.Review `json:"review"`
}

// MemoryView is the memory after a command: its revision, size, and the proposal an update
// under review made.
type MemoryView struct {
	Revision   uint64 `json:"revision"`
	Bytes      int    `json:"bytes"`
	ProposalID string `json:"proposalId,omitempty"`
	Pending    int    `json:"pending"`
}

func memoryView(s *memory.State, proposal string) MemoryView {
	v := MemoryView{Revision: s.Revision, Bytes: len(s.Content), Pending: len(s.Pending())}
	for _, p := range s.Pending() {
		if p.ID == proposal {
			v.ProposalID = p.ID
		}
	}
	return v
}

// UpdateMemory handles UpdateMemory.
func (h *Handlers) UpdateMemory(ctx context.Context, c *UpdateMemory) (Result, error) {
	u := c.Update
	x := execution[*memory.State]{meta: c.Meta, stream: MemoryStream(u.Scope),
		newState: func() *memory.State { return &memory.State{} },
		decide:   func(s *memory.State) ([]events.Payload, error) { return memory.Decide(s, u) }}
	return handle(ctx, h, "UpdateMemory", x, c, func(s *memory.State) any {
		return memoryView(s, memory.ProposalID(u.Scope, u.SessionID, u.CallID))
	}), nil
}

// ReviewMemory handles ReviewMemory.
func (h *Handlers) ReviewMemory(ctx context.Context, c *ReviewMemory) (Result, error) {
	r := c.Review
	x := execution[*memory.State]{meta: c.Meta, stream: MemoryStream(r.Scope),
		newState: func() *memory.State { return &memory.State{} },
		decide:   func(s *memory.State) ([]events.Payload, error) { return memory.DecideReview(s, r) }}
	return handle(ctx, h, "ReviewMemory", x, c, func(s *memory.State) any { return memoryView(s, "") }), nil
}

// Memory reads a project's memory from its stream (reads never lag a write).
func (h *Handlers) Memory(ctx context.Context, scope string) (*memory.State, error) {
	return LoadMemory(ctx, h.store, h.registry, scope)
}

// LoadMemory folds a project's memory stream.
func LoadMemory(ctx context.Context, store StreamReader, registry *events.Registry, scope string) (*memory.State, error) {
	st := &memory.State{}
	_, err := Load(ctx, store, registry, MemoryStream(scope), 0, func(_ events.Recorded, p events.Payload) error { return st.Evolve(p) })
	return st, err
}

// UpdateMemory handles UpdateMemory, measured.
func (w WorkCommands) UpdateMemory(ctx context.Context, c *UpdateMemory) (Result, error) {
	return Measured(w.h.metrics, "UpdateMemory", w.h.UpdateMemory)(ctx, c)
}

// Memory reads a project's memory.
func (w WorkCommands) Memory(ctx context.Context, scope string) (*memory.State, error) {
	return w.h.Memory(ctx, scope)
}

// MemoryAt is the memory's content as revision left it: the stream folded up to the update
// that made it (a replay's memory lane, docs/memory.md).
func (w WorkCommands) MemoryAt(ctx context.Context, scope string, revision uint64) (string, error) {
	content := ""
	_, err := Load(ctx, w.h.store, w.h.registry, MemoryStream(scope), 0, func(_ events.Recorded, p events.Payload) error {
		if u, ok := p.(events.MemoryUpdated); ok && u.Revision == revision {
			content = u.Content
		}
		return nil
	})
	return content, err
}
