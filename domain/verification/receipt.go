package verification

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// Receipt is the stored verification receipt (session.verification.receipt.1).
type Receipt = events.VerificationReceipt

// Verdict is what the command's ending says about the work.
type Verdict string

const (
	// Passed: the command exited 0.
	Passed Verdict = "passed"
	// Failed: the command exited non-zero on its own.
	Failed Verdict = "failed"
	// NotStarted: 126/127, the program never started; nothing ran to judge.
	NotStarted Verdict = "not_started"
	// Unknown: no verdict of the command (killed, signalled, guard failure, unsettled).
	Unknown Verdict = "unknown"
)

// Facts are how a run ended, as the shell adapter observed it.
type Facts struct {
	// HasCode and Code: the exit status, when the command exited.
	HasCode bool
	Code    int
	// Signal names the signal that killed the command ("SIGKILL"), "" when none did.
	Signal string
	// TimedOut and Cancelled: the call's timeout fired, or the call was cancelled.
	TimedOut, Cancelled bool
	// Killed: Zuno stopped the command before it had exited (timeout, cancellation, a hard
	// limit). A command that exited before the kill landed is not Killed: its verdict stands.
	Killed bool
	// GuardFailed: the guard's own diagnostic says the 125 is the guard's failure.
	GuardFailed bool
	// NeverStarted: the program never started (126 not executable, 127 not found).
	NeverStarted bool
	// Unsettled: the run reported a status Zuno could not settle (e.g. output capture failed
	// after the process exited); it is no verdict anything may cite.
	Unsettled bool
}

// Settle is the verdict of a run and one sentence saying why it is (or is not) a verdict.
func Settle(f Facts) (Verdict, string) {
	switch {
	case f.GuardFailed:
		return Unknown, "the guard itself failed (exit 125), which says nothing about whether the command ran"
	case f.Killed && f.TimedOut:
		return Unknown, "the command was stopped at its timeout before it exited; it decided nothing"
	case f.Killed && f.Cancelled:
		return Unknown, "the call was cancelled before the command exited; it decided nothing"
	case f.Killed:
		return Unknown, "the command was stopped at a hard limit before it exited; it decided nothing"
	case f.Unsettled:
		return Unknown, "the run reported a status Zuno could not settle"
	case f.NeverStarted:
		return NotStarted, fmt.Sprintf("exit %d: the program never started, so nothing ran to judge", f.Code)
	case f.Signal != "":
		return Unknown, "the command was killed by " + f.Signal + "; a signal is no verdict on the work"
	case !f.HasCode:
		return Unknown, "the command ended without an exit status"
	case f.Code == 0:
		return Passed, "exit 0"
	}
	return Failed, fmt.Sprintf("exit %d", f.Code)
}

// Call is what the receipt records about the call itself.
type Call struct {
	SessionID, TurnID, CallID string
	Command, Workdir          string
}

// NewReceipt builds the receipt of a settled run from the call, the analysis of its text and
// the facts of its ending. Authority is the analysis's claim when the run has a verdict of
// its own (passed or failed), and none otherwise.
func NewReceipt(c Call, an Analysis, f Facts) Receipt {
	verdict, why := Settle(f)
	r := Receipt{ReceiptID: ReceiptID(c.SessionID, c.CallID), SessionID: c.SessionID, TurnID: c.TurnID, CallID: c.CallID,
		Command: c.Command, Workdir: c.Workdir, Interpreter: an.Interpreter, Policy: string(an.Policy),
		Verdict: string(verdict), Signal: f.Signal, Coverage: string(an.Coverage), Limitations: an.Limitations,
		Cancelled: f.Cancelled, TimedOut: f.TimedOut}
	if f.HasCode && !f.Killed {
		code := f.Code
		r.ExitCode = &code
	}
	switch {
	case verdict != Passed && verdict != Failed:
		r.Authority, r.Coverage, r.Reason = string(NoAuthority), string(NoCoverage), why
	case an.Authoritative:
		r.Authority, r.Reason = string(Authoritative), why+"; the code covers "+describeCoverage(an.Coverage)
	default:
		r.Authority, r.Reason = string(Derived), why+"; derived, not evidence: "+limitationSummary(an.Limitations)
	}
	return r
}

