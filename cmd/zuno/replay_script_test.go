package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// replayAtEnd makes every script end with `zuno replay --all --verify` over the database it
// left (issue 10: replay agrees on every session the test suite creates). It runs with the
// environment of the script's last zuno command, so a configuration the script switched to
// is the one replayed with; a script that wrote no database has nothing to replay, and one
// that tampers with its log or configuration on purpose opts out with `# replay: skip`.
func replayAtEnd(env *testscript.Env, script string) {
	env.Defer(func() {
		if skipsReplay(script) {
			return
		}
		vars := lastZunoEnv(env)
		if vars == nil {
			return // no zuno command ran
		}
		bin, err := exec.LookPath("zuno")
		if err != nil {
			bin = filepath.Join(filepath.Dir(os.Args[0]), "zuno")
		}
		cmd := exec.Command(bin, "replay", "--all", "--verify")
		cmd.Env, cmd.Dir = vars, env.WorkDir
		if out, err := cmd.CombinedOutput(); err != nil {
			env.T().Fatal("zuno replay --all --verify at the end of the script: " + err.Error() + "\n" + string(out))
		}
	})
}

// zunoEnvFile is where each zuno a script runs leaves its environment (TestMain).
const zunoEnvFile = ".zuno-env"

// recordZunoEnv keeps the environment of this zuno command for replayAtEnd.
func recordZunoEnv() {
	if work := os.Getenv("WORK"); work != "" {
		_ = os.WriteFile(filepath.Join(work, zunoEnvFile), []byte(strings.Join(os.Environ(), "\x00")), 0o600)
	}
}

func lastZunoEnv(env *testscript.Env) []string {
	b, err := os.ReadFile(filepath.Join(env.WorkDir, zunoEnvFile))
	if err != nil {
		return nil
	}
	return strings.Split(string(b), "\x00")
}

// skipsReplay: the script's archive says "# replay: skip" (with the reason after it).
func skipsReplay(workDir string) bool {
	name := strings.TrimPrefix(filepath.Base(workDir), "script-")
	b, err := os.ReadFile(filepath.Join("testdata", "script", name+".txtar"))
	return err == nil && strings.Contains(string(b), "\n# replay: skip")
}
