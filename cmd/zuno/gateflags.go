package main

import (
	"encoding/json"

	"github.com/spf13/cobra"
)

// sandboxFlags are the one-invocation sandbox settings (docs/sandbox.md): the CLI layer of
// sandbox.mode, sandbox.backend and sandbox.onUnavailable. They are global, as the seeds spell
// them (zuno --sandbox-backend native …), and apply to every command of the invocation.
var sandboxFlags = []struct{ flag, key, usage string }{
	{"sandbox", "sandbox.mode", "sandbox mode for this invocation: read-only, workspace-write or danger-full-access"},
	{"sandbox-backend", "sandbox.backend", "sandbox backend for this invocation: auto (OS confinement) or native (no OS sandbox; permission rules still apply)"},
	{"sandbox-on-unavailable", "sandbox.onUnavailable", "when the OS sandbox is unavailable: deny (default) or run-unconfined"},
}

// addSandboxFlags registers the flags on root and, before any command runs, lays the ones
// given over the configuration as its CLI layer.
func addSandboxFlags(root *cobra.Command) {
	values := make([]string, len(sandboxFlags))
	for i, f := range sandboxFlags {
		root.PersistentFlags().StringVar(&values[i], f.flag, "", f.usage)
	}
	root.PersistentPreRun = func(*cobra.Command, []string) {
		for i, f := range sandboxFlags {
			if values[i] == "" {
				continue
			}
			js, _ := json.Marshal(values[i])
			cliSettings = append(cliSettings, struct {
				Flag, Key string
				JSON      json.RawMessage
			}{"--" + f.flag, f.key, js})
		}
	}
}
