//go:build !linux

package shell

import "os"

// outputPipe is a command's output pipe (pipe_linux.go saves system calls on Linux).
func outputPipe() (r, w *os.File, err error) { return os.Pipe() }
