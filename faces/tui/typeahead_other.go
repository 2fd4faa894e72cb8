//go:build !linux

package tui

import "io"

// discardTypeAhead is linux's alone for now: elsewhere lines typed ahead at a terminal in
// plain mode still reach the ask or question shown next (docs/tui.md, "Plain line mode").
func discardTypeAhead(io.Reader) int { return 0 }
