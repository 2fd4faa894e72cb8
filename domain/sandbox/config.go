// Package sandbox is the pure sandbox resolver: it merges the sandbox key of the
// configuration layers, validates it (values, trust of the layer that set each key), and
// decides, from the merged config, the agent's contract, the platform and the backend probe's
// typed answer, how the shell runs: confined, natively by platform default or by trusted
// declaration, in a fallback to host execution, with full access, or not at all (a refusal
// that says what to do). See docs/sandbox.md. No I/O: the probe is the caller's.
package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/settings"
)

// Modes (sandbox.mode).
const (
	ModeReadOnly         = "read-only"
	ModeWorkspaceWrite   = "workspace-write"
	ModeDangerFullAccess = "danger-full-access"
)

// Network policies (sandbox.network).
const (
	NetworkDeny  = "deny"
	NetworkAllow = "allow"
	// NetworkHost is the effective network of host execution (never a config value).
	NetworkHost = "host"
)

// Backends (sandbox.backend).
const (
	BackendAuto   = "auto"
	BackendNative = "native"
	// BackendBubblewrap names the confined backend a resolution selected (never a config value).
	BackendBubblewrap = "bubblewrap"
)

// Unavailable policies (sandbox.onUnavailable).
const (
	OnUnavailableDeny          = "deny"
	OnUnavailableRunUnconfined = "run-unconfined"
)

// Stable error codes of this package (they reach the CLI's JSON output).
const (
	// CodeUntrustedLayer: a layer that may not grant host authority (the project layer, an
	// agent contract) tried to.
	CodeUntrustedLayer = "sandbox_untrusted_layer"
	// CodeUnenforceable: the config asks for an isolation the chosen mode cannot provide.
	CodeUnenforceable = "sandbox_unenforceable"
	// CodeUnavailable: the requested confinement is not available and nothing allows host
	// execution instead; the shell is not assembled (*Refusal).
	CodeUnavailable = "sandbox_unavailable"
)

// Config keys, as the seeds spell them.
const (
	KeyMode           = "mode"
	KeyNetwork        = "network"
	KeyBackend        = "backend"
	KeyOnUnavailable  = "onUnavailable"
	KeyWritableRoots  = "writableRoots"
	KeyProtectedPaths = "protectedPaths"
)

// Config is the merged sandbox key. Empty strings are "not set": the defaults are applied by
// Resolve, because what a default is depends on whether any layer set the key.
type Config struct {
	Mode           string   `json:"mode,omitempty"`
	Network        string   `json:"network,omitempty"`
	Backend        string   `json:"backend,omitempty"`
	OnUnavailable  string   `json:"onUnavailable,omitempty"`
	WritableRoots  []string `json:"writableRoots,omitempty"`
	ProtectedPaths []string `json:"protectedPaths,omitempty"`

	// setBy records, per key, the last layer that set it.
	setBy map[string]settings.Layer
}

// SetBy returns the layer that set key last, and whether any layer set it.
func (c Config) SetBy(key string) (settings.Layer, bool) {
	l, ok := c.setBy[key]
	return l, ok
}

// Explicit reports whether any layer set key.
func (c Config) Explicit(key string) bool {
	_, ok := c.setBy[key]
	return ok
}

// WithBackendNative is the config after a trusted "use the native backend" answer (the
// interactive question): the same as passing --sandbox-backend native.
func (c Config) WithBackendNative() Config {
	out := c
	out.setBy = map[string]settings.Layer{}
	for k, v := range c.setBy {
		out.setBy[k] = v
	}
	out.Backend = BackendNative
	out.setBy[KeyBackend] = settings.CLI
	return out
}

// layerValue is one layer's sandbox object; pointers tell "set" from "absent".
type layerValue struct {
	Mode           *string   `json:"mode"`
	Network        *string   `json:"network"`
	Backend        *string   `json:"backend"`
	OnUnavailable  *string   `json:"onUnavailable"`
	WritableRoots  *[]string `json:"writableRoots"`
	ProtectedPaths *[]string `json:"protectedPaths"`
}

