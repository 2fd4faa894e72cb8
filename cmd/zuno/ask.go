package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/zuno-run/zuno/events"
)

// terminalAsker puts a turn's permission asks to the person at the terminal and records each
// answer as a command (AnswerPermission): the turn waits for it in the session's inbox
// (docs/permissions.md, "Asking").
type terminalAsker struct {
	// mu holds the terminal for one ask or question at a time (terminalQuestions).
	mu     sync.Mutex
	in     *bufio.Reader
	out    io.Writer
	answer func(e events.PermissionAsked, reply string) error
}

// interactive reports whether asks can be put at a terminal: zuno run asks only when both
// standard input and standard error are terminals; otherwise an ask is a denial.
func interactive() bool { return isTerminal(os.Stdin) && isTerminal(os.Stderr) }

func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// ask shows the call with its matched rule and the choices, and records the answer. End of
// input is a rejection: nothing runs that nobody approved.
func (t *terminalAsker) ask(e events.PermissionAsked, view []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.out, "\n? %s wants permission %q for %s\n", e.Tool, e.Key, e.Resource)
	for _, l := range view { // an edit's change (askview.go)
		fmt.Fprintln(t.out, previewIndent+previewLine(l))
	}
	fmt.Fprintf(t.out, "  %s; mode %s\n", askedBy(e), e.Mode)
	reply := t.read(e)
	if err := t.answer(e, reply); err != nil {
		fmt.Fprintf(t.out, "! the answer was not recorded: %v; press Ctrl-C to stop the run\n", err)
	}
}

func (t *terminalAsker) read(e events.PermissionAsked) string {
	prompt := "  [o]nce  [r]eject"
	if e.Always != "" {
		prompt = fmt.Sprintf("  [o]nce  [a]lways (this session: %s %s)  [r]eject", e.Key, e.Always)
	}
	for range 3 {
		fmt.Fprint(t.out, prompt+"? ")
		line, err := t.in.ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "o", "once", "y", "yes":
			return "once"
		case "a", "always":
			if e.Always != "" {
				return "always"
			}
		case "r", "reject", "n", "no":
			return "reject"
		}
		if err != nil {
			fmt.Fprintln(t.out, "\n  (end of input: rejected)")
			return "reject"
		}
	}
	fmt.Fprintln(t.out, "  (no valid answer: rejected)")
	return "reject"
}
