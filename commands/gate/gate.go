// Package gate is the permission gate of a run: it puts each validated call through the
// configured policy and the agent's contract (domain/permission), the shell risk gate
// (domain/risk) and the session's standing approvals, and says whether the call may start,
// must wait for an answer, or is refused — before anything touches the machine
// (docs/permissions.md). It implements the turn's Gate port. What it keeps beyond one call
// is the session's standing approvals, folded from the session's stream as the turn loads and
// records it: nothing of it is the process's.
package gate

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain/answers"
	"github.com/zuno-run/zuno/domain/permission"
	"github.com/zuno-run/zuno/domain/risk"
	"github.com/zuno-run/zuno/domain/settings"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// Sources of a decision, as recorded on the call's events.
const (
	SourceRule       = "rule"
	SourceMode       = "mode"
	SourceRisk       = "risk"
	SourceStanding   = "standing"
	SourceUser       = "user"
	SourceNoTerminal = "no_terminal"
	// SourceParent: the call would ask, and the run is a delegated child, which asks its
	// parent through its report, never the user (docs/delegation.md).
	SourceParent = "parent"
)

// Gate decides the calls of one run. Create it with New.
type Gate struct {
	policy permission.Policy
	// standing is the session's "always" answers, folded from its stream (Fold).
	standing  permission.Standing
	tools     map[string]tools.Tool
	workspace string
	home      string
	zuno      []string
	// interactive says whether an ask can be answered: without a terminal (or a client) an
	// ask is a denial that names the rule to add.
	interactive bool
	child       bool
	sandbox     *events.SandboxResolution
}

// Config is what a Gate is built from.
type Config struct {
	Policy    permission.Policy
	Tools     []tools.Tool
	Workspace string
	Home      string
	// Zuno lists Zuno's own data (its data directory, the event database and its WAL): the
	// risk gate refuses to delete or overwrite them in every mode (docs/risk.md).
	Zuno        []string
	Interactive bool
	// Child: the run is a delegated child's. What would ask the user is refused and handed to
	// its parent instead (seeds 002 §5: a child asks its parent, never the user).
	Child bool
	// Sandbox is how the run's shell commands are confined, recorded on each shell call.
	Sandbox *events.SandboxResolution
}

// New returns the gate of one run.
func New(c Config) *Gate {
	g := &Gate{policy: c.Policy, workspace: c.Workspace, home: c.Home, zuno: c.Zuno, interactive: c.Interactive, child: c.Child,
		sandbox: c.Sandbox, tools: map[string]tools.Tool{}}
	for _, t := range c.Tools {
		g.tools[t.Declaration().Name] = t
	}
	return g
}

var _ turn.Gate = (*Gate)(nil)

// Fold takes one event of the session's stream: the standing approvals follow what the log
// records (granted, revoked, forked), whichever process recorded it.
func (g *Gate) Fold(p events.Payload) { g.standing.Evolve(p) }

