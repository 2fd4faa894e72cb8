package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Under network deny the filter refuses network sockets, AF_UNIX datagram sockets and
// connect(2); pipes and AF_UNIX stream pairs (how build tools talk to children) still work.
func TestNetworkDenyFilterInside(t *testing.T) {
	ws := hostDir(t)
	sess := confined(t, ws, `{"network": "deny"}`, false)
	for _, c := range []struct {
		name, cmd, want string
	}{
		{"tcp to loopback", `exec 3<>/dev/tcp/127.0.0.1/9 && echo OPEN || echo REFUSED`, "REFUSED"},
		{"inet socket", `perl -MSocket -e 'socket(my $s, AF_INET, SOCK_STREAM, 0) ? print "OPEN" : print "REFUSED: $!"'`, "REFUSED: Operation not permitted"},
		{"inet6 socket", `perl -MSocket -e 'socket(my $s, AF_INET6, SOCK_DGRAM, 0) ? print "OPEN" : print "REFUSED: $!"'`, "REFUSED: Operation not permitted"},
		{"unix datagram", `perl -MSocket -e 'socket(my $s, AF_UNIX, SOCK_DGRAM, 0) ? print "OPEN" : print "REFUSED: $!"'`, "REFUSED: Operation not permitted"},
		{"unix stream pair", `perl -MSocket -MIO::Handle -e 'socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, 0) or die "pair: $!"; $a->autoflush(1); print $a "ping\n"; print scalar <$b>'`, "ping"},
		{"pipes", `echo piped | cat`, "piped"},
	} {
		res := runIn(t, sess, ws, c.cmd)
		if !strings.Contains(string(res.Output), c.want) {
			t.Errorf("%s: output %q, want %q", c.name, res.Output, c.want)
		}
	}
}

// A caller that only knows Wrap cannot run a network-deny command without its filter.
func TestNetworkDenyWrapFailsClosed(t *testing.T) {
	ws := hostDir(t)
	deny := confined(t, ws, `{"network": "deny"}`, false)
	if argv, err := deny.Launcher.Wrap([]string{"true"}, ws); err == nil {
		t.Errorf("Wrap under network deny returned %q, want a refusal", argv)
	}
	allow := confined(t, ws, `{"network": "allow"}`, false)
	argv, err := allow.Launcher.Wrap([]string{"true"}, ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range argv {
		if a == "--seccomp" || a == "/run" {
			t.Errorf("network allow carries %s: %q", a, argv)
		}
	}
}

// Under network deny the host's runtime socket directories (/run and $XDG_RUNTIME_DIR) are
// empty inside; a workspace below $XDG_RUNTIME_DIR stays visible.
func TestNetworkDenyHidesRuntimeDirs(t *testing.T) {
	runMark, err := os.CreateTemp("/run", "zuno-sandbox-test-")
	if err != nil {
		t.Skipf("cannot create a marker in /run: %v", err)
	}
	runMark.Close()
	t.Cleanup(func() { os.Remove(runMark.Name()) })
	xdg := hostDir(t)
	xdgMark := filepath.Join(xdg, "bus")
	if err := os.WriteFile(xdgMark, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(xdg, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", xdg)
	probe := `for p in ` + runMark.Name() + ` ` + xdgMark + `; do test -e $p && echo SEEN $p; done; echo in > inside.txt; echo ok`
	res := runIn(t, confined(t, ws, `{"network": "deny"}`, false), ws, probe)
	if strings.Contains(string(res.Output), "SEEN") || !strings.Contains(string(res.Output), "ok") {
		t.Errorf("network deny: %q", res.Output)
	}
	if _, err := os.Stat(filepath.Join(ws, "inside.txt")); err != nil {
		t.Errorf("the workspace below $XDG_RUNTIME_DIR was not writable: %q", res.Output)
	}
	res = runIn(t, confined(t, ws, `{"network": "allow"}`, false), ws, probe)
	if strings.Count(string(res.Output), "SEEN") != 2 {
		t.Errorf("network allow hides the runtime directories: %q", res.Output)
	}
}
