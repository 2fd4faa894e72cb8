package permission_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/settings"
)

func policy(t *testing.T, j string) permission.Policy {
	t.Helper()
	p, err := permission.Resolve(list(at(settings.Global, j)), nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
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
	if got := s.Grant(d); len(got) != 1 || got[0] != (permission.Grant{Key: "shell", Pattern: "git status*"}) {
		t.Fatalf("Grant = %+v", got)
	}
	if !s.Covers(p.Decide(savable("git status --short", "git status*"))) {
		t.Fatal("the saved pattern must cover a later matching call")
	}
	if s.Covers(p.Decide(savable("git push", "git push*"))) {
		t.Fatal("the saved pattern must not cover another command")
	}
	if a := s.Apply(p.Decide(savable("git status -v", "git status*"))); a.Action != permission.Allow || a.Checks[0].Action != permission.Allow {
		t.Fatalf("Apply = %+v", a)
	}

	oneOff := p.Decide(savable("git status", ""))
	if s.Covers(oneOff) {
		t.Fatal("a one-off confirmation is never satisfied by an earlier always")
	}
	if got := s.Grant(oneOff); got != nil {
		t.Fatalf("a one-off confirmation installed %+v", got)
	}

	strict := policy(t, `{"mode":"strict","rules":{"shell":"ask"}}`)
	if d := strict.Decide(savable("git status", "git status*")); s.Covers(d) || s.Grant(d) != nil {
		t.Fatal("strict mode never honours or saves a standing approval")
	}

	deny := policy(t, `{"rules":{"shell":"deny"}}`)
	if d := deny.Decide(savable("git status", "git status*")); s.Covers(d) || s.Grant(d) != nil {
		t.Fatal("a deny is never covered and never saved")
	}

	// A path outside the workspace: the always saves the directory's one spelling, which then
	// covers any tool under that key.
	ext := policy(t, `{}`)
	r := file("read", "/srv/cache/a")
	if g := s.Grant(ext.Decide(r)); len(g) != 1 || g[0] != (permission.Grant{Key: "external_directory", Pattern: "/srv/cache/*"}) {
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

// TestStandingConcurrent runs grants and checks from many goroutines, as the turn's parallel
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
					s.Grant(d)
				}
				_ = s.Apply(d)
			}
		}()
	}
	wg.Wait()
	if n := len(s.Grants()); n != 4 {
		t.Fatalf("grants = %d, want 4 (one per pattern, no duplicates)", n)
	}
}
