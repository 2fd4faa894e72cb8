package permission

import (
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/domain/tools"
)

// Request is one tool call as the permission gate sees it.
type Request struct {
	// Tool is the tool id the model called; Key is the permission it asks under (KeyFor(Tool)
	// when empty).
	Tool, Key string
	// Resource is what the call touches: a path for the path keys, the command for shell, a
	// directory spelled by ExternalDirResource for external_directory.
	Resource string
	// SideEffect marks a call that changes the world; strict mode asks for each one.
	SideEffect bool
	// Workspace and Home place relative paths and expand ~ and $HOME in path patterns.
	Workspace, Home string
	// Always is the pattern an "always" answer saves (for shell, say, "git status*"); empty
	// for a one-off confirmation, which installs nothing and no earlier always satisfies.
	Always string
}

// Check is the evaluation of one permission for a call.
type Check struct {
	Key      string `json:"permission"`
	Resource string `json:"resource"`
	// RuleAction is what the matched rule says; Action is what the mode makes of it.
	RuleAction Action `json:"ruleAction"`
	Action     Action `json:"action"`
	// Rule is the last matching rule, nil when none matched (the call then asks).
	Rule *Rule `json:"rule"`
	// Always is the pattern an "always" answer to this check would save.
	Always string `json:"always,omitempty"`
	Reason string `json:"reason"`
}

// Decision is the gate's answer for one call. Its embedded Check is the governing one: the
// strictest of Checks, which holds the call's own permission and, for a path outside the
// workspace, external_directory as well.
type Decision struct {
	Tool string `json:"tool"`
	Check
	Mode   Mode    `json:"mode"`
	Checks []Check `json:"checks"`
}

// Decide evaluates a call against the policy (and the agent contract, when one is applied).
// The last matching rule wins; a call no rule matches asks. A path outside the workspace needs
// external_directory for its directory as well, and the stricter answer governs.
func (p Policy) Decide(req Request) Decision {
	key := KeyFor(req.Key)
	if key == "" {
		key = KeyFor(req.Tool)
	}
	if key == ExternalDirectory {
		// Asked by name (zuno debug permissions): the check a path in that directory gets.
		ext := p.external(req, externalSpelling(req.Resource))
		return Decision{Tool: req.Tool, Check: ext, Mode: p.mode, Checks: []Check{ext}}
	}
	var spellings *pathSpellings
	if IsPathKey(key) {
		s := spell(req.Resource, req.Workspace)
		spellings = &s
	}
	own := p.check(req, key, req.Resource, spellings, true, req.Always)
	d := Decision{Tool: req.Tool, Check: own, Mode: p.mode, Checks: []Check{own}}
	if spellings != nil && spellings.outside {
		ext := p.external(req, ExternalDirResource(outsideDir(key, *spellings, req.Resource)))
		d.Checks = append(d.Checks, ext)
		if ext.Action.rank() >= d.Action.rank() { // on a tie the outside grant governs: it is what admitted the path
			d.Check = ext
		}
	}
	return d
}

// external is the external_directory check of a call for the directory res (spelled by
// ExternalDirResource), whether the gate derives it from a path outside the workspace or zuno
// debug permissions names it: the configured rules alone decide it. An agent's contract is not
// asked: it names tools, and it has already been asked about the call's own permission.
func (p Policy) external(req Request, res string) Check {
	return p.check(req, ExternalDirectory, res, nil, false, res)
}

// externalSpelling is the grant's one spelling of a directory named as an external_directory
// resource: "dir" and "dir/*" alike become "dir/*" ("*" stays the catch-all).
func externalSpelling(resource string) string {
	if resource == "" || resource == "*" {
		return "*"
	}
	return ExternalDirResource(strings.TrimSuffix(resource, "/*"))
}

// outsideDir is the directory an external_directory grant names: the directory itself for
// list, the directory holding the file otherwise.
func outsideDir(key string, s pathSpellings, resource string) string {
	p := s.abs
	if p == "" {
		p = resolveDots(normalise(resource))
	}
	if key == "list" {
		return p
	}
	i := strings.LastIndex(p, "/")
	switch {
	case i < 0:
		return "."
	case i == 0:
		return "/"
	}
	return p[:i]
}

func (p Policy) check(req Request, key, resource string, s *pathSpellings, contract bool, always string) Check {
	c := Check{Key: key, Resource: resource, Always: always, RuleAction: Ask}
	if r := lastMatch(p.rules, func(r Rule) bool { return MatchesKey(r.Key, key) }, resource, s, req.Home); r != nil {
		c.Rule, c.RuleAction = r, r.Action
	}
	if contract && p.contract != nil {
		ca, cr := p.contract.decide(req.Tool, key, resource, s, req.Home)
		if ca.rank() > c.RuleAction.rank() {
			c.RuleAction, c.Rule = ca, cr
		}
	}
	c.Action = p.mode.apply(c.RuleAction, req.SideEffect)
	c.Reason = reason(c, p, req.SideEffect)
	return c
}

