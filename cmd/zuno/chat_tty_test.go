package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
	"github.com/rogpeppe/go-internal/testscript"
)

// updateScreens rewrites the golden screens (testdata/screens) from this run.
var updateScreens = flag.Bool("update-screens", false, "rewrite the golden screens in testdata/screens from this run")

// screensDir is where golden screens live, found from the test's own directory (the scripts
// run elsewhere).
var screensDir, _ = filepath.Abs("testdata/screens")

// The script command for full-screen faces (zuno chat): tty STEPS PROG [ARGS...] runs PROG at a
// pseudo-terminal it owns as its controlling terminal, renders everything PROG writes through
// a VT emulator (github.com/charmbracelet/x/vt), and plays STEPS, one a line:
//
//	size COLS ROWS     the terminal's size before the start (default 80 24)
//	wait TEXT          until the screen shows TEXT (at most 60 s)
//	waitrow N TEXT     until row N (0 the top, -1 the bottom) shows TEXT
//	type TEXT          type TEXT (a Go-quoted string is unquoted first: "x\r")
//	key NAME           enter, ctrl+c, ctrl+d, ctrl+u, esc, tab, up, down, pgup, pgdown, backspace
//	absent TEXT        the screen does not show TEXT now
//	resize COLS ROWS   resize the terminal (the kernel signals PROG with SIGWINCH)
//	screen NAME        the screen must equal testdata/screens/NAME.txt (-update-screens writes it)
//	run PROG [ARGS...] run another program to its end, beside the one at the terminal (it
//	                   must succeed): another face answering, say
//	exit               until PROG exits (at most 60 s)
//
// The screen is compared as text: each row's trailing spaces cut, ids (ses_…, qst_…) masked
// with '#' keeping their width. The last screen goes to the script's stdout.
func init() {
	scriptCmds["tty"] = runOnTTY
}

type ttyRun struct {
	ts   *testscript.TestScript
	term *os.File
	emu  *screenEmu
	done chan error
}

// screenEmu is the VT emulator behind a lock: the program's output is written to it while the
// steps read its screen (vt's SafeEmulator does not lock String).
type screenEmu struct {
	mu  sync.Mutex
	emu *vt.Emulator
}

func (s *screenEmu) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.Write(p)
}

// Read is the terminal's answers to the program's queries (a pipe of its own: no lock).
func (s *screenEmu) Read(p []byte) (int, error) { return s.emu.Read(p) }

func (s *screenEmu) Resize(c, r int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emu.Resize(c, r)
}

func (s *screenEmu) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.String()
}

func runOnTTY(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: tty STEPS PROG [ARGS...]")
	}
	steps := strings.Split(strings.TrimSpace(ts.ReadFile(args[0])), "\n")
	cols, rows := 80, 24
	if f := strings.Fields(steps[0]); len(f) == 3 && f[0] == "size" {
		cols, rows = atoi(ts, f[1]), atoi(ts, f[2])
		steps = steps[1:]
	}
	prog := args[1]
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if p := filepath.Join(dir, args[1]); fileExists(p) {
			prog = p
			break
		}
	}
	cmd := exec.Command(prog, args[2:]...)
	termName := ts.Getenv("TERM") // the script's, else a common terminal's
	if termName == "" {
		termName = "xterm-256color"
	}
	cmd.Env, cmd.Dir = append(scriptEnv(ts), "TERM="+termName), ts.MkAbs(".")
	term, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	ts.Check(err)
	defer term.Close()
	r := &ttyRun{ts: ts, term: term, emu: &screenEmu{emu: vt.NewEmulator(cols, rows)}, done: make(chan error, 1)}
	go io.Copy(r.emu, term) // what PROG draws
	go io.Copy(term, r.emu) // the terminal's answers to PROG's queries
	go func() { r.done <- waitTimeout(cmd, 3*time.Minute) }()
	exited := false
	var werr error
	for _, step := range steps {
		if step = strings.TrimSpace(step); step == "" || strings.HasPrefix(step, "#") {
			continue
		}
		verb, arg, _ := strings.Cut(step, " ")
		switch verb {
		case "wait":
			r.waitFor(-1<<31, arg)
		case "waitrow":
			n, text, _ := strings.Cut(arg, " ")
			r.waitFor(atoi(ts, n), text)
		case "absent":
			if shown := r.screen(); strings.Contains(shown, unquote(ts, arg)) {
				ts.Fatalf("tty: the screen shows %q:\n%s", arg, shown)
			}
		case "type":
			r.send(unquote(ts, arg))
		case "key":
			r.send(keyBytes(ts, arg))
		case "resize":
			f := strings.Fields(arg)
			c, rw := atoi(ts, f[0]), atoi(ts, f[1])
			r.emu.Resize(c, rw)
			ts.Check(pty.Setsize(term, &pty.Winsize{Cols: uint16(c), Rows: uint16(rw)}))
		case "screen":
			r.compare(arg)
		case "run":
			r.run(strings.Fields(arg))
		case "exit":
			select {
			case werr = <-r.done:
				exited = true
			case <-time.After(60 * time.Second):
				ts.Fatalf("tty: %s did not exit; the screen:\n%s", args[1], r.screen())
			}
		default:
			ts.Fatalf("tty: unknown step %q", step)
		}
	}
	fmt.Fprintln(ts.Stdout(), r.screen())
	if !exited {
		cmd.Process.Kill()
		<-r.done
		ts.Fatalf("tty: the steps ended and %s still runs (end them with exit)", args[1])
	}
	if neg != (werr != nil) {
		ts.Fatalf("tty %s: exit %v (want failure: %v)", args[1], werr, neg)
	}
}

