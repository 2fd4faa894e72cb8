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
	// Under -race every process sleeps 1 s at exit unless told otherwise; the scripts start
	// thousands (each `zuno` and each shell guard), so they are told (see the Makefile's test-go).
	if _, set := os.LookupEnv("GORACE"); !set {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	testscript.Main(m, map[string]func(){"zuno": func() { recordZunoEnv(); os.Exit(run()) }})
}

// TestScripts runs the CLI end to end on the embedded SQLite default: testdata/script/*.txtar.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			data := outsideWork(env)
			env.Setenv("ZUNO_DB", filepath.Join(data, "zuno.db"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(data, "data"))
			replayAtEnd(env, env.WorkDir)
			return nil
		},
		Condition: onPostgres(false),
		Cmds:      scriptCmds,
	})
}

// outsideWork is the script's $ZDATA: a directory beside $WORK (so inside the test's own
// temporary directory, removed with it) that holds the database and the data directory.
// Scripts run turns in $WORK, and a turn refuses a workspace that holds Zuno's log
// (docs/sandbox.md, "The log outside the agent's reach").
func outsideWork(env *testscript.Env) string {
	data := env.WorkDir + ".zdata"
	if err := os.MkdirAll(data, 0o755); err != nil {
		env.T().Fatal(err)
	}
	env.Setenv("ZDATA", data)
	env.Defer(func() { os.RemoveAll(data) })
	return data
}

// onPostgres answers the scripts' [postgres] condition.
func onPostgres(yes bool) func(string) (bool, error) {
	return func(cond string) (bool, error) {
		if cond == "postgres" {
			return yes, nil
		}
		if cond == "mcpdeps" { // mcp_scriptcmds_test.go
			return mcpDepsPresent()
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
			data := outsideWork(env)
			env.Setenv("ZUNO_DB", filepath.Join(data, "unused.db"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(data, "data"))
			replayAtEnd(env, env.WorkDir)
			return nil
		},
		Condition: onPostgres(true),
		Cmds:      scriptCmds,
	})
}
