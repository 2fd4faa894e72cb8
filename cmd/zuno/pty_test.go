package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"
)

// scriptEnv is the environment the scripts give their commands, for a command a script runs
// by itself: the test process's own, without Zuno's namespace, plus the script's settings.
var scriptEnvKeys = []string{"PATH", "HOME", "TMPDIR", "WORK", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "ZUNO_DB",
	"ZUNO_CONFIG", "ZUNO_EVENTSTORE_URL", "ZUNO_READMODEL_URL", "ZUNO_MODEL", "ZUNO_BUS_URL"}

func scriptEnv(ts *testscript.TestScript) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), "ZUNO_") {
			env = append(env, kv)
		}
	}
	for _, k := range scriptEnvKeys {
		if v := ts.Getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

func runOnPTY(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: pty INPUT PROG [ARGS...]")
	}
	prog := args[1]
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, args[1]); fileExists(p) {
			prog = p
			break
		}
	}
	cmd := exec.Command(prog, args[2:]...)
	cmd.Env, cmd.Dir = scriptEnv(ts), ts.MkAbs(".")
	term, err := pty.Start(cmd)
	ts.Check(err)
	defer term.Close()
	// Type the answers: the terminal keeps them until the program reads them.
	_, err = term.Write([]byte(ts.ReadFile(args[0])))
	ts.Check(err)
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { io.Copy(&out, term); close(done) }() // ends with EIO when the program exits
	werr := waitTimeout(cmd, 2*time.Minute)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
	ts.Stdout().Write(bytes.ReplaceAll(out.Bytes(), []byte("\r\n"), []byte("\n")))
	if neg != (werr != nil) {
		ts.Fatalf("pty %s: exit %v (want failure: %v)", args[1], werr, neg)
	}
}

func waitTimeout(cmd *exec.Cmd, limit time.Duration) error {
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case err := <-errc:
		return err
	case <-time.After(limit):
		cmd.Process.Signal(syscall.SIGKILL)
		<-errc
		return errors.New("timed out")
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
