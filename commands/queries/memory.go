package queries

import (
	"context"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/memory"
)

// MemoryView is a project's memory and its pending proposals (docs/memory.md).
type MemoryView struct {
	Scope    string            `json:"scope"`
	Revision uint64            `json:"revision"`
	Content  string            `json:"content"`
	Pending  []memory.Proposal `json:"pending"`
}

// Memory folds a project's memory stream: a decision (approve) depends on it, so it is read
// from the log, never from a read model.
func (q *Queries) Memory(ctx context.Context, scope string) (MemoryView, error) {
	st, err := commands.LoadMemory(ctx, q.log, q.registry, scope)
	if err != nil {
		return MemoryView{}, err
	}
	p := st.Pending()
	if p == nil {
		p = []memory.Proposal{}
	}
	return MemoryView{Scope: scope, Revision: st.Revision, Content: st.Content, Pending: p}, nil
}