// Check decides one call.
func (g *Gate) Check(c tools.Call) turn.Verdict {
	subjects, err := g.subjects(c)
	if err != nil {
		return turn.Verdict{Block: invalid(err)}
	}
	var v turn.Verdict
	if g.runsCommand(c) {
		v.Sandbox = g.sandbox
	}
	ev := g.evaluate(c, subjects)
	v.Decision, v.Block = ev.Record, ev.Refusal
	if ev.Refusal != nil {
		return v
	}
	d := ev.Decision
	if d.Action == permission.Ask && v.Decision.Source != SourceRisk {
		if g.standing.Covers(d) {
			v.Decision.Action, v.Decision.Source, v.Decision.Reply = string(permission.Allow), SourceStanding, answers.ReplyOnce
		} else if c, ok := g.standing.FirstUncovered(d); ok && c.Resource != d.Resource {
			d.Check = c // ask about what is not approved yet
			v.Decision = record(d, SourceRule)
		}
	}
	switch permission.Action(v.Decision.Action) {
	case permission.Deny:
		v.Block = denied(d.Err(), d.Message())
	case permission.Ask:
		if g.child {
			return toParent(v)
		}
		if !g.interactive {
			return noTerminal(v, d)
		}
		v.Ask = &events.PermissionAsked{Tool: c.Decl.Name, Key: d.Key, Resource: d.Resource, Rule: v.Decision.Rule,
			Layer: v.Decision.Layer, Mode: string(d.Mode)}
		v.Ask.Gate, v.Ask.Reason = asker(v.Decision, d)
		// What an always would approve travels with the ask, so the answer needs nothing
		// this gate remembered. An ask that can save nothing (strict mode, the risk gate, a
		// one-off confirmation) offers no always.
		if saved := permission.Savable(d); len(saved) > 0 {
			v.Grants = permission.Recorded(saved)
			v.Ask.Always = d.Always
		}
	}
	v.ExternalRoot = externalRoot(subjects)
	return v
}

// Evaluation is the gate's decision on one call before the session's standing approvals and
// before anyone is asked: the risk gate, then the policy with the agent's contract. Check
// goes on from it; zuno debug permissions reports it (Explain).
type Evaluation struct {
	// Decision is the policy's decision as the risk gate left it (a destructive command
	// asks); the zero Decision when the risk gate refused the command before any rule.
	Decision permission.Decision
	// Record is the decision as the call's events carry it (source rule, mode or risk).
	Record events.PermissionDecision
	// Refusal is the risk gate's denial of a catastrophic command; nil otherwise.
	Refusal *tools.Block
}

// evaluate is the one evaluation of a call's subjects, shared by Check and Explain.
func (g *Gate) evaluate(c tools.Call, subjects []tools.Subject) Evaluation {
	rv := g.assess(c, subjects)
	if rv.Level == risk.Catastrophic {
		return g.catastrophic(c, rv)
	}
	d := g.decide(c, subjects)
	ev := Evaluation{Decision: d, Record: record(d, SourceRule)}
	if d.Action != permission.Deny && rv.Level == risk.Destructive && risk.Decide(rv.Verdict, string(d.Mode)) == risk.Ask {
		if r := preapproval(c, d, rv); r != nil {
			ev.Record.Risk = string(risk.Destructive)
			ev.Record.Message = fmt.Sprintf("destructive command pre-approved by rule %s: %s (%s layer): %s", r.Key, r.Pattern, r.Layer, rv.Reason)
			return ev
		}
		ev.Decision = destructive(&ev.Record, d, rv)
	}
	return ev
}

// preapproval is the rule that pre-approves a destructive command (docs/risk.md,
// "Pre-approval by a rule"): the call is allowed, and the allow comes from an explicit rule of
// a trusted layer (never the builtin catch-all, the project file the agent's shell can write,
// or an agent's own rules) whose pattern names the command (risk.Preapproves). nil otherwise.
func preapproval(c tools.Call, d permission.Decision, rv assessed) *permission.Rule {
	if d.Action != permission.Allow {
		return nil
	}
	key := permission.KeyFor(c.Decl.Name)
	for _, ch := range d.Checks {
		if ch.Key != key || ch.Resource != rv.command {
			continue
		}
		r := ch.Rule
		if r == nil || ch.RuleAction != permission.Allow || r.Action != permission.Allow || !r.Layer.Trusted() || r.Layer == settings.Builtin ||
			!risk.Preapproves(r.Pattern, rv.command, rv.Verdict) {
			return nil
		}
		return r
	}
	return nil
}

// asker names the gate that asked, and why: the risk gate, strict mode (where a rule
// allows), a rule that says ask, or no rule at all.
func asker(rec events.PermissionDecision, d permission.Decision) (gate, reason string) {
	switch {
	case rec.Source == SourceRisk:
		return events.AskGateRisk, rec.Message
	case d.Mode == permission.Strict && d.RuleAction == permission.Allow:
		return events.AskGateStrict, "strict mode asks afresh for every side-effecting call"
	case d.Rule != nil:
		return events.AskGateRule, d.Reason
	}
	return events.AskGateNoRule, d.Reason
}

