//go:build !linux

package guard

import "syscall"

// commandAttr: without PR_SET_PDEATHSIG the lifeline and the process group bind the command.
func commandAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }

// becomeSubreaper: no subreaper outside Linux; only the process group is stopped.
func becomeSubreaper() {}

// setNotDumpable: the status reporter runs only inside bubblewrap, on Linux.
func setNotDumpable() {}
