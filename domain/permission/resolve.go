package permission

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/settings"
)

// Rule is one resolved rule: under permission Key, calls whose resource matches Pattern get
// Action. Key and Pattern may hold the wildcard *; a rule written for a whole tool
// ("shell": "deny") has Pattern "*".
type Rule struct {
	Key     string         `json:"permission"`
	Pattern string         `json:"pattern"`
	Action  Action         `json:"action"`
	Layer   settings.Layer `json:"layer"`
	// Source is where the layer was read: a file, a variable, a flag.
	Source string `json:"source,omitempty"`
	// Setting is the config path that wrote it: permission.rules.shell["git *"],
	// permission.rules.edit, or tools.write for a folded tools switch.
	Setting string `json:"setting"`
}

// Policy is the resolved permission configuration: the mode and the ordered rules, where the
// last matching rule wins. It is immutable; WithMode and WithContract return changed copies.
type Policy struct {
	configured Mode
	mode       Mode
	modeReason string
	rules      []Rule
	contract   *Contract
}

// ConfiguredMode is the mode the configuration set (standard when none did).
func (p Policy) ConfiguredMode() Mode { return p.configured }

// Mode is the effective mode: the configured one unless WithMode forced another.
func (p Policy) Mode() Mode { return p.mode }

// Rules returns the rules in evaluation order (the last match wins).
func (p Policy) Rules() []Rule { return slices.Clone(p.rules) }

// Contract returns the agent contract applied with WithContract, or nil.
func (p Policy) Contract() *Contract { return p.contract }

// WithMode forces the effective mode, for the sandbox: danger-full-access selects allow_all
// (docs/permissions.md). The configured mode stays what the configuration said, and why is
// shown by Explain.
func (p Policy) WithMode(m Mode, why string) Policy {
	p.mode, p.modeReason = m, why
	return p
}

// layerRank orders the layers of settings.Layers. An agent's own permission rules (agents.<name>
// or Markdown frontmatter) overlay the trusted layers, so that they can carve exceptions, but
// sit below the managed policy, which keeps the final say.
var layerRank = map[settings.Layer]int{
	settings.Builtin: 0, settings.Global: 1, settings.Project: 2, settings.Explicit: 3,
	settings.Env: 4, settings.CLI: 5, settings.Agent: 6, settings.Managed: 7,
}

// Defaults is the builtin layer, resolved first so that every other layer overrides it:
// standard mode, every call in the workspace allowed, and a path outside the workspace asked
// for (external_directory), so that the default session runs without prompts inside its
// workspace and asks before it leaves it.
func Defaults() settings.Raw {
	return settings.Raw{Layer: settings.Builtin, Source: "builtin defaults",
		JSON: json.RawMessage(`{"mode":"standard","rules":{"*":"allow","external_directory":"ask"}}`)}
}

// keyRules is one permission key's rules in a layer, in order. whole marks a key written as a
// single action ("shell": "deny"); its one rule has pattern *.
type keyRules struct {
	key   string
	whole bool
	rules []Rule
}

// layerValue is what one settings.Raw contributes: maybe a mode, and ordered key rules.
type layerValue struct {
	mode *Mode
	keys []keyRules
}

