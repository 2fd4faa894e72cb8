// Package settings names the configuration layers and carries one layer's raw value of a key
// to the policy that reads it, so that the policies (permission rules, the sandbox resolver)
// know which layer said what: order and trust are part of their semantics (docs/config.md).
package settings

import (
	"encoding/json"
	"strings"
)

// Layer is one source of configuration. Layers are applied in the order of Layers: a later
// layer overrides an earlier one, and the managed policy has the final say.
type Layer string

const (
	// Builtin is the runtime's defaults (and the built-in agents' contracts).
	Builtin Layer = "builtin"
	// Global is $XDG_CONFIG_HOME/zuno/zuno.json[c] (else ~/.config/zuno/).
	Global Layer = "global"
	// Project is zuno.json[c] at the repository root and .zuno/zuno.json[c]: checked-in, so
	// untrusted.
	Project Layer = "project"
	// Explicit is the file named by --config (or ZUNO_CONFIG).
	Explicit Layer = "explicit"
	// Env is ZUNO_* variables.
	Env Layer = "env"
	// CLI is command-line flags.
	CLI Layer = "cli"
	// Managed is the system policy (/etc/zuno/managed.json[c]): the final say.
	Managed Layer = "managed"
	// Agent is an agent's contract (built-in or Markdown frontmatter): it only narrows.
	Agent Layer = "agent"
)

// Layers lists the configuration layers from lowest to highest precedence. Agent contracts
// are not in it: they narrow the merged result rather than override it.
var Layers = []Layer{Builtin, Global, Project, Explicit, Env, CLI, Managed}

// Trusted reports whether the layer may grant host authority: run-unconfined, the native
// backend, host commands. The project layer is written by the checkout itself, so it may not.
func (l Layer) Trusted() bool { return l != Project && l != Agent }

// Raw is one layer's value for one key, as written (JSON, comments removed), in layer order.
type Raw struct {
	Layer Layer
	// Source names where it was read: a file path, a variable or a flag.
	Source string
	JSON   json.RawMessage
}

// Unset reports whether the layer wrote nothing for the key, or wrote null: either way the
// layer leaves the key as the layers below it set it.
func (r Raw) Unset() bool {
	s := strings.TrimSpace(string(r.JSON))
	return s == "" || s == "null"
}
