package acp

import (
	"encoding/json"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// The projection of recorded events to ACP session updates, one function per event, shared by
// the live stream of a prompt (stream.go) and the replay of session/load (replay.go): what an
// editor saw live it sees again on load, read from the same events (docs/acp.md, "Updates").

// userUpdate is a user message: the user's own prompt (shown on load only: the client sent
// it), a steer, an answer, a peer's message, or a delegated child's report. A report carries
// the host's typed fields in _meta.zuno (seeds 002 §6): kind "task_report" and the report
// itself under taskReport, so an editor reads status, final text, changed paths and
// verification without parsing the text.
func userUpdate(e events.UserMessageAppended) sdk.SessionUpdate {
	u := sdk.UpdateUserMessageText(e.Text)
	id := e.MessageID
	u.UserMessageChunk.MessageId = &id
	switch {
	case e.TaskReport != nil:
		u.UserMessageChunk.Meta = zunoMeta(map[string]any{"kind": "task_report", "taskReport": e.TaskReport})
	case e.PeerMessage != nil:
		u.UserMessageChunk.Meta = zunoMeta(map[string]any{"kind": "peer_message", "peerMessage": e.PeerMessage})
	case e.InputID != "":
		u.UserMessageChunk.Meta = zunoMeta(map[string]any{"kind": "input", "inputId": e.InputID})
	}
	return u
}

func zunoMeta(v map[string]any) map[string]any { return map[string]any{"zuno": v} }

// deliveredInput reports whether a user message came from the session's inbox (a report, a
// steer, an answer, a peer message) rather than from the prompt the client sent.
func deliveredInput(e events.UserMessageAppended) bool {
	return e.InputID != "" || e.TaskReport != nil || e.PeerMessage != nil
}

// responseUpdates are a completed provider response's text (when it was not streamed) and a
// pending tool_call for each call the model asked for.
func responseUpdates(r *events.ProviderResponse, streamed bool, dir string) []sdk.SessionUpdate {
	if r == nil {
		return nil
	}
	var out []sdk.SessionUpdate
	if text := responseText(r); text != "" && !streamed {
		out = append(out, sdk.UpdateAgentMessageText(text))
	}
	for _, c := range r.ToolCalls {
		out = append(out, toolCallStart(c, dir))
	}
	return out
}

func responseText(r *events.ProviderResponse) string {
	if r.Text == "" {
		return r.Refusal
	}
	return r.Text
}

// callView is what ACP shows of a call from its arguments: title, kind, the files it names
// (absolute, as ACP's paths are: relative ones are the workspace dir's), and an edit's change
// as a diff.
type callView struct {
	title     string
	kind      sdk.ToolKind
	locations []sdk.ToolCallLocation
	content   []sdk.ToolCallContent
	raw       any
}

func viewCall(c events.ToolCall, dir string) callView {
	var args map[string]any
	if json.Unmarshal([]byte(c.Arguments), &args) != nil {
		args = nil
	}
	str := func(k string) string { s, _ := args[k].(string); return s }
	v := callView{title: c.Name, kind: toolKind(c.Name), raw: args, locations: []sdk.ToolCallLocation{}}
	if args == nil {
		v.raw = c.Arguments
	}
	path := absolute(dir, str("path"))
	if path != "" {
		v.locations = append(v.locations, sdk.ToolCallLocation{Path: path})
	}
	switch c.Name {
	case tools.NameShell, tools.NameBg:
		v.title = c.Name + ": " + firstLine(str("command"))
	case tools.NameWrite:
		v.title = "write " + path
		// A write replaces the file: the diff is the new text; the old is what the file held,
		// which the log does not keep, so it is left out rather than read from the disk now.
		v.content = []sdk.ToolCallContent{sdk.ToolDiffContent(path, str("content"))}
	case tools.NameApplyPatch:
		v.title = "apply_patch"
		for _, f := range patchFiles(str("patch")) {
			v.locations = append(v.locations, sdk.ToolCallLocation{Path: absolute(dir, f)})
		}
		v.content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(str("patch")))}
	case tools.NameGrep, tools.NameGlob:
		v.title = c.Name + " " + str("pattern")
	case tools.NameTask:
		v.title = "task: " + firstLine(str("objective"))
	default:
		if path != "" {
			v.title = c.Name + " " + path
		}
	}
	return v
}

func toolCallStart(c events.ToolCall, dir string) sdk.SessionUpdate {
	v := viewCall(c, dir)
	return sdk.StartToolCall(sdk.ToolCallId(c.ID), v.title, sdk.WithStartKind(v.kind), sdk.WithStartStatus(sdk.ToolCallStatusPending),
		sdk.WithStartLocations(v.locations), sdk.WithStartContent(v.content), sdk.WithStartRawInput(v.raw))
}

