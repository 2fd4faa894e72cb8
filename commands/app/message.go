package app

import (
	"context"
	"fmt"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/domain/job"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// Codes of a session_message refused at execution (seeds 000: the rules are checked again
// when the call runs, whatever the schema a model was shown).
const (
	// CodeNotRoot: only a root session sends peer messages.
	CodeNotRoot = "not_root"
	// CodeOtherProject: the target works in another directory.
	CodeOtherProject = "other_project"
	// CodeNotDescendant: the target is a child of another root.
	CodeNotDescendant = "not_descendant"
)

// Message admits a peer message to the target session's inbox and wakes it (docs/delegation.md,
// "Peer messages"): the source must be a root; the target must be another session of the same
// project (the same workspace directory), and a child target a descendant of the source.
func (j *Jobs) Message(ctx context.Context, inv tools.Invocation, m delegation.Message) (delegation.MessageOutcome, error) {
	if err := j.checkPeer(ctx, inv.SessionID, m.Target); err != nil {
		return delegation.MessageOutcome{}, err
	}
	agentName := ""
	if comp, err := j.composition(inv.SessionID); err == nil {
		agentName = comp.agent.Name
	}
	input := "input_" + derived("peer", inv.SessionID+"/"+inv.CallID)
	msg := events.InboxMessageAdmitted{SessionID: m.Target, InputID: input, Text: m.Text, ToolCallID: inv.CallID,
		PeerMessage: events.PeerMessage{FromSessionID: inv.SessionID, FromAgent: agentName, Title: m.Title, Note: events.PeerNote}}
	res, _ := j.c.ports.Jobs.HandleJob(ctx, &commands.JobCommand{Meta: jobMeta("peer-message/"+input, m.Target, inv.CallID),
		ParentSessionID: m.Target, Cmd: job.AdmitMessage{InboxMessageAdmitted: msg}})
	if err := res.Err(); err != nil {
		return delegation.MessageOutcome{}, err
	}
	j.mu.Lock()
	_, known := j.last[m.Target]
	j.mu.Unlock()
	if known { // a session this process runs or ran is driven with it now; another at its next run
		j.wake(m.Target)
	}
	return delegation.MessageOutcome{Target: m.Target, InputID: input}, nil
}

func (j *Jobs) checkPeer(ctx context.Context, source, target string) error {
	reg := j.c.ports.Driver.Registry
	if _, depth, err := commands.Ancestry(ctx, j.c.ports.Log, reg, source); err != nil {
		return err
	} else if depth > 0 {
		return domain.NewError(CodeNotRoot, "this session is a delegated child; only a root session sends peer messages",
			"put what the other session should know in your report to your parent")
	}
	if target == source {
		return domain.Invalid("target", "is this session", "send to another session of this project")
	}
	from, err := j.c.queries.Place(ctx, source)
	if err != nil {
		return err
	}
	to, err := j.c.queries.Place(ctx, target)
	if err != nil {
		return err
	}
	if to.Pruned != "" { // seeds 000: the target is not archived
		e := session.PrunedError(target, to.Pruned)
		e.Field = "target"
		return e
	}
	if to.Directory != from.Directory {
		e := domain.NewError(CodeOtherProject, fmt.Sprintf("session %s works in %s, not in this session's %s", target, to.Directory, from.Directory),
			"send only to sessions of this project (zuno session list shows their directories)")
		e.Field, e.ID = "target", target
		return e
	}
	root, depth, err := commands.Ancestry(ctx, j.c.ports.Log, reg, target)
	if err != nil {
		return err
	}
	if depth > 0 && root != source {
		e := domain.NewError(CodeNotDescendant, fmt.Sprintf("session %s is a child of another root session (%s)", target, root),
			"send to that root session, or to a child of this one")
		e.Field, e.ID = "target", target
		return e
	}
	return nil
}
