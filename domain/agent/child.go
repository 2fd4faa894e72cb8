package agent

import (
	"maps"
	"slices"
	"sort"

	"github.com/zuno-run/zuno/domain/tools"
)

// Child is what a delegated child's tool surface is computed from (seeds 002 §5,
// docs/delegation.md "The capability intersection").
type Child struct {
	// Parent is the exact tool names of the parent attempt's provider request: the immutable
	// capability snapshot the child inherits. A tool it does not name never reaches the child,
	// whatever the child's role, allowlist or permission mode (allow_all included) would allow.
	Parent []string
	// Available is what the runtime offers now, name → capability (Enabled false: disabled by
	// the tools config). A tool the parent saw that is gone now is not offered either.
	Available map[string]Capability
	// Hidden reports a tool the child's effective permission policy hides
	// (permission.Policy.Hidden with the child's contract applied); nil hides nothing. It
	// narrows only: a permission mode widens no visibility.
	Hidden func(tool string) bool
}

// Reasons a tool of the child's allowlist is withheld, as ChildTools and zuno debug agent
// report them.
const (
	ReasonRootOnly       = "root-only: never offered to a delegated child (a child asks its parent)"
	ReasonNoDelegates    = "the child agent has no delegates: a child does not delegate"
	ReasonNotInParent    = "the parent's request did not show it"
	ReasonNotImplemented = "not implemented by this runtime"
	ReasonDisabled       = "disabled by the tools config"
	ReasonReadOnly       = "writes the workspace; the agent is read-only"
	ReasonHidden         = "hidden by the child's permission policy"
	ReasonNoMatch        = "a pattern that matches no tool of this runtime"
)

// ChildTools is the one computation of a delegated child's tools: the parent attempt's exact
// tool names ∩ the child role's permissions (a read-only role gets no writing tool) ∩ the
// child agent's allowlist (with its patterns) ∩ the child's effective permission visibility ∩
// what is available now. session_message is root-only and never reaches a child. task, job
// and job_reconcile reach only a child whose agent has delegates of its own: a child without
// a roster could delegate to nobody and has no jobs to read (docs/delegation.md). It returns
// the offered names, sorted, and the allowlisted tools withheld with the first reason that
// withholds each. The job runtime calls it when it starts a child (commands/app), and zuno
// debug agent shows it for each delegate (commands/queries).
func ChildTools(child Agent, in Child) (offered []string, withheld []Unavailable) {
	parent := make(map[string]bool, len(in.Parent))
	for _, n := range in.Parent {
		parent[n] = true
	}
	known := maps.Clone(parent)
	for n := range in.Available {
		known[n] = true
	}
	for _, m := range child.Patterns(slices.Sorted(maps.Keys(known))) {
		if m.Pattern != "" && len(m.Tools) == 0 {
			withheld = append(withheld, Unavailable{m.Entry, ReasonNoMatch})
			continue
		}
		names := m.Tools
		if m.Pattern == "" {
			names = []string{m.Entry}
		}
		for _, n := range names {
			if _, ok := in.Available[n]; !ok && !parent[n] && OptIn(n) {
				continue // opt-in and absent (no skill, memory off): not a gap, as in EffectiveTools
			}
			if reason := childWithholds(child, in, parent, n); reason != "" {
				withheld = append(withheld, Unavailable{n, reason})
			} else {
				offered = append(offered, n)
			}
		}
	}
	sort.Strings(offered)
	sort.Slice(withheld, func(i, j int) bool { return withheld[i].Tool < withheld[j].Tool })
	return slices.Compact(offered), slices.Compact(withheld)
}

// childWithholds is the first reason the tool is not the child's, "" when it is. The parent's
// snapshot is checked before anything the child's side could grant.
func childWithholds(child Agent, in Child, parent map[string]bool, name string) string {
	c, available := in.Available[name]
	switch {
	case name == tools.NameSessionMessage:
		return ReasonRootOnly
	case delegating(name) && len(child.Delegates) == 0:
		return ReasonNoDelegates
	case !parent[name]:
		return ReasonNotInParent
	case !available:
		return ReasonNotImplemented
	case !c.Enabled:
		return ReasonDisabled
	case child.ReadOnly && c.Writes:
		return ReasonReadOnly
	case in.Hidden != nil && in.Hidden(name):
		return ReasonHidden
	}
	return ""
}

func delegating(name string) bool {
	return name == tools.NameTask || name == tools.NameJob || name == tools.NameJobReconcile
}
