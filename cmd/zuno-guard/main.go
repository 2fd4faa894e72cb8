// Command zuno-guard is the shell's guard and the sandbox's status reporter as a program of
// its own (docs/shell-execution.md, "The guard"): zuno runs it beside itself for every
// command, and because it links nothing but the guard package it starts in a fraction of
// the time zuno's own binary takes. Package guard's init runs the guard (argv[0] is its
// Name) or the status reporter and exits; main is reached only when a person runs it.
package main

import (
	"os"

	"github.com/zuno-run/zuno/adapters/tools/shell/guard"
)

func main() {
	_, _ = os.Stderr.WriteString(guard.ProgramName + ": zuno starts this program as its shell guard; it is not run by hand.\n" +
		"Install it in the same directory as zuno.\n")
	os.Exit(2)
}
