package risk

import (
	"path"
	"strings"
)

// What a path is to the gate. Every class but none is protected: destroying it is
// catastrophic.
type class int

const (
	none       class = iota
	root             // "/"
	home             // a home directory, its contents as a whole, or a directory above one
	credential       // a credential store in a home directory, or anything in it
	startup          // a file the user's shell or git runs or reads as configuration (~/.bashrc)
	userConfig       // ~/.config or ~/.local as a whole
	system           // a system location (docs/risk.md, "Protected locations")
	device           // a disk: writing to it destroys its file systems
	zunoData         // Zuno's own directories (Env.Zuno), anything in them or a directory above
)

// credentialPaths are home-relative credential stores: deleting or overwriting anything in
// them loses keys that cannot be recreated (docs/risk.md).
var credentialPaths = []string{
	".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker", ".password-store", ".netrc",
	".git-credentials", ".pgpass", ".npmrc", ".pypirc", ".vault-token", ".config/gcloud",
	".config/gh", ".cargo/credentials", ".cargo/credentials.toml", ".local/share/keyrings",
}

// startupPaths are home-relative files the user's login shell or git runs or reads as
// configuration: written into, the agent's text runs on the host at the next login or git
// command (review 25c), so they are written like a credential store: never.
var startupPaths = []string{
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc", ".zprofile",
	".zshenv", ".zlogin", ".zlogout", ".kshrc", ".mkshrc", ".inputrc", ".xinitrc", ".xprofile", ".xsession",
	".gitconfig", ".config/git", ".config/fish", ".config/autostart", ".config/environment.d", ".pam_environment",
	".bash_aliases", ".bash_functions", ".config/systemd/user", ".local/bin", "bin", ".vimrc", ".config/nvim",
	".tmux.conf", ".config/tmux", ".pythonrc", ".curlrc", ".wgetrc", ".ssh/rc", ".ssh/environment",
}

// userConfigPaths are home-relative configuration roots, protected as a whole.
var userConfigPaths = []string{".config", ".local", ".local/share"}

// systemDirs are protected as a whole (the directory itself or all its contents).
var systemDirs = []string{
	"/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/opt",
	"/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/usr", "/var", "/nix",
	"/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec",
	"/usr/include", "/usr/share", "/usr/local", "/usr/local/bin", "/usr/local/sbin",
	"/usr/local/lib", "/var/lib", "/var/log", "/var/spool", "/var/mail",
	"/Users", "/System", "/Library", "/Applications", "/private", "/private/etc", "/private/var",
}

// osDirs hold the operating system itself: anything inside them is protected. Directories
// such as /opt, /srv, /var and /usr/local hold what admins install and remove, so only the
// directory as a whole is protected there.
var osDirs = []string{
	"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin",
	"/sys", "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec",
	"/System", "/private/etc",
}

// scratch paths inside osDirs that are not the system: writing to or deleting in them is
// ordinary.
var scratch = []string{"/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin",
	"/dev/tty", "/dev/fd", "/dev/shm", "/dev/pts", "/dev/random", "/dev/urandom"}

// diskPrefixes name block devices: /dev/sda, /dev/nvme0n1, /dev/mapper/root, /dev/disk2 …
var diskPrefixes = []string{"/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd", "/dev/nvme",
	"/dev/mmcblk", "/dev/md", "/dev/dm-", "/dev/mapper/", "/dev/disk", "/dev/rdisk", "/dev/root"}

func cleanPath(p string) string { return path.Clean(p) }

