package permission_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/events"
)

func policy(t *testing.T, j string) permission.Policy {
	t.Helper()
	p, err := permission.Resolve(list(at(settings.Global, j)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// grant records what an "always" answer to d installs, as the turn does.
func grant(s *permission.Standing, d permission.Decision) []permission.Grant {
	saved := permission.Savable(d)
	if len(saved) > 0 {
		s.Evolve(events.PermissionGranted{Grants: permission.Recorded(saved)})
	}
	return saved
}

// TestStanding: an "always" saves its savable pattern for the session; a one-off confirmation
// installs nothing and is never satisfied by an earlier always; strict honours nothing.
func TestStanding(t *testing.T) {
	p := policy(t, `{"rules":{"shell":"ask"}}`)
	savable := func(cmd, always string) permission.Request { r := shell(cmd); r.Always = always; return r }

	var s permission.Standing
	d := p.Decide(savable("git status", "git status*"))
	if s.Covers(d) {
		t.Fatal("nothing granted yet")
	}
	if got := grant(&s, d); len(got) != 1 || got[0] != (permission.Grant{Key: "shell", Pattern: "git status*"}) {
		t.Fatalf("Grant = %+v", got)
	}
	if !s.Covers(p.Decide(savable("git status --short", "git status*"))) {
		t.Fatal("the saved pattern must cover a later matching call")
	}
	if s.Covers(p.Decide(savable("git push", "git push*"))) {
		t.Fatal("the saved pattern must not cover another command")
	}

	oneOff := p.Decide(savable("git status", ""))
	if s.Covers(oneOff) {
		t.Fatal("a one-off confirmation is never satisfied by an earlier always")
	}
	if got := permission.Savable(oneOff); got != nil {
		t.Fatalf("a one-off confirmation saves %+v", got)
	}

	strict := policy(t, `{"mode":"strict","rules":{"shell":"ask"}}`)
	if d := strict.Decide(savable("git status", "git status*")); s.Covers(d) || permission.Savable(d) != nil {
		t.Fatal("strict mode never honours or saves a standing approval")
	}

	deny := policy(t, `{"rules":{"shell":"deny"}}`)
	if d := deny.Decide(savable("git status", "git status*")); s.Covers(d) || permission.Savable(d) != nil {
		t.Fatal("a deny is never covered and never saved")
	}

	// A path outside the workspace: the always saves the directory's one spelling, which then
	// covers any tool under that key.
	ext := policy(t, `{}`)
	r := file("read", "/srv/cache/a")
	if g := grant(&s, ext.Decide(r)); len(g) != 1 || g[0] != (permission.Grant{Key: "external_directory", Pattern: "/srv/cache/*"}) {
		t.Fatalf("Grant = %+v", g)
	}
	if !s.Covers(ext.Decide(file("write", `/srv/cache/b`))) {
		t.Fatal("the external_directory grant must cover another tool in that directory")
	}

	// Another session's Standing knows nothing of these grants.
	var other permission.Standing
	if other.Covers(p.Decide(savable("git status", "git status*"))) {
		t.Fatal("an always belongs to one session")
	}
}

// TestSavableIsEveryAskingCheck: a path outside the workspace whose own key asks as well is
// two checks; an always approves both patterns (the ask shows the governing one), so the same
// call is not asked again. This is why the turn records the grants, not just the ask's
// pattern (docs/permissions.md, "Standing approvals").
func TestSavableIsEveryAskingCheck(t *testing.T) {
	p := policy(t, `{"rules":{"edit":"ask"}}`)
	r := file("write", "/srv/cache/a")
	r.Always = "/srv/cache/a"
	d := p.Decide(r)
	want := []permission.Grant{{Key: "edit", Pattern: "/srv/cache/a"}, {Key: "external_directory", Pattern: "/srv/cache/*"}}
	if got := permission.Savable(d); !slices.Equal(got, want) {
		t.Fatalf("Savable = %+v, want %+v", got, want)
	}
	if d.Key != "external_directory" {
		t.Fatalf("the governing check is %s: the ask shows only it", d.Key)
	}
	var s permission.Standing
	s.Evolve(events.PermissionGranted{Grants: []events.StandingGrant{{Permission: "external_directory", Pattern: "/srv/cache/*"}}})
	if s.Covers(d) {
		t.Fatal("the ask's pattern alone leaves the edit check asking")
	}
	grant(&s, d)
	if !s.Covers(p.Decide(r)) {
		t.Fatal("both grants cover the same call")
	}
}

// TestStandingFold: the standing approvals are the fold of the session's stream. Each row is
// the events in order and a call that is or is not covered afterwards.
func TestStandingFold(t *testing.T) {
	p := policy(t, `{"rules":{"shell":"ask"}}`)
	strict := policy(t, `{"mode":"strict","rules":{"shell":"ask"}}`)
	call := func(pol permission.Policy, cmd string) permission.Decision {
		r := shell(cmd)
		r.Always = "make *"
		return pol.Decide(r)
	}
	granted := func(pattern string) events.Payload {
		return events.PermissionGranted{SessionID: "s", AskID: "ask_1", Grants: []events.StandingGrant{{Permission: "shell", Pattern: pattern}}}
	}
	for _, tc := range []struct {
		name   string
		events []events.Payload
		policy permission.Policy
		covers bool
	}{
		{"an empty session holds nothing", nil, p, false},
		{"a recorded grant covers a matching call", []events.Payload{granted("make *")}, p, true},
		{"a grant covers only its own pattern", []events.Payload{granted("go *")}, p, false},
		{"a grant of another key covers nothing", []events.Payload{events.PermissionGranted{Grants: []events.StandingGrant{{Permission: "edit", Pattern: "*"}}}}, p, false},
		{"an empty pattern installs nothing", []events.Payload{granted("")}, p, false},
		{"strict mode honours no grant", []events.Payload{granted("make *")}, strict, false},
		{"a revocation ends the grants before it", []events.Payload{granted("make *"), events.PermissionRevoked{SessionID: "s"}}, p, false},
		{"a grant after a revocation holds", []events.Payload{granted("go *"), events.PermissionRevoked{}, granted("make *")}, p, true},
		{"a fork starts with none of its source's grants", []events.Payload{granted("make *"), events.SessionForked{SessionID: "f"}}, p, false},
		{"a fork's own grants hold", []events.Payload{granted("make *"), events.SessionForked{}, granted("make *")}, p, true},
		{"other events leave the grants as they are", []events.Payload{granted("make *"), events.TurnFinished{}, events.ToolSettled{}, events.PermissionAnswered{Reply: "reject"}}, p, true},
		{"an answer alone installs nothing: only the recorded grant does", []events.Payload{events.PermissionAnswered{AskID: "ask_1", Reply: "always"}}, p, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s permission.Standing
			for _, e := range tc.events {
				s.Evolve(e)
			}
			if got := s.Covers(call(tc.policy, "make test")); got != tc.covers {
				t.Fatalf("covers = %v, want %v (grants %+v)", got, tc.covers, s.Grants())
			}
		})
	}
}

// TestStandingConcurrent folds grants and checks from many goroutines, as the turn's parallel
// calls do; run it with -race.
func TestStandingConcurrent(t *testing.T) {
	p := policy(t, `{"rules":{"shell":"ask"}}`)
	var s permission.Standing
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				r := shell(fmt.Sprintf("cmd%d %d", i%4, j))
				r.Always = fmt.Sprintf("cmd%d*", i%4)
				d := p.Decide(r)
				if !s.Covers(d) {
					grant(&s, d)
				}
			}
		}()
	}
	wg.Wait()
	if n := len(s.Grants()); n != 4 {
		t.Fatalf("grants = %d, want 4 (one per pattern, no duplicates)", n)
	}
}
