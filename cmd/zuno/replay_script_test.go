package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
		cmd := exec.Command(bin, append(lastRunFlags(env), "replay", "--all", "--verify")...)
		cmd.Env, cmd.Dir = vars, env.WorkDir
		if out, err := cmd.CombinedOutput(); err != nil {
			env.T().Fatal("zuno replay --all --verify at the end of the script: " + err.Error() + "\n" + string(out))
		}
	})
}

// zunoEnvFile is where each zuno a script runs leaves its environment, and zunoRunFlags where
// each zuno run leaves its one-invocation settings (--config, the sandbox flags): TestMain.
const (
	zunoEnvFile  = ".zuno-env"
	zunoRunFlags = ".zuno-run-flags"
)

// recordZunoEnv keeps the environment of this zuno command, and the settings of a run, for
// replayAtEnd.
func recordZunoEnv() {
	work := os.Getenv("WORK")
	if work == "" {
		return
	}
	_ = os.WriteFile(filepath.Join(work, zunoEnvFile), []byte(strings.Join(os.Environ(), "\x00")), 0o600)
	args := os.Args[1:]
	if !slices.Contains(args, "run") {
		return
	}
	var flags []string
	for i, a := range args {
		name, _, hasValue := strings.Cut(a, "=")
		if name != "--config" && !strings.HasPrefix(name, "--sandbox") {
			continue
		}
		flags = append(flags, a)
		if !hasValue && i+1 < len(args) {
			flags = append(flags, args[i+1])
		}
	}
	_ = os.WriteFile(filepath.Join(work, zunoRunFlags), []byte(strings.Join(flags, "\x00")), 0o600)
}

func lastRunFlags(env *testscript.Env) []string {
	b, err := os.ReadFile(filepath.Join(env.WorkDir, zunoRunFlags))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(string(b), "\x00")
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
