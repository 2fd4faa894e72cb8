package risk

import "strings"

// Windows spellings of a path, as bash on Windows (Git Bash, MSYS) passes them once quoting
// is removed: drive paths (C:\Users\you\.ssh, c:/windows), the verbatim \\?\ and device \\.\
// prefixes, and UNC shares (\\server\share). The seed asks for these to be matched without
// regard to drive-letter or name case, so a Windows path is rewritten to one lower-case form
// under a prefix no POSIX path has: /\x00win/c:/users/you/.ssh, /\x00win/unc/server/share.
// Unquoted backslashes never reach here: bash removes them, as the seed says the shell's own
// syntax must decide.
const winPrefix = "/\x00win/"

// windowsPath rewrites a Windows path; ok is false for anything else.
func windowsPath(s string) (string, bool) {
	for _, p := range []string{`\\?\UNC\`, `//?/UNC/`} {
		if rest, found := strings.CutPrefix(s, p); found {
			return winPrefix + "unc/" + winRest(rest), true
		}
	}
	for _, p := range []string{`\\?\`, `\\.\`, `//?/`, `//./`} {
		if rest, found := strings.CutPrefix(s, p); found {
			s = rest
			if !isDrive(s) {
				return winPrefix + "device/" + winRest(s), true
			}
		}
	}
	if rest, found := strings.CutPrefix(s, `\\`); found {
		return winPrefix + "unc/" + winRest(rest), true
	}
	if isDrive(s) {
		return winPrefix + strings.ToLower(s[:2]) + "/" + winRest(s[2:]), true
	}
	return "", false
}

func isDrive(s string) bool {
	c := s[0:min(1, len(s))]
	return len(s) >= 2 && s[1] == ':' && strings.ContainsAny(c, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") &&
		(len(s) == 2 || s[2] == '\\' || s[2] == '/')
}

func winRest(s string) string {
	return strings.Trim(strings.ToLower(strings.ReplaceAll(s, `\`, "/")), "/")
}

// winSystem are protected as a whole on every drive; the Windows directory also inside.
var winSystem = []string{"windows", "program files", "program files (x86)", "programdata", "users"}

// windowsClass classifies a rewritten Windows path (p is clean and under winPrefix).
func (a *assessor) windowsClass(p string) class {
	rest := strings.TrimPrefix(p, winPrefix)
	segs := strings.Split(rest, "/")
	switch {
	case segs[0] == "unc" && len(segs) <= 3, segs[0] == "device" && len(segs) <= 2,
		strings.HasSuffix(segs[0], ":") && len(segs) == 1:
		return root // a drive, a share or a volume as a whole
	case !strings.HasSuffix(segs[0], ":"):
		return none
	}
	rel := strings.Join(segs[1:], "/")
	if name, inHome, found := strings.Cut(strings.TrimPrefix(rel, "users/"), "/"); strings.HasPrefix(rel, "users/") && name != "" {
		if !found {
			return home
		}
		return homeRelClass(strings.TrimPrefix(inHome, "/"))
	}
	if under(rel, "windows") || contains(winSystem, rel) {
		return system
	}
	return none
}

// winUserConfig is the Windows user configuration, protected as a whole.
var winUserConfig = []string{"appdata", "appdata/roaming", "appdata/local"}

// homeRelClass classifies a path inside a home directory (rel is "" for the home itself).
func homeRelClass(rel string) class {
	if rel == "" {
		return home
	}
	for _, c := range credentialPaths {
		if under(rel, strings.ToLower(c)) || under(rel, c) {
			return credential
		}
	}
	for _, c := range startupPaths {
		if under(rel, c) {
			return startup
		}
	}
	if contains(userConfigPaths, rel) || contains(winUserConfig, rel) {
		return userConfig
	}
	return none
}