// Merge folds the layers' raw sandbox objects, in layer order: a later layer wins per key.
// It refuses unknown keys and values, host authority granted by an untrusted layer, and a
// danger-full-access mode with an explicit network deny.
func Merge(raws []settings.Raw) (Config, error) {
	c := Config{setBy: map[string]settings.Layer{}}
	for _, r := range raws {
		if r.Unset() {
			continue
		}
		var v layerValue
		dec := json.NewDecoder(bytes.NewReader(r.JSON))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return Config{}, invalidAt(r, "", fmt.Sprintf("the sandbox setting is not a valid object (%v)", err),
				`write it as {"mode": "workspace-write", "network": "deny", "onUnavailable": "deny", "backend": "auto", "writableRoots": [], "protectedPaths": []}`)
		}
		if err := c.apply(r, v); err != nil {
			return Config{}, err
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

func (c *Config) apply(r settings.Raw, v layerValue) error {
	set := func(key string, dst *string, val *string, valid ...string) error {
		if val == nil {
			return nil
		}
		if !oneOf(*val, valid) {
			e := invalidAt(r, key, fmt.Sprintf("%q is not a sandbox.%s value", *val, key), "use one of "+strings.Join(valid, ", "))
			e.Valid = valid
			return e
		}
		*dst = *val
		c.setBy[key] = r.Layer
		return nil
	}
	if !r.Layer.Trusted() {
		v = c.tightenOnly(v)
	}
	if err := set(KeyMode, &c.Mode, v.Mode, ModeReadOnly, ModeWorkspaceWrite, ModeDangerFullAccess); err != nil {
		return err
	}
	if err := set(KeyNetwork, &c.Network, v.Network, NetworkDeny, NetworkAllow); err != nil {
		return err
	}
	if err := set(KeyBackend, &c.Backend, v.Backend, BackendAuto, BackendNative); err != nil {
		return err
	}
	if err := set(KeyOnUnavailable, &c.OnUnavailable, v.OnUnavailable, OnUnavailableDeny, OnUnavailableRunUnconfined); err != nil {
		return err
	}
	if v.WritableRoots != nil {
		c.WritableRoots = append([]string(nil), (*v.WritableRoots)...)
		c.setBy[KeyWritableRoots] = r.Layer
	}
	if v.ProtectedPaths != nil {
		if r.Layer.Trusted() {
			c.ProtectedPaths = nil
		}
		c.ProtectedPaths = append(c.ProtectedPaths, (*v.ProtectedPaths)...)
		c.setBy[KeyProtectedPaths] = r.Layer
	}
	return checkTrust(r, v)
}

// modeStrictness orders the modes from the least authority up.
var modeStrictness = map[string]int{ModeReadOnly: 0, ModeWorkspaceWrite: 1, ModeDangerFullAccess: 2}

// tightenOnly keeps of an untrusted (project) layer's value only what narrows the layers below
// it: a stricter mode, a network deny; its protected paths are added to theirs, never replace
// them. A checked-in file, which the sandboxed shell itself can write, must not loosen what a
// trusted layer set (docs/sandbox.md, "Configuration and trust").
func (c *Config) tightenOnly(v layerValue) layerValue {
	if v.Mode != nil {
		cur := c.Mode
		if cur == "" {
			cur = ModeWorkspaceWrite
		}
		// danger-full-access stays, to be refused by checkTrust with its remedy.
		if s, ok := modeStrictness[*v.Mode]; ok && s > modeStrictness[cur] && *v.Mode != ModeDangerFullAccess {
			v.Mode = nil
		}
	}
	// The network is denied unless a trusted layer allowed it (the confined modes' default).
	if v.Network != nil && *v.Network == NetworkAllow && c.Network != NetworkAllow {
		v.Network = nil
	}
	return v
}

// checkTrust refuses host authority from a layer the checkout controls. Checked-in
// configuration cannot give itself host execution (docs/sandbox.md "Trust"): run-unconfined,
// the native backend, danger-full-access, and extra writable roots (the seeds call them
// "explicitly trusted" roots) need a trusted layer. The project layer may still set deny.
func checkTrust(r settings.Raw, v layerValue) error {
	if r.Layer.Trusted() {
		return nil
	}
	refuse := func(key, what string) error {
		e := domain.NewError(CodeUntrustedLayer,
			fmt.Sprintf("the %s layer (%s) sets sandbox.%s to %s, but checked-in configuration cannot grant itself host authority", r.Layer, r.Source, key, what),
			"remove it there and set it in a trusted layer (global zuno.json, managed policy, ZUNO_SANDBOX_* environment, or a --sandbox* flag)")
		e.Field = "sandbox." + key
		return e
	}
	switch {
	case v.OnUnavailable != nil && *v.OnUnavailable == OnUnavailableRunUnconfined:
		return refuse(KeyOnUnavailable, `"run-unconfined"`)
	case v.Backend != nil && *v.Backend == BackendNative:
		return refuse(KeyBackend, `"native"`)
	case v.Mode != nil && *v.Mode == ModeDangerFullAccess:
		return refuse(KeyMode, `"danger-full-access"`)
	case v.WritableRoots != nil && len(*v.WritableRoots) > 0:
		return refuse(KeyWritableRoots, "extra writable roots")
	}
	return nil
}

// Validate checks the merged values: paths, and what the mode can enforce.
func (c Config) Validate() error {
	if c.Mode == ModeDangerFullAccess && c.Network == NetworkDeny && c.Explicit(KeyNetwork) {
		e := domain.NewError(CodeUnenforceable,
			`sandbox.mode "danger-full-access" runs with the host network, so the explicit sandbox.network "deny" cannot be enforced`,
			`remove network: "deny", or choose mode "workspace-write" or "read-only", which enforce it`)
		e.Field = "sandbox.network"
		return e
	}
	for i, p := range c.WritableRoots {
		if err := checkPath(p); err != "" || !path.IsAbs(p) {
			if err == "" {
				err = "is not absolute"
			}
			return domain.Invalid(fmt.Sprintf("sandbox.writableRoots[%d]", i), fmt.Sprintf("writable root %q %s", p, err),
				"give an absolute, clean path such as /srv/build-cache")
		}
		if path.Clean(p) == "/" {
			return domain.Invalid(fmt.Sprintf("sandbox.writableRoots[%d]", i), `writable root "/" makes the whole host writable`,
				`use mode "danger-full-access" if that is meant, or name the directories that must be writable`)
		}
	}
	for i, p := range c.ProtectedPaths {
		bad := checkPath(p)
		if bad == "" && !path.IsAbs(p) && (path.Clean(p) == "." || path.Clean(p) == ".." || strings.HasPrefix(path.Clean(p), "../")) {
			bad = "does not name a path inside the workspace"
		}
		if bad != "" {
			return domain.Invalid(fmt.Sprintf("sandbox.protectedPaths[%d]", i), fmt.Sprintf("protected path %q %s", p, bad),
				"give a path relative to the workspace (.git, secrets) or an absolute path")
		}
	}
	return nil
}

func checkPath(p string) string {
	switch {
	case strings.TrimSpace(p) == "":
		return "is empty"
	case strings.IndexByte(p, 0) >= 0:
		return "contains a NUL byte"
	case strings.ContainsRune(p, '\\'):
		return "contains a backslash"
	}
	return ""
}

func invalidAt(r settings.Raw, key, msg, fix string) *domain.Error {
	field := "sandbox"
	if key != "" {
		field += "." + key
	}
	e := domain.Invalid(field, fmt.Sprintf("%s (in the %s layer, %s)", msg, r.Layer, r.Source), fix)
	return e
}

func oneOf(v string, valid []string) bool {
	for _, x := range valid {
		if v == x {
			return true
		}
	}
	return false
}
