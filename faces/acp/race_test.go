//go:build race

package acp_test

// Under the race detector the agent process is built with it too: the concurrency under test
// (a turn, its permission requests, the client's messages) runs in that process.
func init() { buildFlags = append(buildFlags, "-race") }
