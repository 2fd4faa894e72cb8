//go:build !linux

package shell

import "testing"

// bothGuards: only the per-command guard exists here.
func bothGuards(t *testing.T, test func(t *testing.T)) { test(t) }

func setPerCommand(bool) {}

func perCommand() bool { return true }
