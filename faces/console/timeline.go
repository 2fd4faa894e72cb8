package console

import (
	"context"
	"net/http"
	"strings"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/domain/delegation"
	"github.com/zuno-run/zuno/events"
)

// outputShown is how much of a tool's output the timeline shows; the rest is in the log.
const outputShown = 4096

// entry is one line of a session's timeline, in log order: a turn's start or end, a user
// message, a provider request (a step), a tool call with its permission decision, sandbox
// resolution and outcome, a verification receipt, or any other event by its type.
type entry struct {
	Position uint64
	Time     string
	Kind     string
	Type     string
	Turn     *turnEntry
	Message  *events.UserMessageAppended
	Step     *events.ProviderRequest
	Call     *callEntry
	Receipt  *events.VerificationReceipt
	Summary  string
}

// turnEntry is a turn's start or its end.
type turnEntry struct {
	Started  *events.TurnStarted
	Finished *events.TurnFinished
}

// callEntry is one tool call from its start (or block) to its settlement.
type callEntry struct {
	CallID, Tool, Arguments string
	Permission              *events.PermissionDecision
	Sandbox                 *events.SandboxResolution
	Blocked                 *events.ToolBlocked
	Outcome, ErrorCode      string
	Output                  string
	Truncated               bool
	ReceiptID               string
	DurationMs              int64
}

// timelineView is the session page.
type timelineView struct {
	Info    queries.SessionInfo
	Parent  string
	Entries []*entry
	Jobs    []delegation.JobView
	// After is the last position shown: the live stream resumes after it.
	After uint64
}

// timeline is GET /console/sessions/{sessionId}: the session's stream folded into its
// timeline, and the jobs it delegated with links to their child sessions.
func (c *Console) timeline(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	sid := r.PathValue("sessionId")
	info, err := c.app.Queries.Session(ctx, sid)
	if err != nil {
		return err
	}
	v := timelineView{Info: info}
	if err := c.foldTimeline(ctx, sid, &v); err != nil {
		return err
	}
	if v.Jobs, err = c.app.Queries.Jobs(ctx, sid); err != nil {
		return err
	}
	c.render(w, http.StatusOK, "timeline", page{Title: info.Title, Session: sid, Data: v})
	return nil
}

// foldTimeline reads the session's stream into entries; a call's later events fill in the
// entry its start made, so a call is one line.
func (c *Console) foldTimeline(ctx context.Context, sid string, v *timelineView) error {
	calls := map[string]*callEntry{}
	args := map[string]string{}
	return c.app.Queries.Fold(ctx, commands.SessionStream(sid), func(rec events.Recorded, p events.Payload) error {
		v.After = max(v.After, rec.Position)
		e := &entry{Position: rec.Position, Time: rec.Metadata.Time.UTC().Format("2006-01-02 15:04:05"), Type: rec.Type}
		if fold(e, p, calls, args, &v.Parent) {
			v.Entries = append(v.Entries, e)
		}
		return nil
	})
}

// fold fills e from one event, and says whether it is a line of its own.
func fold(e *entry, p events.Payload, calls map[string]*callEntry, args map[string]string, parent *string) bool {
	switch x := p.(type) {
	case events.SessionCreated:
		*parent = x.ParentSessionID
		e.Kind, e.Summary = "event", "created as "+x.Agent+": "+x.Title
	case events.TurnStarted:
		e.Kind, e.Turn = "turn", &turnEntry{Started: &x}
	case events.TurnFinished:
		e.Kind, e.Turn = "turn", &turnEntry{Finished: &x}
	case events.UserMessageAppended:
		e.Kind, e.Message = "message", &x
	case events.ProviderRequest:
		if x.Status == events.RequestStarted {
			return false
		}
		if x.Response != nil {
			for _, tc := range x.Response.ToolCalls {
				args[tc.ID] = tc.Arguments
			}
		}
		e.Kind, e.Step = "step", &x
	case events.ToolStarted:
		ce := &callEntry{CallID: x.CallID, Tool: x.Tool, Arguments: args[x.CallID], Permission: x.Permission, Sandbox: x.Sandbox}
		calls[x.CallID] = ce
		e.Kind, e.Call = "call", ce
	case events.ToolBlocked:
		ce := &callEntry{CallID: x.CallID, Tool: x.Tool, Arguments: args[x.CallID], Permission: x.Permission, Blocked: &x, Outcome: "blocked"}
		ce.setOutput(x.Output)
		e.Kind, e.Call = "call", ce
	case events.ToolSettled:
		ce, ok := calls[x.CallID]
		if !ok { // a settlement without its start (recovery): a line of its own
			ce = &callEntry{CallID: x.CallID, Tool: x.Tool, Arguments: args[x.CallID]}
			e.Kind, e.Call = "call", ce
		}
		ce.Outcome, ce.ErrorCode, ce.DurationMs, ce.ReceiptID = x.Outcome, x.ErrorCode, x.DurationMs, x.Metadata.Verification
		ce.setOutput(x.Output)
		return !ok
	case events.VerificationReceipt:
		e.Kind, e.Receipt = "receipt", &x
	case events.SessionTitled:
		e.Kind, e.Summary = "event", "titled: "+x.Title
	case events.PermissionAsked:
		e.Kind, e.Summary = "event", "asked: "+x.Tool+" "+x.Key+" "+x.Resource+" (rule "+x.Rule+", mode "+x.Mode+")"
	case events.PromptAssembled:
		return false // a step links to its receipt
	default:
		e.Kind = "event"
	}
	return true
}

// setOutput keeps the first outputShown bytes of a call's output, cut on a character
// boundary.
func (ce *callEntry) setOutput(out string) {
	if len(out) > outputShown {
		out, ce.Truncated = strings.ToValidUTF8(out[:outputShown], ""), true
	}
	ce.Output = out
}
