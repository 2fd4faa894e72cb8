package gate

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/risk"
	"github.com/zuno-run/zuno/domain/tools"
)

// systemReadable are the host locations a command may name without an external_directory
// grant (docs/permissions.md, "Shell commands outside the workspace"): the programs and
// libraries every command runs on, the device and descriptor files a shell line uses
// (/dev/null, /dev/stdout …), the process's own /proc entries, and /tmp (under bubblewrap
// the command's own private tmpfs; under the native backend the host's shared scratch
// directory). Everything else outside the workspace, /etc and the home directory above all,
// needs the grant.
var systemReadable = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix/store",
	"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/tty",
	"/dev/fd", "/proc/self", "/tmp"}

// outsideRequests are the external_directory checks a shell command needs: one for the
// directory of each path it names outside the workspace, and a one-off for each argument
// that may be a path the text does not spell. A text the reader cannot parse needs none
// here: the risk gate refuses what it cannot read.
func (g *Gate) outsideRequests(c tools.Call, command string) []permission.Request {
	if g.workspace == "" {
		return nil
	}
	n, ok := risk.PathsNamed(command, risk.Env{Home: g.home, Cwd: g.workdir(c), Zuno: g.zuno})
	if !ok {
		return nil
	}
	var out []permission.Request
	realWS := realPath(g.workspace)
	for _, p := range n.Paths {
		// A symbolic link on the way may lead elsewhere: inside by its spelling and out
		// (ws/link -> ~), or quiet by its spelling and not (/tmp/l -> ~): both must hold.
		real := realPath(p)
		inside := (within(g.workspace, p) || within(realWS, p)) && within(realWS, real)
		if inside || systemPath(p) && systemPath(real) {
			continue
		}
		if !within(g.workspace, p) && !systemPath(p) {
			real = p // named outside as spelled: the grant names that spelling
		}
		p = real
		res := permission.ExternalDirResource(grantDir(p))
		out = append(out, permission.Request{Tool: c.Decl.Name, Key: permission.ExternalDirectory, Resource: res, Always: res})
	}
	for _, w := range n.Undecided {
		out = append(out, permission.Request{Tool: c.Decl.Name, Key: permission.ExternalDirectory, Resource: w})
	}
	return out
}

// grantDir is the directory a grant for path p names: p itself when it is a directory, else
// the directory holding it (as for the file tools).
func grantDir(p string) string {
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		return p
	}
	return filepath.Dir(p)
}

func systemPath(p string) bool {
	for _, d := range systemReadable {
		if within(d, p) {
			return true
		}
	}
	return false
}

func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// realPath resolves the symbolic links of the longest part of p that exists; the rest is
// kept as written (a file the command may create).
func realPath(p string) string {
	rest := ""
	for q := p; ; q = filepath.Dir(q) {
		if real, err := filepath.EvalSymlinks(q); err == nil {
			return filepath.Join(real, rest)
		}
		if q == filepath.Dir(q) {
			return p
		}
		rest = filepath.Join(filepath.Base(q), rest)
	}
}