// catastrophic is the risk gate's denial, in every mode, before any rule is read.
func (g *Gate) catastrophic(c tools.Call, rv assessed) Evaluation {
	rec := events.PermissionDecision{Key: permission.KeyFor(c.Decl.Name), Resource: rv.command,
		RuleAction: string(permission.Deny), Action: string(permission.Deny), Source: SourceRisk, Risk: string(risk.Catastrophic),
		Mode: string(g.policy.Mode()), Message: "catastrophic command refused: " + rv.Reason}
	return Evaluation{Record: rec, Refusal: &tools.Block{Kind: tools.BlockDenied, Message: rec.Message,
		Fix: "nothing ran; catastrophic commands are refused in every permission mode — do the work another way"}}
}

// destructive is the ordinary risk gate: a destructive command asks even where a rule allows
// it, and only once: no standing approval covers it, whether the rule allowed or asked, and an
// always answer to it saves nothing.
func destructive(rec *events.PermissionDecision, d permission.Decision, rv assessed) permission.Decision {
	d.Action, d.Always = permission.Ask, ""
	d.Checks = slices.Clone(d.Checks)
	for i := range d.Checks {
		d.Checks[i].Always = ""
	}
	rec.Action, rec.Source, rec.Risk = string(permission.Ask), SourceRisk, string(risk.Destructive)
	rec.Message = "destructive command: " + rv.Reason
	return d
}

// Answer applies a reply to an asked call: v is the verdict Check gave it. Only "always"
// keeps v.Grants, which the driver records before the call starts (and folds back here).
func (g *Gate) Answer(_ tools.Call, v turn.Verdict, reply string) turn.Verdict {
	if v.Ask == nil || reply != answers.ReplyAlways {
		v.Grants = nil
	}
	v.Ask = nil
	v.Decision.Source, v.Decision.Reply = SourceUser, reply
	switch reply {
	case answers.ReplyOnce, answers.ReplyAlways:
		v.Decision.Action = string(permission.Allow)
	default:
		v.Decision.Action = string(permission.Deny)
		v.Decision.Message = "the user rejected the call: " + v.Decision.Resource
		v.Block = &tools.Block{Kind: tools.BlockDenied, Message: v.Decision.Message,
			Fix: "do not retry it as it is; ask the user what to do instead"}
	}
	return v
}

// subjects asks the tool what the call touches; a tool that touches nothing has one empty
// subject, so its permission key is still evaluated.
func (g *Gate) subjects(c tools.Call) ([]tools.Subject, error) {
	if s, ok := g.tools[c.Decl.Name].(tools.Subjecter); ok {
		subjects, err := s.Subjects(c.Parsed)
		if err != nil || len(subjects) > 0 {
			return subjects, err
		}
	}
	return []tools.Subject{{}}, nil
}

func (g *Gate) runsCommand(c tools.Call) bool {
	return c.Decl.Name == tools.NameShell || (c.Decl.Name == tools.NameBg && c.Action == "start")
}

