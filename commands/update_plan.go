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
	u := c.Update
	u.SessionID = c.SessionID
	return handle(ctx, h, "UpdatePlan", workExecution(c.Meta, c.SessionID, u), c, planView), nil
}