func describeCoverage(c Coverage) string {
	switch c {
	case EveryCommand:
		return "every command (the first failure stops the run)"
	case LastStage:
		return "only the last stage of the last pipeline"
	case LastStatement:
		return "every stage of the last statement's pipelines"
	}
	return "nothing"
}

func limitationSummary(ls []Limitation) string {
	names := make([]string, 0, len(ls))
	for _, l := range ls {
		if l.Text != "" {
			names = append(names, l.Construct+" ("+l.Text+")")
		} else {
			names = append(names, l.Construct)
		}
	}
	if len(names) == 0 {
		return "unknown"
	}
	return strings.Join(names, ", ")
}

// ReceiptID derives a call's receipt id from its session and call id: a replayed or
// re-delivered call derives the same one.
func ReceiptID(sessionID, callID string) string {
	sum := sha256.Sum256([]byte("verification\n" + sessionID + "\n" + callID))
	return "rcp_" + hex.EncodeToString(sum[:16])
}

// ValidReceiptID reports whether s has the shape of a receipt id.
func ValidReceiptID(s string) bool {
	rest, ok := strings.CutPrefix(s, "rcp_")
	if !ok || len(rest) != 32 {
		return false
	}
	_, err := hex.DecodeString(rest)
	return err == nil && strings.ToLower(rest) == rest
}

// Line is how a tool result addresses its receipt: its id, the verdict and the authority, and
// for a derived claim the first limitation with its remedy, so the model can fix the command.
func Line(r Receipt) string {
	head := fmt.Sprintf("[verification %s] %s, %s", r.ReceiptID, r.Verdict, r.Authority)
	switch {
	case r.Authority == string(NoAuthority):
		return head + ": " + r.Reason
	case r.Authority != string(Derived) || len(r.Limitations) == 0:
		return head
	}
	l := r.Limitations[0]
	s := head + " (not evidence): " + l.Construct
	if l.Text != "" {
		s += " `" + l.Text + "`"
	}
	s += ": " + l.Note + "; " + l.Remedy
	if n := len(r.Limitations) - 1; n > 0 {
		s += fmt.Sprintf(" (%d more in the receipt)", n)
	}
	return s
}

// CodeNotEvidence: a receipt offered as evidence that cannot be evidence.
const CodeNotEvidence = "receipt_not_evidence"

// Evidence reports whether a receipt may satisfy an evidence requirement (a task_context
// check, the Goal completion barrier, TaskReportMetadata.verificationRecords): only an
// authoritative one may. The error says why not and what would be evidence.
func Evidence(r Receipt) error {
	if r.Authority == string(Authoritative) {
		return nil
	}
	e := domain.NewError(CodeNotEvidence, fmt.Sprintf("receipt %s is %s, not authoritative: %s", r.ReceiptID, r.Authority, r.Reason),
		"cite an authoritative receipt: run the check again under bash, ksh or zsh with exitPolicy pipefail or all, "+
			"without the constructs its limitations name")
	e.ID = r.ReceiptID
	return e
}

// PassingEvidence reports whether a receipt shows a check passing as evidence: authoritative
// and passed.
func PassingEvidence(r Receipt) error {
	if err := Evidence(r); err != nil {
		return err
	}
	if r.Verdict != string(Passed) {
		e := domain.NewError(CodeNotEvidence, fmt.Sprintf("receipt %s records a %s check, not a passing one", r.ReceiptID, r.Verdict),
			"fix what failed and cite the receipt of a passing run")
		e.ID = r.ReceiptID
		return e
	}
	return nil
}
