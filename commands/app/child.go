package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/agent"
)

// MaxDelegationDepth bounds how deep children nest: a child whose agent has delegates of its
// own (agents.<name>.delegates) may delegate, but not without end.
const MaxDelegationDepth = 4

// CodeDelegationTooDeep: the child would nest deeper than MaxDelegationDepth.
const CodeDelegationTooDeep = "delegation_too_deep"

func (j *Jobs) checkDepth(ctx context.Context, parent string) error {
	_, depth, err := commands.Ancestry(ctx, j.c.ports.Log, j.c.ports.Driver.Registry, parent)
	if err != nil {
		return err
	}
	if depth+1 > MaxDelegationDepth {
		return domain.NewError(CodeDelegationTooDeep, fmt.Sprintf("this session is already %d delegations deep; a child of it would be deeper than %d", depth, MaxDelegationDepth),
			"do the work in this session, or report back to your parent and let it delegate")
	}
	return nil
}

// childTools narrows a child's tools to the intersection of seeds 002 §5 (agent.ChildTools):
// the parent attempt's tools ∩ the child's role and allowlist ∩ its permission visibility ∩
// what is available now. A permission mode widens none of them.
func childTools(child agent.Agent, all []turn.Tool, config map[string]bool, parent []string, hidden func(string) bool) ([]turn.Tool, error) {
	caps, err := agent.Capabilities(all, config)
	if err != nil {
		return nil, err
	}
	names, _ := agent.ChildTools(child, agent.Child{Parent: parent, Available: caps, Hidden: hidden})
	var out []turn.Tool
	for _, t := range all {
		if slices.Contains(names, t.Declaration().Name) {
			out = append(out, t)
		}
	}
	return out, nil
}

func toolNames(ts []turn.Tool) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Declaration().Name)
	}
	return out
}

// childObserver shows a child's turn to its parent's observer: what it records, not its
// streamed text, which would interleave with the parent's.
func childObserver(o turn.Observer) turn.Observer {
	if o == nil {
		return nil
	}
	return quietText{o}
}

type quietText struct{ turn.Observer }

func (quietText) TextDelta(string) {}