func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// target resolves a reading to the absolute path it names and whether it stands for the
// contents of that path (an unquoted glob: `/*`, `~/.s*`). A relative reading resolves
// against the last static cd; ok is false when the path is not known.
func (a *assessor) target(r reading) (p string, contents, ok bool) {
	t := r.text
	if t == "" || strings.HasPrefix(t, unknownMark) {
		return "", false, false
	}
	if w, ok := windowsPath(t); ok {
		t = w
	}
	t = a.throughLinks(t)
	if !strings.HasPrefix(t, "/") {
		if a.cwd == nil || !strings.HasPrefix(a.cwd.text, "/") {
			return "", false, false
		}
		t = a.cwd.text + "/" + t
	}
	if r.glob || strings.Contains(t, allMark) {
		// Everything from the first segment with a pattern in it may match anything
		// in the directory before it.
		segs := strings.Split(t, "/")
		for i, s := range segs {
			if (r.glob && hasGlobMeta(s)) || strings.Contains(s, allMark) {
				return cleanPath("/" + strings.Join(segs[:i], "/")), true, true
			}
		}
	}
	return cleanPath(t), false, true
}

// classify says what the absolute, clean path p is. The contents of a directory (a glob) are
// classified as the directory: `rm -rf /*` is `rm -rf /`.
func (a *assessor) classify(p string) class {
	if p == "/" {
		return root
	}
	for _, z := range a.zuno {
		if under(p, z) {
			return zunoData // the audit log, the auth file, other sessions' artifacts
		}
	}
	if c := a.homeClass(p); c != none {
		return c
	}
	if strings.HasPrefix(p, winPrefix) {
		return a.windowsClass(p)
	}
	for _, d := range diskPrefixes {
		if strings.HasPrefix(p, d) {
			return device
		}
	}
	for _, s := range scratch {
		if under(p, s) {
			return none
		}
	}
	for _, d := range systemDirs {
		if p == d {
			return system
		}
	}
	for _, d := range osDirs {
		if under(p, d) {
			return system
		}
	}
	for _, z := range a.zuno {
		if under(z, p) {
			return zunoData // a directory that holds Zuno's data
		}
	}
	return none
}

// homeClass classifies p against the user's home directory and the other home directories
// (/home/NAME, /Users/NAME, /root, ~NAME).
func (a *assessor) homeClass(p string) class {
	if under(a.home, p) {
		return home // the home directory or a directory above it
	}
	rel, ok := a.homeOf(p)
	if !ok {
		return none
	}
	return homeRelClass(rel)
}

// homeOf returns the part of p inside the home directory that holds it.
func (a *assessor) homeOf(p string) (rel string, ok bool) {
	for _, h := range []string{a.home, "/root"} {
		if under(p, h) {
			return strings.TrimPrefix(strings.TrimPrefix(p, h), "/"), true
		}
	}
	for _, base := range []string{"/home/", "/Users/", otherHome} {
		if rest, found := strings.CutPrefix(p, base); found && rest != "" {
			_, rel, _ := strings.Cut(rest, "/")
			return rel, true
		}
	}
	return "", false
}

func (c class) String() string {
	switch c {
	case root:
		return "the root directory"
	case home:
		return "a home directory"
	case credential:
		return "a credential store"
	case startup:
		return "a file the user's shell or git runs"
	case userConfig:
		return "the user configuration"
	case system:
		return "a system location"
	case device:
		return "a disk device"
	case zunoData:
		return "Zuno's own data"
	}
	return "an ordinary path"
}

// protectedUnder lists the protected locations the gate knows by name at or under p: the
// home directory with its credential stores and configuration, Zuno's own directories, the
// system locations. find's name tests are matched against them (`find ~ -name '.*' -delete`
// reaches ~/.ssh).
func (a *assessor) protectedUnder(p string) []string {
	var named []string
	if a.home != homeSentinel {
		named = append(named, a.home)
		for _, c := range credentialPaths {
			named = append(named, a.home+"/"+c)
		}
		for _, c := range userConfigPaths {
			named = append(named, a.home+"/"+c)
		}
	}
	named = append(named, a.zuno...)
	named = append(named, systemDirs...)
	var out []string
	for _, n := range named {
		if under(n, p) {
			out = append(out, n)
		}
	}
	return out
}

// writeRefused reports a class no write may touch: emptied or appended to, a credential store
// loses or gains a key, and a startup file runs what was written on the host.
func writeRefused(c class) bool { return c == credential || c == startup }