// decide evaluates every subject, and a symbolic link's target beside the path as written;
// the strictest decision governs.
func (g *Gate) decide(c tools.Call, subjects []tools.Subject) permission.Decision {
	var out permission.Decision
	var checks []permission.Check
	first := true
	take := func(d permission.Decision) {
		for _, c := range d.Checks {
			if !slices.ContainsFunc(checks, func(o permission.Check) bool { return o.Key == c.Key && o.Resource == c.Resource }) {
				checks = append(checks, c)
			}
		}
		if first || d.Action.Exceeds(out.Action) {
			out, first = d, false
		}
	}
	consider := func(resource, always string) {
		take(g.policy.Decide(permission.Request{Tool: c.Decl.Name, Resource: resource,
			SideEffect: c.Policy.SideEffect.StrictAsks(), Workspace: g.workspace, Home: g.home, Always: always}))
	}
	for _, s := range subjects {
		switch {
		case s.Command != "":
			consider(s.Command, alwaysPattern(s.Command))
			// What the command names outside the workspace needs external_directory, as
			// the file tools' paths do.
			for _, r := range g.outsideRequests(c, s.Command) {
				r.SideEffect, r.Workspace, r.Home = c.Policy.SideEffect.StrictAsks(), g.workspace, g.home
				take(g.policy.DecideExternal(r))
			}
		case s.Path != "":
			// The target first: on a tie it governs, since it is what an outside grant
			// admitted.
			if s.Target != "" && s.Target != s.Path {
				consider(s.Target, s.Target)
			}
			consider(s.Path, s.Path)
			// A path key adds external_directory itself (permission.Decide); a search's key
			// (glob, grep) is not a path key, so its directory outside is checked here.
			if s.ExternalDir != "" && !permission.IsPathKey(permission.KeyFor(c.Decl.Name)) {
				take(g.policy.DecideExternal(permission.Request{Tool: c.Decl.Name, Resource: s.ExternalDir, Always: s.ExternalDir,
					SideEffect: c.Policy.SideEffect.StrictAsks(), Workspace: g.workspace, Home: g.home}))
			}
		case s.Resource != "":
			consider(s.Resource, cmp.Or(s.Always, s.Resource))
		default:
			consider("*", "*")
		}
	}
	// The governing decision carries every subject's checks: a standing approval covers the
	// call only when it covers each check that asks, and an always answer saves each.
	out.Checks = checks
	return out
}

// assessed is the risk gate's verdict on a call's command ("" level when it runs none).
type assessed struct {
	risk.Verdict
	command string
}

// assess reads the call's commands with the risk gate (domain/risk) and keeps the worst. The
// gate knows where the command starts, so `rm -rf ../*` from ~/proj is read as `rm -rf ~/*`.
func (g *Gate) assess(c tools.Call, subjects []tools.Subject) assessed {
	var worst assessed
	env := risk.Env{Home: g.home, Cwd: g.workdir(c), Zuno: g.zuno}
	for _, s := range subjects {
		if s.Command == "" {
			continue
		}
		v := risk.Assess(s.Command, env)
		if worst.Level == "" || v.Level.Exceeds(worst.Level) {
			worst = assessed{Verdict: v, command: s.Command}
		}
	}
	return worst
}

// workdir is the directory a shell call starts in: its workdir argument (relative to the
// workspace, as the shell tool reads it) or the workspace root, with symbolic links resolved
// as the tool resolves them, so `..` climbs from where the command really is. A workdir the
// tool will refuse (missing, outside the workspace) is read as written.
func (g *Gate) workdir(c tools.Call) string {
	if c.Decl.Name != tools.NameShell || g.workspace == "" {
		return g.workspace
	}
	var a struct {
		Workdir string `json:"workdir"`
	}
	_ = json.Unmarshal([]byte(c.Call.Arguments), &a) // validated already; a failure leaves the root
	if a.Workdir == "" {
		return g.workspace
	}
	dir := a.Workdir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(g.workspace, dir)
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return real
	}
	return filepath.Clean(dir)
}

func externalRoot(subjects []tools.Subject) string {
	for _, s := range subjects {
		if s.ExternalDir != "" {
			return s.ExternalDir
		}
	}
	return ""
}

// record is a decision as the call's events carry it.
func record(d permission.Decision, source string) events.PermissionDecision {
	out := events.PermissionDecision{Key: d.Key, Resource: d.Resource, RuleAction: string(d.RuleAction),
		Action: string(d.Action), Source: source, Mode: string(d.Mode), Message: d.Message()}
	if d.Rule != nil {
		out.Rule, out.Layer = d.Rule.Key+": "+d.Rule.Pattern, string(d.Rule.Layer)
	}
	if d.RuleAction != d.Action && d.Mode == permission.AllowAll {
		out.Source = SourceMode
	}
	return out
}

