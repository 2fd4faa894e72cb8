package shell

import (
	"os"
	"os/exec"
	"sync"
)

// foundPrograms remembers where a program name was found in PATH (the key is the name and
// Zuno's PATH): every shell call looks bash up, and a lookup stats each directory of PATH
// before bash's, which was a fifth of the runtime's own CPU per command
// (BenchmarkGuardedRun/runtime-cost). A remembered path is checked with one stat; when it is
// no longer an executable file the name is looked up again. Deliberately, a bash put later
// into a directory of PATH before the one found is not noticed while the first stays.
var foundPrograms sync.Map

// lookPath is exec.LookPath, remembered (foundPrograms).
func lookPath(name string) (string, error) {
	key := name + "\x00" + os.Getenv("PATH")
	if p, ok := foundPrograms.Load(key); ok {
		if fi, err := os.Stat(p.(string)); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p.(string), nil
		}
		foundPrograms.Delete(key)
	}
	p, err := exec.LookPath(name)
	if err == nil {
		foundPrograms.Store(key, p)
	}
	return p, err
}