// Resolve merges the permission values and the tools switches of the layers into a Policy.
// Each permission Raw is one layer's {"mode": ..., "rules": {...}}; each tools Raw is one
// layer's {"<tool>": bool}. The builtin defaults come first. Layers apply from lowest to
// highest precedence; within a layer, its tools switches first and its permission rules over
// them, because permission.rules is the one place the seeds ask intent to be written.
func Resolve(permission, tools []settings.Raw) (Policy, error) {
	type item struct {
		raw   settings.Raw
		tools bool
	}
	items := []item{{raw: Defaults()}}
	for _, r := range tools {
		if !r.Unset() {
			items = append(items, item{r, true})
		}
	}
	for _, r := range permission {
		if !r.Unset() {
			items = append(items, item{raw: r})
		}
	}
	for _, it := range items {
		if _, ok := layerRank[it.raw.Layer]; !ok {
			return Policy{}, configError(it.raw, CodeInvalidConfig, "layer", fmt.Sprintf("layer %q is not a configuration layer", it.raw.Layer),
				"give each value one of the layers of package settings")
		}
	}
	sort.SliceStable(items, func(i, j int) bool {
		ri, rj := layerRank[items[i].raw.Layer], layerRank[items[j].raw.Layer]
		if ri != rj {
			return ri < rj
		}
		return items[i].tools && !items[j].tools
	})
	p := Policy{configured: Standard}
	var merged []keyRules
	for _, it := range items {
		var v layerValue
		var err error
		if it.tools {
			v, err = decodeTools(it.raw)
		} else {
			v, err = decodePermission(it.raw)
		}
		if err != nil {
			return Policy{}, err
		}
		if v.mode != nil {
			p.configured = *v.mode
		}
		merged = mergeKeys(merged, v.keys)
	}
	p.mode = p.configured
	for _, k := range merged {
		p.rules = append(p.rules, k.rules...)
	}
	return p, nil
}

// mergeKeys lays overlay over base as the seeds say: a key set in both is replaced in the
// base's position, a key only the overlay sets is appended after the base's keys, and the same
// holds for the patterns of a key written as an object. A key the overlay writes as one action
// replaces the whole key (its every pattern); a base key written as one action is, under an
// overlay object, the pattern * so that the overlay carves exceptions out of it.
func mergeKeys(base, overlay []keyRules) []keyRules {
	out := slices.Clone(base)
	for _, o := range overlay {
		i := slices.IndexFunc(out, func(k keyRules) bool { return k.key == o.key })
		switch {
		case i < 0:
			out = append(out, o)
		case o.whole:
			out[i] = o
		default:
			out[i] = keyRules{key: o.key, rules: mergePatterns(out[i].rules, o.rules)}
		}
	}
	return out
}

func mergePatterns(base, overlay []Rule) []Rule {
	out := slices.Clone(base)
	for _, o := range overlay {
		if i := slices.IndexFunc(out, func(r Rule) bool { return r.Pattern == o.Pattern }); i >= 0 {
			out[i] = o
		} else {
			out = append(out, o)
		}
	}
	return out
}

// decodePermission reads one layer's permission object.
func decodePermission(raw settings.Raw) (layerValue, error) {
	ms, err := members(raw.JSON)
	if err != nil {
		return layerValue{}, malformed(raw, "permission", err, `write permission as {"mode": "standard", "rules": {...}}`)
	}
	var v layerValue
	for _, m := range ms {
		switch m.key {
		case "mode":
			s, _ := jsonString(m.value)
			mode, ok := parseMode(s)
			if !ok {
				e := configError(raw, CodeInvalidMode, "permission.mode", fmt.Sprintf("permission.mode is %s", m.value),
					"use one of: "+strings.Join(Modes(), ", "))
				e.Err.Valid = Modes()
				return layerValue{}, e
			}
			v.mode = &mode
		case "rules":
			if v.keys, err = decodeRules(raw, m.value); err != nil {
				return layerValue{}, err
			}
		default:
			return layerValue{}, configError(raw, CodeInvalidConfig, "permission."+m.key,
				fmt.Sprintf("permission.%s is not a permission setting", m.key), "use permission.mode or permission.rules")
		}
	}
	return v, nil
}

