package permission_test

import (
	"errors"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

// TestDecideRevoke: RevokeGrants ends the session's standing approvals, records nothing when
// there are none, and is refused for a session that does not exist or whose turn is open.
func TestDecideRevoke(t *testing.T) {
	created := events.SessionCreated{SessionID: "s"}
	granted := events.PermissionGranted{SessionID: "s", Grants: []events.StandingGrant{{Permission: "shell", Pattern: "make *"}}}
	for _, tc := range []struct {
		name    string
		history []events.Payload
		cmd     permission.Revoke
		code    string
		revoked []events.StandingGrant // nil: nothing recorded
	}{
		{"revokes what the session holds", []events.Payload{created, granted}, permission.Revoke{SessionID: "s"}, "",
			granted.Grants},
		{"nothing held records nothing", []events.Payload{created}, permission.Revoke{SessionID: "s"}, "", nil},
		{"a second revocation records nothing", []events.Payload{created, granted, events.PermissionRevoked{SessionID: "s"}},
			permission.Revoke{SessionID: "s"}, "", nil},
		{"a fork holds none of its source's", []events.Payload{created, granted, events.SessionForked{SessionID: "f"}},
			permission.Revoke{SessionID: "f"}, "", nil},
		{"no session id", nil, permission.Revoke{}, domain.CodeInvalidArgument, nil},
		{"a session that does not exist", nil, permission.Revoke{SessionID: "s"}, domain.CodeSessionNotFound, nil},
		{"an open turn refuses it", []events.Payload{created, granted, events.TurnStarted{TurnID: "t1"}},
			permission.Revoke{SessionID: "s"}, transcript.CodeTurnOpen, nil},
		{"a finished turn does not", []events.Payload{created, events.TurnStarted{TurnID: "t1"}, granted, events.TurnFinished{TurnID: "t1"}},
			permission.Revoke{SessionID: "s"}, "", granted.Grants},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s permission.SessionGrants
			for _, p := range tc.history {
				if err := s.Evolve(p); err != nil {
					t.Fatal(err)
				}
			}
			out, err := permission.DecideRevoke(&s, tc.cmd)
			var de *domain.Error
			switch {
			case tc.code != "":
				if !errors.As(err, &de) || de.Code() != tc.code || len(out) != 0 {
					t.Fatalf("got %v %v, want code %s", out, err, tc.code)
				}
				return
			case err != nil:
				t.Fatal(err)
			case tc.revoked == nil:
				if len(out) != 0 {
					t.Fatalf("recorded %+v", out)
				}
				return
			}
			if len(out) != 1 {
				t.Fatalf("recorded %+v", out)
			}
			r, ok := out[0].(events.PermissionRevoked)
			if !ok || r.SessionID != tc.cmd.SessionID || len(r.Grants) != len(tc.revoked) || r.Grants[0] != tc.revoked[0] {
				t.Fatalf("recorded %+v, want the revocation of %+v", out[0], tc.revoked)
			}
		})
	}
}
