//go:build !linux

package shell

// Without a child subreaper this process adopts no orphans (docs/shell-execution.md, "The
// guard dies"): there is nothing to sweep.
func adoptOrphans(int) uint64 { return 0 }
func sweepOrphans(uint64)     {}
func reapZombieOrphans()      {}
