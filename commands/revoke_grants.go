package commands

import (
	"context"

	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/events"
)

// RevokeGrants ends the standing approvals of a session (docs/permissions.md, "Standing
// approvals"). With Prune set it also prunes the session, in the same append: a prune is a
// revocation that ends the session as well (docs/server.md, "Pruning a session"), so it
// travels as this command and the bus's routes stay as they are.
type RevokeGrants struct {
	Meta
	permission.Revoke
	// Prune archives or deletes the session after its grants end.
	Prune *session.Prune `json:"prune,omitempty"`
}

// RevokeGrants handles RevokeGrants: the revocation (and the prune) land on the session's
// stream, where every later turn folds it; the view is the approvals it ended (none when there
// were none) and, for a prune, how the session is pruned.
func (h *Handlers) RevokeGrants(ctx context.Context, c *RevokeGrants) (Result, error) {
	var revoked []events.StandingGrant
	x := execution[*pruneState]{meta: c.Meta, stream: SessionStream(c.SessionID),
		newState: func() *pruneState { return &pruneState{} },
		decide: func(s *pruneState) ([]events.Payload, error) {
			out, err := permission.DecideRevoke(&s.grants, c.Revoke)
			revoked = nil
			for _, p := range out {
				revoked = append(revoked, p.(events.PermissionRevoked).Grants...)
			}
			if err != nil || c.Prune == nil {
				return out, err
			}
			p := *c.Prune
			p.SessionID = c.SessionID
			pruned, err := session.Decide(&s.session, p)
			return append(out, pruned...), err
		}}
	view := func(s *pruneState) any {
		v := map[string]any{"sessionId": c.SessionID, "revoked": append([]events.StandingGrant{}, revoked...)}
		if c.Prune != nil {
			v["pruned"] = s.session.Pruned
		}
		return v
	}
	var body any = c.Revoke
	if c.Prune != nil {
		body = struct {
			permission.Revoke
			Prune *session.Prune
		}{c.Revoke, c.Prune}
	}
	return handle(ctx, h, "RevokeGrants", x, body, view), nil
}

// pruneState is the session stream folded for a revocation and a prune: the grants (with the
// open turn, which refuses both) and the session (whether it is pruned already).
type pruneState struct {
	grants  permission.SessionGrants
	session session.State
}

func (s *pruneState) Evolve(p events.Payload) error {
	if err := s.grants.Evolve(p); err != nil {
		return err
	}
	return s.session.Evolve(p)
}
