package permission

import (
	"slices"
	"strings"

	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/domain/tools"
)

// Contract is an agent's contract: ordered rules keyed by tool id (or permission key) that can
// only narrow the configured policy. It begins with "*": "deny", so a tool it does not name is
// hidden, never offered to the model (docs/permissions.md, "Agent contracts").
type Contract struct {
	Agent string `json:"agent"`
	Rules []Rule `json:"rules"`
}

// NewContract builds an agent's contract from its tool allowlist: "*": "deny" first, then each
// named tool allowed, in order. A grant of shell grants bg too, because a background command
// is started by shell and read back only through bg; report_write is a capability of its own,
// granted only by name.
func NewContract(agent string, allowlist []string) Contract {
	c := Contract{Agent: agent}
	add := func(key string, a Action, setting string) {
		c.Rules = append(c.Rules, Rule{Key: key, Pattern: "*", Action: a, Layer: settings.Agent, Source: "agent:" + agent, Setting: setting})
	}
	add("*", Deny, "contract default")
	for _, t := range allowlist {
		add(t, Allow, "tools allowlist")
	}
	if slices.Contains(allowlist, tools.NameShell) && !slices.Contains(allowlist, tools.NameBg) {
		add(tools.NameBg, Allow, "tools allowlist (shell grants bg)")
	}
	// tool_search is offered with the deferred MCP tools it reaches (docs/mcp.md): an entry
	// that can name an MCP tool grants it.
	if slices.ContainsFunc(allowlist, func(e string) bool { return strings.HasPrefix(e, "mcp_") || matchWildcard(e, "mcp_") }) && !slices.Contains(allowlist, tools.NameToolSearch) {
		add(tools.NameToolSearch, Allow, "tools allowlist (an MCP tool grants tool_search)")
	}
	return c
}

// With returns the contract with more rules after its own (an agent's Markdown frontmatter
// rules, in the order written). Like every contract rule they can only narrow.
func (c Contract) With(rules ...Rule) Contract {
	c.Rules = slices.Concat(c.Rules, rules)
	return c
}

// fits reports whether a contract rule's key names the tool id or its permission key.
func (r Rule) fits(tool, key string) bool {
	return matchWildcard(r.Key, tool) || matchWildcard(r.Key, key)
}

// decide is the contract's answer for one call: the last matching rule, deny when none does.
func (c Contract) decide(tool, key, resource string, s *pathSpellings, home string) (Action, *Rule) {
	r := lastMatch(c.Rules, func(r Rule) bool { return r.fits(tool, key) }, resource, s, home)
	if r == nil {
		return Deny, nil
	}
	return r.Action, r
}

// Hidden reports whether the contract withholds the tool from the model: no rule after the
// last whole-tool deny that fits it grants anything. Hidden tools are never offered.
func (c Contract) Hidden(tool string) bool {
	key := KeyFor(tool)
	for i := len(c.Rules) - 1; i >= 0; i-- {
		r := c.Rules[i]
		if !r.fits(tool, key) {
			continue
		}
		if r.Action != Deny {
			return false
		}
		if r.Pattern == "*" {
			return true
		}
	}
	return true
}

// WithContract applies an agent contract to the policy. Every call is then decided by both,
// and the stricter answer governs, so a contract never widens the configuration: a deny or an
// ask of the configuration stays.
func (p Policy) WithContract(c Contract) Policy {
	c.Rules = slices.Clone(c.Rules)
	p.contract = &c
	return p
}

// Hidden reports whether the applied contract (if any) hides the tool.
func (p Policy) Hidden(tool string) bool { return p.contract != nil && p.contract.Hidden(tool) }
