package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"
)

// mcpDepsDir is ops/testdeps/mcp/node_modules (npm ci --prefix ops/testdeps/mcp), or
// $ZUNO_MCP_TESTDEPS: the MCP servers from npm the scripts run (docs/mcp.md).
func mcpDepsDir() (string, error) {
	if dir := os.Getenv("ZUNO_MCP_TESTDEPS"); dir != "" {
		return dir, nil
	}
	return filepath.Abs("../../ops/testdeps/mcp/node_modules")
}

// mcpDepsPresent answers the scripts' [mcpdeps] condition: node and the packages are there.
// Under CI their absence is an error, so the script fails instead of skipping.
func mcpDepsPresent() (bool, error) {
	dir, err := mcpDepsDir()
	if err != nil {
		return false, err
	}
	_, errNode := exec.LookPath("node")
	_, errPkg := os.Stat(filepath.Join(dir, "@modelcontextprotocol", "server-everything", "package.json"))
	if errNode != nil || errPkg != nil {
		if os.Getenv("CI") != "" {
			return false, fmt.Errorf("CI is set but node or the MCP test servers are missing (node: %v, packages: %v): npm ci --prefix ops/testdeps/mcp", errNode, errPkg)
		}
		return false, nil
	}
	return true, nil
}

func init() {
	// mcpdeps sets $MCPDEPS to the packages' directory; guard it with [!mcpdeps] skip.
	scriptCmds["mcpdeps"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 0 {
			ts.Fatalf("usage: mcpdeps")
		}
		dir, err := mcpDepsDir()
		ts.Check(err)
		ts.Setenv("MCPDEPS", dir)
	}
}