func (r *ttyRun) run(args []string) {
	prog := args[0]
	for _, dir := range filepath.SplitList(r.ts.Getenv("PATH")) {
		if p := filepath.Join(dir, args[0]); fileExists(p) {
			prog = p
			break
		}
	}
	cmd := exec.Command(prog, args[1:]...)
	cmd.Env, cmd.Dir = scriptEnv(r.ts), r.ts.MkAbs(".")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.ts.Fatalf("tty: run %v: %v\n%s", args, err, out)
	}
}

func (r *ttyRun) send(b string) {
	_, err := r.term.Write([]byte(b))
	r.ts.Check(err)
}

// waitFor waits until the screen (row, unless it is -1<<31) shows text.
func (r *ttyRun) waitFor(row int, text string) {
	text = unquote(r.ts, text)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		shown := r.screen()
		if row != -1<<31 {
			rows, i := strings.Split(r.emu.String(), "\n"), row
			if i < 0 {
				i += len(rows)
			}
			shown = ""
			if i >= 0 && i < len(rows) {
				shown = rows[i]
			}
		}
		if strings.Contains(shown, text) {
			return
		}
		select {
		case err := <-r.done:
			r.ts.Fatalf("tty: the program exited (%v) before the screen showed %q:\n%s", err, text, r.screen())
		case <-time.After(50 * time.Millisecond):
		}
	}
	r.ts.Fatalf("tty: the screen did not show %q in 60 s:\n%s", text, r.screen())
}

// idPattern masks what differs from run to run: ids and the seconds a line may carry.
var idPattern = regexp.MustCompile(`\b(ses|qst|cmd|ask|turn|trn|inp|rcp|job)_[0-9a-z]{6,}`)

// screen is the emulator's screen as text, rows without trailing spaces, ids masked.
func (r *ttyRun) screen() string {
	lines := strings.Split(r.emu.String(), "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, " ")
		lines[i] = idPattern.ReplaceAllStringFunc(l, func(id string) string {
			p, rest, _ := strings.Cut(id, "_")
			return p + "_" + strings.Repeat("#", len(rest))
		})
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n") + "\n"
}

// compare holds the screen to its golden file. The screen settles first: it must read the
// same twice 200 ms apart (a frame may be half drawn).
func (r *ttyRun) compare(name string) {
	path := filepath.Join(screensDir, name+".txt")
	var got string
	for i := 0; i < 50; i++ {
		got = r.screen()
		time.Sleep(200 * time.Millisecond)
		if r.screen() == got {
			break
		}
	}
	if *updateScreens {
		r.ts.Check(os.MkdirAll(screensDir, 0o755))
		r.ts.Check(os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		r.ts.Fatalf("tty: golden screen %s: %v (write it with -update-screens); the screen:\n%s", name, err, got)
	}
	if string(want) != got {
		r.ts.Fatalf("tty: screen %s differs from %s\n--- want\n%s--- got\n%s", name, path, want, got)
	}
}

func keyBytes(ts *testscript.TestScript, name string) string {
	keys := map[string]string{"enter": "\r", "ctrl+c": "\x03", "ctrl+d": "\x04", "esc": "\x1b", "up": "\x1b[A",
		"down": "\x1b[B", "pgup": "\x1b[5~", "pgdown": "\x1b[6~", "backspace": "\x7f",
		"ctrl+u": "\x15", "tab": "\t"}
	b, ok := keys[name]
	if !ok {
		ts.Fatalf("tty: unknown key %q", name)
	}
	return b
}

func unquote(ts *testscript.TestScript, s string) string {
	if strings.HasPrefix(s, `"`) {
		u, err := strconv.Unquote(s)
		ts.Check(err)
		return u
	}
	return s
}

func atoi(ts *testscript.TestScript, s string) int {
	n, err := strconv.Atoi(s)
	ts.Check(err)
	return n
}