// decodeRules reads permission.rules: each key is one action or an object of pattern → action.
func decodeRules(raw settings.Raw, value json.RawMessage) ([]keyRules, error) {
	ms, err := members(value)
	if err != nil {
		return nil, malformed(raw, "permission.rules", err, `write permission.rules as {"<permission>": "<action>" or {"<pattern>": "<action>"}}`)
	}
	var out []keyRules
	for _, m := range ms {
		field := "permission.rules." + m.key
		if m.key == "" {
			return nil, configError(raw, CodeInvalidConfig, "permission.rules", "permission.rules has an empty key",
				"name the permission (read, edit, shell, external_directory, a tool name) or use * for all")
		}
		if _, ok := rejectedKeys[m.key]; ok {
			return nil, rejectedKeyError(raw, m.key)
		}
		if !isObject(m.value) {
			a, err := ruleAction(raw, field, m.value)
			if err != nil {
				return nil, err
			}
			out = append(out, keyRules{key: m.key, whole: true,
				rules: []Rule{{Key: m.key, Pattern: "*", Action: a, Layer: raw.Layer, Source: raw.Source, Setting: field}}})
			continue
		}
		ps, err := members(m.value)
		if err != nil {
			return nil, malformed(raw, field, err, `write the patterns as {"<pattern>": "allow" | "ask" | "deny"}`)
		}
		k := keyRules{key: m.key}
		for _, p := range ps {
			pf := fmt.Sprintf("%s[%q]", field, p.key)
			a, err := ruleAction(raw, pf, p.value)
			if err != nil {
				return nil, err
			}
			k.rules = append(k.rules, Rule{Key: m.key, Pattern: p.key, Action: a, Layer: raw.Layer, Source: raw.Source, Setting: pf})
		}
		out = append(out, k)
	}
	return out, nil
}

func ruleAction(raw settings.Raw, field string, v json.RawMessage) (Action, error) {
	s, _ := jsonString(v)
	a, ok := parseAction(s)
	if !ok {
		e := configError(raw, CodeInvalidRuleAction, field, fmt.Sprintf("%s is %s, not an action", field, v),
			"use one of: "+strings.Join(Actions(), ", "))
		e.Err.Valid = Actions()
		return "", e
	}
	return a, nil
}

// decodeTools reads one layer's tools switches and folds each onto its permission key: false
// is deny, true is allow. Two switches of the layer that fold onto one key must agree, since
// within a layer there is no order to appeal to; a tool this build does not have is kept as a
// rule (MCP, plugin and skill tools are named at run time).
func decodeTools(raw settings.Raw) (layerValue, error) {
	ms, err := members(raw.JSON)
	if err != nil {
		return layerValue{}, malformed(raw, "tools", err, `write tools as {"<tool>": true | false}`)
	}
	var v layerValue
	first := map[string]member{}
	for _, m := range ms {
		on, ok := jsonBool(m.value)
		if !ok || m.key == "" {
			return layerValue{}, configError(raw, CodeInvalidConfig, "tools."+m.key, fmt.Sprintf("tools.%s is %s, not true or false", m.key, m.value),
				"set each tool to true (available) or false (disabled)")
		}
		key := KeyFor(m.key)
		if prev, seen := first[key]; seen {
			if prevOn, _ := jsonBool(prev.value); prevOn != on {
				return layerValue{}, toolsConflict(raw, prev.key, prevOn, m.key, on, key)
			}
			continue
		}
		first[key] = m
		a := Deny
		if on {
			a = Allow
		}
		v.keys = append(v.keys, keyRules{key: key, whole: true,
			rules: []Rule{{Key: key, Pattern: "*", Action: a, Layer: raw.Layer, Source: raw.Source, Setting: "tools." + m.key}}})
	}
	return v, nil
}

func toolsConflict(raw settings.Raw, a string, aOn bool, b string, bOn bool, key string) *ConfigError {
	msg := fmt.Sprintf("tools %q is %t and tools %q is %t, but both are governed by permission %q; one rule cannot be both, "+
		"so set them alike or write the rule under permission.rules.%s", a, aOn, b, bOn, key, key)
	e := domain.NewError(CodeToolsConflict, msg, "")
	e.Field = "tools"
	return &ConfigError{Err: e, Layer: raw.Layer, Source: raw.Source}
}

func malformed(raw settings.Raw, field string, err error, fix string) *ConfigError {
	var dup duplicateKeyError
	if errors.As(err, &dup) {
		return configError(raw, CodeInvalidConfig, field, fmt.Sprintf("%s writes key %q twice", field, dup.key),
			"keep one of them: which one was meant cannot be known")
	}
	return configError(raw, CodeInvalidConfig, field, fmt.Sprintf("%s is not valid: %v", field, err), fix)
}
