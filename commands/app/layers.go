package app

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/settings"
)

// The rules the application applies to the merged configuration layers (docs/config.md,
// "Merge"): which layers' values are united rather than overridden, which settings are checked
// before any command runs, and which are accepted but not acted on. The loader (adapters/config)
// reads and merges the files; every face (the CLI, later a server) applies these same rules.

// Layers is the configuration as its loader read it: each layer's value of a top-level key,
// in layer order.
type Layers interface {
	Raw(key string) []settings.Raw
}

// CodeBadConfig: a merged value the application cannot use (a limit out of range, a bad
// shell.env.exclude); the loader refuses what does not parse with the same code.
const CodeBadConfig = "bad_config"

// ConfigError is a bad value found once the layers are merged: it says what to do.
type ConfigError struct{ Message string }

func (e *ConfigError) Error() string { return "config: " + e.Message }

// Code returns the stable code.
func (e *ConfigError) Code() string { return CodeBadConfig }

// CheckGates checks the permission and sandbox layers, so a bad rule is refused before any
// command runs rather than at a turn's first tool call, and returns the sandbox layers merged.
func CheckGates(l Layers) (sandbox.Config, error) {
	if _, err := permission.Resolve(l.Raw("permission"), l.Raw("tools")); err != nil {
		return sandbox.Config{}, err
	}
	return sandbox.Merge(l.Raw("sandbox"))
}

// MergeEnvExclude unites shell.env.exclude layer by layer: each layer can only add names to
// withhold, never take back one a lower layer withholds, so a later layer cannot narrow what
// the global file keeps from tools. Only trusted layers may set it (the loader refuses it in
// the project layer; it is skipped here too, in case a layer is added without that check).
// valid checks one layer's patterns (the shell's rules: no negation, valid globs).
func MergeEnvExclude(l Layers, valid func([]string) error) ([]string, error) {
	var out []string
	for _, r := range l.Raw("shell") {
		// "shell" may also be a string, the host shell program (accepted, not run here).
		if r.Unset() || !r.Layer.Trusted() || !strings.HasPrefix(strings.TrimSpace(string(r.JSON)), "{") {
			continue
		}
		var v struct {
			Env struct {
				Exclude []string `json:"exclude"`
			} `json:"env"`
		}
		if err := json.Unmarshal(r.JSON, &v); err != nil {
			return nil, &ConfigError{fmt.Sprintf("shell in %s: %v: write {\"env\": {\"exclude\": [\"NAME\", \"PATTERN_*\"]}}", r.Source, err)}
		}
		if err := valid(v.Env.Exclude); err != nil {
			return nil, &ConfigError{fmt.Sprintf("%s: %v", r.Source, err)}
		}
		for _, p := range v.Env.Exclude {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// UnbuiltTools are tools the specification names that this build does not have. A tools
// entry for one is accepted and reported, not refused as unknown_tool, so a configuration
// written for a fuller build still loads.
var UnbuiltTools = []string{"council_run",
	"workflow", "lsp"}

// DropUnbuiltTools takes the entries for UnbuiltTools out of tools (they would reach the tool
// registry as unknown tools) and says so, one note each.
func DropUnbuiltTools(tools map[string]bool) []string {
	var notes []string
	for _, name := range UnbuiltTools {
		if v, ok := tools[name]; ok {
			delete(tools, name)
			notes = append(notes, fmt.Sprintf("tools.%s: %v is ignored: this build has no %s tool", name, v, name))
		}
	}
	return notes
}

// UnusedNotes say which host programs the configuration sets that this build does not run
// yet: shell beyond env (which it acts on), and each of unused that is set.
func UnusedNotes(shell json.RawMessage, unused map[string]json.RawMessage) []string {
	var notes []string
	if shellUnused(shell) {
		notes = append(notes, "shell is accepted but not used beyond env.exclude: this build does not run it yet")
	}
	for key, raw := range unused {
		if raw != nil && string(raw) != "null" {
			notes = append(notes, fmt.Sprintf("%s is accepted but not used: this build does not run it yet", key))
		}
	}
	slices.Sort(notes)
	return notes
}

// shellUnused reports whether the merged shell value says more than env.
func shellUnused(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw != nil && string(raw) != "null"
	}
	for k := range m {
		if !strings.EqualFold(k, "env") {
			return true
		}
	}
	return false
}

// Limits are the numeric settings the application bounds.
type Limits struct {
	// Concurrency are concurrency.<key> values in the order they are checked: tool_calls,
	// delegations, mcp_connections, lsp_requests; 0 is the default.
	Concurrency []Setting
	// ToolOutputBytes and ToolOutputLines are tool_output.max_bytes and max_lines.
	ToolOutputBytes, ToolOutputLines int
}

// Setting is one numeric setting by its key.
type Setting struct {
	Key   string
	Value int
}

// CheckLimits refuses a concurrency outside 1..64 (0 is the default) and a negative tool output
// bound, naming the key and the range.
func CheckLimits(l Limits) error {
	for _, s := range l.Concurrency {
		if s.Value != 0 && (s.Value < 1 || s.Value > 64) {
			return &ConfigError{fmt.Sprintf("concurrency.%s is %d: use 1..64 (1 runs them one at a time)", s.Key, s.Value)}
		}
	}
	if l.ToolOutputBytes < 0 || l.ToolOutputLines < 0 {
		return &ConfigError{"tool_output.max_bytes and max_lines must be positive (defaults 51200 and 2000)"}
	}
	return nil
}
