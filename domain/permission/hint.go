package permission

import (
	"slices"

	"github.com/zuno-run/zuno/domain/settings"
)

// ruleLayers are the layers a permission rule can be written in: the configuration files and
// the CLI layer (zuno run --allow and --deny, docs/permissions.md, "Per-run flags"). The env
// layer carries only the ZUNO_* variables (docs/config.md), so no hint names it.
var ruleLayers = []settings.Layer{settings.Global, settings.Project, settings.Explicit, settings.CLI, settings.Managed}

// AcceptsAllow reports whether a configuration layer accepts a rule that allows key: the env
// layer holds no rules, and the project layer, which the sandboxed shell can write,
// refuses an allow for the keys it may not loosen (ProjectProtectedKeys; the loader's check is
// adapters/config/trust.go).
func AcceptsAllow(l settings.Layer, key string) bool {
	if !slices.Contains(ruleLayers, l) {
		return false
	}
	if l != settings.Project {
		return true
	}
	return !slices.ContainsFunc(ProjectProtectedKeys(), func(p string) bool { return MatchesKey(key, p) })
}

// AllowLayers are the layers, lowest first, where a rule allowing d's permission and resource
// would both load and win: the governing rule's layer (after that rule) or a layer above it,
// the global layer when a builtin default or the agent decided; only those that accept it.
func AllowLayers(d Decision) []settings.Layer {
	from, _ := ruleLayer(d)
	var out []settings.Layer
	for _, l := range ruleLayers {
		if layerRank[l] >= layerRank[from] && AcceptsAllow(l, d.Key) {
			out = append(out, l)
		}
	}
	return out
}

// ruleLayer is the layer a rule allowing d has to start from, and whether the governing rule
// was written there (false: a builtin default, an agent's, or no rule at all, so the global
// file is the lowest that overrides it).
func ruleLayer(d Decision) (settings.Layer, bool) {
	if d.Rule != nil && d.Rule.Layer != settings.Builtin && d.Rule.Layer != settings.Agent {
		return d.Rule.Layer, true
	}
	return settings.Global, false
}
