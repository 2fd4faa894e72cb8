package job

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/zuno-run/zuno/domain/question"
	"github.com/zuno-run/zuno/events"
)

// Evidence folds the events of a child session's stream, from the job's evidence start on,
// into the typed facts of its TaskReportMetadata (seeds 002 §6): written paths from the
// tools' writtenPaths, verification receipts, calls whose effect is uncertain, and usage.
// Nothing is read from the model's prose or a command's output.
type Evidence struct {
	changed   []string
	verified  []events.TaskVerification
	uncertain []string
	errors    []string
	usage     events.Usage
	finalText string
}

// Fold takes one event of the child's stream (those before the evidence start are not given).
func (e *Evidence) Fold(p events.Payload) {
	switch v := p.(type) {
	case events.ToolSettled:
		for _, path := range v.Metadata.WrittenPaths {
			if !slices.Contains(e.changed, path) {
				e.changed = append(e.changed, path)
			}
		}
		// A child's question is never put to the user: it reaches its parent here, as a
		// blocker (docs/questions.md), from the recorded result's typed details.
		if v.ErrorCode == question.CodeQuestionToParent {
			var d struct {
				Blocker string `json:"blocker"`
			}
			_ = json.Unmarshal(v.Metadata.Details, &d) // the question tool's own JSON
			e.errors = append(e.errors, fmt.Sprintf("call %s (%s) is a question for you: %s", v.CallID, v.Tool, d.Blocker))
		}
		if v.Outcome == "uncertain" {
			e.uncertain = append(e.uncertain, fmt.Sprintf("call %s (%s) may or may not have taken effect", v.CallID, v.Tool))
		}
	case events.ToolBlocked:
		// A call that needed the user's permission: the child asked its parent instead
		// (commands/gate, SourceParent); the report carries the question.
		if p := v.Permission; p != nil && p.Source == "parent" {
			e.errors = append(e.errors, fmt.Sprintf("call %s (%s) needs permission %s on %s, which the child may not ask the user for: decide it, or ask your user",
				v.CallID, v.Tool, p.Key, p.Resource))
		}
	case events.VerificationReceipt:
		e.verified = append(e.verified, events.TaskVerification{ReceiptID: v.ReceiptID, CallID: v.CallID, Command: v.Command,
			Verdict: v.Verdict, Authority: v.Authority})
	case events.TurnFinished:
		e.usage = e.usage.Add(v.Usage)
		if v.Error != nil {
			e.errors = append(e.errors, v.Error.Code+": "+v.Error.Message)
		}
	case events.ProviderRequest:
		if v.Status == "completed" && v.Response != nil && len(v.Response.ToolCalls) == 0 {
			e.finalText = v.Response.Text
		}
	}
}

// Report is the job's TaskReportMetadata with the status it settles with.
func (e *Evidence) Report(j events.JobState, wc *events.WorkContext, status string) events.TaskReport {
	return events.TaskReport{SchemaVersion: 2, JobID: j.JobID, WorkContext: wc, SessionID: j.ChildSessionID,
		ParentSessionID: j.ParentSessionID, Agent: j.Agent, Status: status, FinalText: e.finalText, Usage: e.usage,
		ChangedPaths: orEmpty(e.changed), VerificationRecords: orEmptyV(e.verified),
		UncertainSideEffects: orEmpty(e.uncertain), EvidenceErrors: orEmpty(e.errors)}
}

// Status is the job status a child's turn ending settles it with.
func Status(turnReason string) string {
	switch turnReason {
	case "completed":
		return events.JobCompleted
	case "interrupted":
		return events.JobCancelled
	}
	return events.JobFailed
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orEmptyV(s []events.TaskVerification) []events.TaskVerification {
	if s == nil {
		return []events.TaskVerification{}
	}
	return s
}

// RenderReport is a report as the parent's user message says it; the message carries the
// report itself too (taskReport), which is what machines read.
func RenderReport(r events.TaskReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Report of job %s (agent %s, child session %s): %s.\n", r.JobID, r.Agent, r.SessionID, r.Status)
	if r.FinalText != "" {
		fmt.Fprintf(&b, "\n%s\n", r.FinalText)
	}
	list := func(title string, items []string) {
		if len(items) > 0 {
			fmt.Fprintf(&b, "\n%s:\n- %s\n", title, strings.Join(items, "\n- "))
		}
	}
	list("Changed paths", r.ChangedPaths)
	var checks []string
	for _, v := range r.VerificationRecords {
		checks = append(checks, fmt.Sprintf("%s: %s (%s)", v.Command, v.Verdict, v.Authority))
	}
	list("Verification", checks)
	list("Uncertain side effects", r.UncertainSideEffects)
	list("Evidence errors", r.EvidenceErrors)
	return b.String()
}

// RenderPeer is a peer message as the receiving session's user message says it; the message
// carries where it came from too (peerMessage), with the note that it grants no authority.
func RenderPeer(m events.InboxMessageAdmitted) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Message from session %s (agent %s)", m.FromSessionID, m.FromAgent)
	if m.Title != "" {
		fmt.Fprintf(&b, ", %q", m.Title)
	}
	fmt.Fprintf(&b, ".\n%s\n\n%s\n", m.Note, m.Text)
	return b.String()
}
