package app

import (
	"context"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/memory"
)

// ReviewMemory approves or rejects a pending memory proposal of the project whose scope is
// given (docs/memory.md): `zuno memory approve|reject`.
func (c *Commands) ReviewMemory(ctx context.Context, meta commands.Meta, scope, proposalID string, approve bool, reason string) (commands.Result, error) {
	return c.send(ctx, &commands.ReviewMemory{Meta: meta, Review: memory.Review{Scope: scope, ProposalID: proposalID, Approve: approve, Reason: reason}})
}
