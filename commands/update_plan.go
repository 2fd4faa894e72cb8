package commands

import (
	"context"

	"github.com/zuno-run/zuno/domain/work"
)

// UpdatePlan is plan_update for the root session SessionID.
type UpdatePlan struct {
	Meta
	SessionID string          `json:"sessionId"`
	Update    work.PlanUpdate `json:"update"`
}

// UpdatePlan handles UpdatePlan (plan_update); the view is the plan after the update.
func (h *Handlers) UpdatePlan(ctx context.Context, c *UpdatePlan) (Result, error) {
	root, err := RootSession(ctx, h.store, h.registry, c.SessionID)
	if err != nil {
		return Result{CommandID: c.CommandID, Stream: WorkStream(c.SessionID), Revision: -1, Error: NewErrorReply(err)}, nil
	}
	u := c.Update
	u.SessionID = root
	return updateWork(ctx, h, "UpdatePlan", c.Meta, root, u, c, planView), nil
}
