package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/events"
)

func newSessionRevokeGrantsCmd() *cobra.Command {
	revoke := &cobra.Command{
		Use:   "revoke-grants SESSION",
		Short: "End a session's standing approvals (its \"always\" answers): later turns ask again",
		Long: `End every standing approval of a session: the "always" answers its turns recorded
(session.permission.granted.1). Its later turns, in any process, ask again. The revocation
is an event on the session's stream (session.permission.revoked.1); a session that holds
none records nothing. It is refused (turn_open) while a turn of the session is open.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("zuno session revoke-grants takes a session id")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				res, err := a.Commands.RevokeGrants(ctx, commandMeta(cmd, args[0]), args[0])
				if err != nil {
					return err
				}
				return printResult(cmd, format, res, func() string { return revokedText(res.View, res.Duplicate) })
			})
		},
	}
	addCommandIDFlag(revoke)
	addFormatFlag(revoke, "table")
	return revoke
}

// revokedText is the revocation's view for people: what ended, one approval a line.
func revokedText(view json.RawMessage, duplicate bool) string {
	if duplicate {
		return "already handled: this command id revoked the session's standing approvals before"
	}
	var v struct {
		Revoked []events.StandingGrant `json:"revoked"`
	}
	if json.Unmarshal(view, &v) != nil || len(v.Revoked) == 0 {
		return "no standing approvals to revoke"
	}
	lines := make([]string, 0, len(v.Revoked)+1)
	lines = append(lines, fmt.Sprintf("revoked %d standing approval(s):", len(v.Revoked)))
	for _, g := range v.Revoked {
		lines = append(lines, "  "+g.Permission+" "+g.Pattern)
	}
	return strings.Join(lines, "\n")
}