// lastMatch returns the last rule whose key fits and whose pattern matches the resource.
func lastMatch(rules []Rule, keyFits func(Rule) bool, resource string, s *pathSpellings, home string) *Rule {
	for i := len(rules) - 1; i >= 0; i-- {
		r := rules[i]
		if keyFits(r) && matchResource(r, resource, s, home) {
			return &r
		}
	}
	return nil
}

func matchResource(r Rule, resource string, s *pathSpellings, home string) bool {
	if s != nil {
		return matchPath(r.Pattern, r.Action, *s, home)
	}
	if r.Key == ExternalDirectory {
		return matchWildcard(r.Pattern, resource) || matchWildcard(expandHome(r.Pattern, home), resource)
	}
	return matchWildcard(r.Pattern, resource)
}

func reason(c Check, p Policy, sideEffect bool) string {
	var b strings.Builder
	if c.Rule == nil {
		b.WriteString("no rule matches, so the call asks")
	} else {
		fmt.Fprintf(&b, "%s says %s", describe(*c.Rule), c.Rule.Action)
	}
	switch {
	case c.RuleAction == Ask && c.Action == Allow:
		b.WriteString("; allow_all answers the ask")
	case c.RuleAction == Allow && c.Action == Ask:
		b.WriteString("; strict mode asks afresh for every side-effecting call")
	}
	if p.modeReason != "" && p.mode != p.configured {
		fmt.Fprintf(&b, " (mode %s: %s)", p.mode, p.modeReason)
	}
	return b.String()
}

// describe names a rule and where it was written.
func describe(r Rule) string {
	s := fmt.Sprintf("%s in the %s layer", r.Setting, r.Layer)
	if r.Source != "" {
		s += " (" + r.Source + ")"
	}
	return s
}

// Message is the text of a decision that does not simply allow: the tool, the permission, the
// resource, the governing rule with its layer, and which rule to add in which layer. "" for an
// allowed call.
func (d Decision) Message() string {
	m, fix := d.text()
	if m == "" {
		return ""
	}
	return m + "; " + fix
}

// Summary is Message without its fix: what the decision says about the call, and why.
func (d Decision) Summary() string {
	m, _ := d.text()
	return m
}

// Err is the typed error of a denied call (code denied, the tool scheduler's block kind), nil
// otherwise.
func (d Decision) Err() error {
	if d.Action != Deny {
		return nil
	}
	m, fix := d.text()
	e := domain.NewError(string(tools.BlockDenied), m, fix)
	e.Field, e.ID = "permission.rules."+d.Key, d.Resource
	return e
}

func (d Decision) text() (message, fix string) {
	switch d.Action {
	case Deny:
		message = fmt.Sprintf("tool %s was denied: permission %q denies %q: %s", d.Tool, d.Key, d.Resource, d.Reason)
		if d.Rule != nil && d.Rule.Layer == settings.Agent && strings.HasPrefix(d.Rule.Source, "agent:") {
			return message, fmt.Sprintf("the %s contract does not grant it; run an agent whose tools include %s", strings.TrimPrefix(d.Rule.Source, "agent:"), d.Tool)
		}
		return message, addRule(d, "to allow it")
	case Ask:
		message = fmt.Sprintf("tool %s needs approval: permission %q asks before %q: %s", d.Tool, d.Key, d.Resource, d.Reason)
		if d.Mode == Strict {
			return message, "strict mode asks for every side-effecting call; answer once, or set permission.mode to standard"
		}
		return message, `answer "always" to approve matching calls for this session, or ` + addRule(d, "to stop asking")
	}
	return "", ""
}

// addRule says which rule to add in which layers: a later rule wins, so the layer that wrote
// the governing rule (after it) or any layer above it, naming only the layers that accept the
// rule (AllowLayers); the managed policy only by itself.
func addRule(d Decision, why string) string {
	rule := fmt.Sprintf("permission.rules.%s {%q: \"allow\"}", d.Key, d.Resource)
	from, written := ruleLayer(d)
	if from == settings.Managed {
		return fmt.Sprintf("%s, add %s after that rule in the managed policy; no other layer can override it", why, rule)
	}
	layers := AllowLayers(d)
	var above []string
	for _, l := range layers {
		if l != from {
			above = append(above, string(l))
		}
	}
	where := "in the global layer or a layer above it"
	switch {
	case written && layers[0] == from:
		where = "after that rule in the " + string(from) + " layer or in a layer above it"
	case written:
		where = fmt.Sprintf("in a layer above the %s layer, which may not allow %s", from, d.Key)
	}
	return fmt.Sprintf("%s, add %s %s (%s)", why, rule, where, strings.Join(above, ", "))
}
