package guard

import "os"

// ProgramName is the dedicated guard executable, installed beside zuno (cmd/zuno-guard).
const ProgramName = "zuno-guard"

// executable is os.Executable; a test points it elsewhere to take the fallback.
var executable = os.Executable

// Program is the program a guard process (and the sandbox's status reporter) runs: the
// dedicated zuno-guard beside the running binary when it is there — a few MB that link
// nothing but this package, so its start costs a fraction of a millisecond (docs/shell-
// execution.md, "The guard") — else this binary itself through /proc/self/exe, which
// still works when the file was replaced or deleted since the runtime started, and whose
// init runs the guard before the rest of its packages (see the package comment).
func Program() string {
	self, err := executable()
	if err != nil {
		return "/proc/self/exe"
	}
	dir := self[:lastSlash(self)+1]
	if dir == "" {
		return "/proc/self/exe"
	}
	beside := dir + ProgramName
	if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return beside
	}
	return "/proc/self/exe"
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return -1
}
