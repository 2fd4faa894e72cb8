package main

import (
	"encoding/json"
	"slices"
	"strings"

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
	root.PersistentPreRun = func(cmd *cobra.Command, _ []string) {
		readOnlyCommand = isReadOnly(cmd)
		for i, f := range sandboxFlags {
			if values[i] == "" {
				continue
			}
			js, _ := json.Marshal(values[i])
			cliSettings = append(cliSettings, cliSetting{"--" + f.flag, f.key, js})
		}
	}
}

// addApprovalFlags registers a run's approval flags (docs/permissions.md, "Per-run flags"),
// the CLI layer of permission.mode and permission.rules: --permission-mode, and --allow and
// --deny TOOL[:PATTERN], repeatable. Before the command runs they are laid over the
// configuration like any other CLI setting: the project layer's limits do not bind them (a
// person typed them), managed rules still win, and an explicit deny below stays final only
// where no later rule matches, as everywhere.
func addApprovalFlags(cmd *cobra.Command) {
	mode := cmd.Flags().String("permission-mode", "", "permission mode for this run: standard, strict or allow_all (the CLI layer of permission.mode)")
	allow := cmd.Flags().StringArray("allow", nil, "allow TOOL, or TOOL:PATTERN (shell:'rm -rf build*'), for this run; repeatable. A pattern that names a plain command pre-approves it when destructive (docs/risk.md)")
	deny := cmd.Flags().StringArray("deny", nil, "deny TOOL, or TOOL:PATTERN, for this run; repeatable; written after every --allow, so it wins over one that matches the same call")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		if *mode != "" {
			js, _ := json.Marshal(*mode)
			cliSettings = append(cliSettings, cliSetting{"--permission-mode", "permission.mode", js})
		}
		rules, err := approvalRules(*allow, *deny)
		if err != nil || rules == nil {
			return err
		}
		cliSettings = append(cliSettings, cliSetting{"--allow/--deny", "permission.rules", rules})
		return nil
	}
}

// approvalRules is the permission.rules object of --allow and --deny, in the order given,
// every --deny after every --allow. A flag without a pattern is the pattern *, written as an
// object, so it takes the place of a lower layer's catch-all and the narrower rules written
// after it there still win (docs/permissions.md, "Layers and merging"); a pattern given twice
// keeps its last action, in its last place. nil when no flag was given.
func approvalRules(allow, deny []string) (json.RawMessage, error) {
	type pattern struct{ text, action string }
	var keys []string
	byKey := map[string][]pattern{}
	add := func(flag, value, action string) error {
		key, pat, found := strings.Cut(value, ":")
		switch {
		case strings.TrimSpace(key) == "" || strings.ContainsAny(key, " \t"):
			return usagef("%s %q: want TOOL or TOOL:PATTERN, as in %s shell or %s 'shell:git push*'", flag, value, flag, flag)
		case found && pat == "":
			return usagef("%s %q: the pattern after %q is empty; drop the colon to mean the whole tool", flag, value, key+":")
		case !found:
			pat = "*"
		}
		if _, ok := byKey[key]; !ok {
			keys = append(keys, key)
		}
		ps := slices.DeleteFunc(byKey[key], func(p pattern) bool { return p.text == pat })
		byKey[key] = append(ps, pattern{pat, action})
		return nil
	}
	for _, f := range []struct {
		flag, action string
		values       []string
	}{{"--allow", "allow", allow}, {"--deny", "deny", deny}} {
		for _, v := range f.values {
			if err := add(f.flag, v, f.action); err != nil {
				return nil, err
			}
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	// Written by hand: the order of the patterns is the policy, and a Go map has none.
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kj, _ := json.Marshal(k)
		b.Write(kj)
		b.WriteString(":{")
		for j, p := range byKey[k] {
			if j > 0 {
				b.WriteByte(',')
			}
			pj, _ := json.Marshal(p.text)
			aj, _ := json.Marshal(p.action)
			b.Write(pj)
			b.WriteByte(':')
			b.Write(aj)
		}
		b.WriteByte('}')
	}
	b.WriteByte('}')
	return json.RawMessage(b.String()), nil
}
