//go:build linux

package tui

import (
	"io"

	"golang.org/x/sys/unix"
)

// discardTypeAhead drops what was typed at the terminal in and not read yet, and says how
// many bytes: a line typed while a turn ran was not typed for the ask or question shown now
// (docs/tui.md, "Plain line mode"). Input that is not a terminal (a file of answers) keeps its
// lines.
func discardTypeAhead(in io.Reader) int {
	f, ok := in.(interface{ Fd() uintptr })
	if !ok {
		return 0
	}
	fd := int(f.Fd())
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err != nil {
		return 0
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
	if err != nil || n == 0 {
		return 0
	}
	if err := unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH); err != nil {
		return 0
	}
	return n
}