// noTerminal turns an ask nobody can answer into a denial that says which rule to add, and in
// which layer, to allow the call without asking.
func noTerminal(v turn.Verdict, d permission.Decision) turn.Verdict {
	why := v.Decision.Message
	if v.Decision.Source != SourceRisk {
		why = d.Summary()
	}
	// The lowest layer that accepts the rule and wins over the one that asked: the project
	// layer may not allow external_directory, so that hint names a layer above it.
	layer := permission.AllowLayers(d)[0]
	where := fmt.Sprintf("in the %s layer", layer)
	if d.Rule != nil && d.Rule.Layer == layer {
		where = "after that rule " + where
	}
	fix := fmt.Sprintf("to allow it without asking, add permission.rules.%s {%q: \"allow\"} %s (zuno debug paths shows where each layer lives), or run zuno at a terminal to answer", d.Key, d.Resource, where)
	switch gate, _ := asker(v.Decision, d); {
	case gate == events.AskGateRisk && d.Mode != permission.Strict:
		fix = riskFix(d.Key, v.Decision.Resource)
	case gate == events.AskGateStrict, gate == events.AskGateRisk:
		// No rule lets strict mode skip an ask (docs/permissions.md, "Deciding a call").
		fix = "strict mode asks for every side-effecting call, whatever the rules say: run zuno at a terminal to answer, or run in standard mode (zuno run --permission-mode standard)"
	}
	v.Decision.Action, v.Decision.Source = string(permission.Deny), SourceNoTerminal
	v.Decision.Message = "no terminal to ask at: " + why
	v.Block = &tools.Block{Kind: tools.BlockDenied, Message: v.Decision.Message, Fix: fix}
	return v
}

// riskFix is what lets a destructive command run without a terminal: an allow rule that names
// it, in a trusted layer or on the command line, when it is one plain command (docs/risk.md,
// "Pre-approval by a rule").
func riskFix(key, command string) string {
	const rest = "run zuno at a terminal to approve it once, or set permission.mode to allow_all in a trusted layer; destructive commands ask in standard mode"
	if !risk.Plain(command) {
		return "split it into plain commands (one program, literal words) that a rule can pre-approve, " + rest
	}
	return fmt.Sprintf("pre-approve it with an allow rule that names it: zuno run --allow '%s:%s', or permission.rules.%s {%q: \"allow\"} in the global layer (not the project file); or %s",
		key, command, key, command, rest)
}

// toParent turns a delegated child's ask into a refusal that hands the question to its parent:
// the child's report carries it (the call's permission key and resource, in the report's
// evidenceErrors), and the parent decides whether to do it itself or ask its user.
func toParent(v turn.Verdict) turn.Verdict {
	v.Decision.Action, v.Decision.Source = string(permission.Deny), SourceParent
	v.Decision.Message = "a delegated child does not ask the user: " + v.Decision.Message
	v.Block = &tools.Block{Kind: tools.BlockDenied, Message: v.Decision.Message,
		Fix: "do what you can without it, and say in your final answer that you need it: your report tells your parent, which decides"}
	return v
}

func denied(err error, message string) *tools.Block {
	b := &tools.Block{Kind: tools.BlockDenied, Message: message}
	if err != nil {
		b.Message = err.Error()
	}
	if i := strings.Index(b.Message, "; "); i > 0 {
		b.Message, b.Fix = b.Message[:i], b.Message[i+2:]
	}
	return b
}

func invalid(err error) *tools.Block {
	return &tools.Block{Kind: tools.BlockInvalidArguments, Message: err.Error(),
		Fix: "use a path inside the workspace that does not pass through a symbolic link"}
}
