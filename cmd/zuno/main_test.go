package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/zuno-run/zuno/adapters/pgtest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"zuno": func() { recordZunoEnv(); os.Exit(run()) }})
}

// TestScripts runs the CLI end to end on the embedded SQLite default: testdata/script/*.txtar.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("ZUNO_DB", filepath.Join(env.WorkDir, "zuno.db"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(env.WorkDir, "data"))
			replayAtEnd(env, env.WorkDir)
			return nil
		},
		Condition: onPostgres(false),
		Cmds:      scriptCmds,
	})
}

// onPostgres answers the scripts' [postgres] condition.
func onPostgres(yes bool) func(string) (bool, error) {
	return func(cond string) (bool, error) {
		if cond == "postgres" {
			return yes, nil
		}
		return false, fmt.Errorf("unknown condition %q", cond)
	}
}

// TestScriptsPostgres runs the same scripts with the event store and read models on Postgres:
// forensic SQL and every CLI answer must be the same there.
func TestScriptsPostgres(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			url := pgtest.NewDatabase(env.T().(testing.TB))
			env.Setenv("ZUNO_EVENTSTORE_URL", url)
			env.Setenv("ZUNO_DB", filepath.Join(env.WorkDir, "unused.db"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(env.WorkDir, "data"))
			replayAtEnd(env, env.WorkDir)
			return nil
		},
		Condition: onPostgres(true),
		Cmds:      scriptCmds,
	})
}