// toolKind is ACP's kind of a Zuno tool, for the editor's icon.
func toolKind(name string) sdk.ToolKind {
	switch {
	case name == tools.NameRead:
		return sdk.ToolKindRead
	case name == tools.NameWrite || name == tools.NameApplyPatch:
		return sdk.ToolKindEdit
	case name == tools.NameGrep || name == tools.NameGlob:
		return sdk.ToolKindSearch
	case name == tools.NameShell || name == tools.NameBg:
		return sdk.ToolKindExecute
	case name == "webfetch":
		return sdk.ToolKindFetch
	case strings.HasPrefix(name, "plan_") || strings.HasPrefix(name, "todo_") || name == tools.NameTask:
		return sdk.ToolKindThink
	}
	return sdk.ToolKindOther
}

// patchFiles are the files an apply_patch envelope names (its "*** Add/Update/Delete File:"
// lines).
func patchFiles(patch string) []string {
	var files []string
	for _, l := range strings.Split(patch, "\n") {
		for _, p := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if f, ok := strings.CutPrefix(l, p); ok {
				files = append(files, strings.TrimSpace(f))
			}
		}
	}
	return files
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(line); len(r) > 80 {
		line = string(r[:77]) + "..."
	}
	return line
}

func startedUpdate(e events.ToolStarted) sdk.SessionUpdate {
	return sdk.UpdateToolCall(sdk.ToolCallId(e.CallID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress))
}

// settledUpdate is a call's end: completed, or failed for an error, an uncertain or a
// cancelled call; its content is the result the model read, its raw output the typed facts.
func settledUpdate(e events.ToolSettled, dir string) sdk.SessionUpdate {
	status := sdk.ToolCallStatusFailed
	if e.Outcome == "completed" {
		status = sdk.ToolCallStatusCompleted
	}
	raw := map[string]any{"outcome": e.Outcome}
	if e.ErrorCode != "" {
		raw["errorCode"] = e.ErrorCode
	}
	if len(e.Metadata.Details) > 0 {
		raw["details"] = e.Metadata.Details
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status), sdk.WithUpdateRawOutput(raw),
		sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(e.Output))})}
	if len(e.Metadata.WrittenPaths) > 0 {
		var locs []sdk.ToolCallLocation
		for _, p := range e.Metadata.WrittenPaths {
			locs = append(locs, sdk.ToolCallLocation{Path: absolute(dir, p)})
		}
		opts = append(opts, sdk.WithUpdateLocations(locs))
	}
	return sdk.UpdateToolCall(sdk.ToolCallId(e.CallID), opts...)
}

// absolute is a root-relative written path made absolute (ACP's paths are), when the
// workspace is known.
func absolute(dir, p string) string {
	if dir == "" || p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, filepath.FromSlash(p))
}

func blockedUpdate(e events.ToolBlocked) sdk.SessionUpdate {
	raw := map[string]any{"outcome": "blocked", "category": e.Category}
	if e.Fix != "" {
		raw["fix"] = e.Fix
	}
	return sdk.UpdateToolCall(sdk.ToolCallId(e.CallID), sdk.WithUpdateStatus(sdk.ToolCallStatusFailed), sdk.WithUpdateRawOutput(raw),
		sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(e.Output))}))
}

// planUpdate is the durable Plan (plan_get's focused plan) as ACP's plan: one entry per
// step. ACP knows pending, in_progress and completed: a blocked step is shown pending, a
// superseded one completed (it takes no more work), and the step's own status is kept in
// _meta.zuno.status.
func planUpdate(v *work.PlanView) (sdk.SessionUpdate, bool) {
	if v == nil {
		return sdk.SessionUpdate{}, false
	}
	entries := []sdk.PlanEntry{}
	for _, st := range v.Steps {
		status := sdk.PlanEntryStatusPending
		switch st.Status {
		case work.StatusInProgress:
			status = sdk.PlanEntryStatusInProgress
		case work.StatusCompleted, work.StatusSuperseded:
			status = sdk.PlanEntryStatusCompleted
		}
		entries = append(entries, sdk.PlanEntry{Content: st.Title, Priority: sdk.PlanEntryPriorityMedium, Status: status,
			Meta: zunoMeta(map[string]any{"stepId": st.ID, "status": st.Status})})
	}
	u := sdk.UpdatePlan(entries...)
	u.Plan.Meta = zunoMeta(map[string]any{"planId": v.PlanID, "revision": v.Revision, "title": v.Title, "status": v.Status})
	return u, true
}

// isPlanTool reports whether a settled call may have changed the durable Plan.
func isPlanTool(name string) bool {
	return name == tools.NamePlanUpdate || strings.HasPrefix(name, "plan_")
}
