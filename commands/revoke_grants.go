package commands

import (
	"context"

	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/events"
)

// RevokeGrants ends the standing approvals of a session (docs/permissions.md, "Standing
// approvals").
type RevokeGrants struct {
	Meta
	permission.Revoke
}

// RevokeGrants handles RevokeGrants: the revocation lands on the session's stream, where every
// later turn folds it; the view is the approvals it ended (none when there were none).
func (h *Handlers) RevokeGrants(ctx context.Context, c *RevokeGrants) (Result, error) {
	var revoked []events.StandingGrant
	x := execution[*permission.SessionGrants]{meta: c.Meta, stream: SessionStream(c.SessionID),
		newState: func() *permission.SessionGrants { return &permission.SessionGrants{} },
		decide: func(s *permission.SessionGrants) ([]events.Payload, error) {
			out, err := permission.DecideRevoke(s, c.Revoke)
			revoked = nil
			for _, p := range out {
				revoked = append(revoked, p.(events.PermissionRevoked).Grants...)
			}
			return out, err
		}}
	view := func(*permission.SessionGrants) any {
		return map[string]any{"sessionId": c.SessionID, "revoked": append([]events.StandingGrant{}, revoked...)}
	}
	return handle(ctx, h, "RevokeGrants", x, c.Revoke, view), nil
}
