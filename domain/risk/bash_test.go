package risk_test

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/risk"
)

// TestBashHandsRmTheGatesTarget runs spellings under real bash and checks that the path bash
// hands to rm is the Target the gate read from the syntax tree: the gate reads quoting,
// expansion, nesting and wrappers the way bash does. rm is a recorder first in PATH, and
// bwrap mounts the whole file system read-only, so even a mistake deletes nothing.
func TestBashHandsRmTheGatesTarget(t *testing.T) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bwrap is not installed")
	}
	bin, out := t.TempDir(), t.TempDir()
	recorder := "#!/bin/sh\nfor a in \"$@\"; do last=$a; done\nprintf '%s\\n' \"$last\" >> \"$OUT/targets\"\n"
	if err := os.WriteFile(filepath.Join(bin, "rm"), []byte(recorder), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bin, "rm")); err != nil {
		t.Fatal("the recorder must exist before anything runs")
	}
	for _, c := range []string{
		`"rm" -rf '/'`,
		`r\m -rf /`,
		`rm -rf $'\x2f'`,
		`rm '-r'"f" //`,
		`rm -rf $'/\0etc'`,
		`{rm,-rf,/}`,
		`rm -rf ${HOME}`,
		`rm -rf "$HOME"/`,
		`rm -rf ~/.ssh`,
		`rm -rf "$HOME/project/tmp"`,
		`d=/; rm -rf $d`,
		`rm -rf "${TARGET:-/}"`,
		`rm -rf "${HOME%/*}"`,
		`x=/tmp/etc; rm -rf ${x/\/tmp/}`,
		`rm -rf /{tmp/x,etc}`,
		`bash -c 'rm -rf ~/.aws'`,
		`sh -e -c "rm -rf ~"`,
		`bash -c "bash -c 'rm -rf /'"`,
		`env -i PATH="$PATH" OUT="$OUT" FOO=1 rm -rf /`,
		`env -S 'rm -rf' /`,
		`nice -n 5 nohup timeout -s KILL 10 rm -rf /`,
		`command exec rm -rf /`,
		`echo / | xargs -0 rm -rf`,
		`find / -maxdepth 0 -exec rm -rf {} \;`,
		`eval "rm -rf" /`,
		`echo 'rm -rf ~/.aws' | bash`,
		`sh <<< 'rm -rf /'`,
		"bash <<EOF\nrm -rf /\nEOF",
		`(cd /tmp; rm -rf /)`,
		`f() { rm -rf /; }; f`,
		`f() { rm -rf "$1"; }; f /`,
		`echo / | xargs sh -c 'rm -rf "$@"' _`,
		`find /etc -maxdepth 0 -exec sh -c 'rm -rf "$1"' _ {} \;`,
	} {
		t.Run(c, func(t *testing.T) {
			log := filepath.Join(out, "targets")
			_ = os.Remove(log)
			cmd := exec.Command(bwrap, "--ro-bind", "/", "/", "--bind", out, out, "--dev", "/dev",
				"--proc", "/proc", "--unshare-all", "--die-with-parent", "--clearenv",
				"--setenv", "HOME", home, "--setenv", "PATH", bin+":/usr/bin:/bin", "--setenv", "OUT", out,
				"/bin/bash", "-c", c)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("bash: %v\n%s", err, b)
			}
			b, err := os.ReadFile(log)
			if err != nil {
				t.Fatalf("rm never ran: %v", err)
			}
			lines := strings.Fields(string(b))
			v := risk.Assess(c, risk.Env{Home: home})
			if v.Level != risk.Destructive && v.Level != risk.Catastrophic {
				t.Fatalf("the gate saw nothing: %+v", v)
			}
			found := false
			for _, l := range lines {
				found = found || path.Clean(l) == v.Target
			}
			if !found {
				t.Errorf("bash handed rm %q; the gate read %q", lines, v.Target)
			}
		})
	}
}
