package shell

import (
	"os"
	"syscall"
)

// outputPipe is a command's output pipe. The read end goes through Go's poller, so that a
// read a process outside the group keeps open can be abandoned (supervise); the write end
// is a plain blocking descriptor, since it is only handed to the guard and closed: no
// poller registration and removal, and no switch back to blocking mode when the guard
// takes it (os.File.Fd), three system calls fewer per command than os.Pipe
// (docs/shell-execution.md, "Cost").
func outputPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	if err := syscall.SetNonblock(p[0], true); err != nil {
		syscall.Close(p[0])
		syscall.Close(p[1])
		return nil, nil, err
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}
