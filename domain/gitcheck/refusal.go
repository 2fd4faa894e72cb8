package gitcheck

import (
	"fmt"
	"strings"
	"time"
)

// Stable codes of a pre-flight refusal (docs/errors.md). In every case the command was not run.
const (
	// CodeGeneratedArtifact: git add or git commit would deliver generated artifacts.
	CodeGeneratedArtifact = "generated_artifact"
	// CodePreflightUnanswered: a repository read did not answer within the shared budget.
	CodePreflightUnanswered = "preflight_unanswered"
	// CodePreflightCancelled: the call was cancelled during the repository reads.
	CodePreflightCancelled = "preflight_cancelled"
	// CodePreflightFailed: a repository read answered with a failure or with output it could
	// not be read as, or the command names a repository the text cannot decide.
	CodePreflightFailed = "preflight_failed"
)

// Budget is the whole pre-flight's time: every read shares it (seeds 000: thirty seconds in
// all, not per read).
const Budget = 30 * time.Second

// MaxReads bounds the repository reads of one pre-flight.
const MaxReads = 4

// Refusal is a pre-flight that does not let the command run.
type Refusal struct {
	code    string
	Message string
	Fix     string
}

// Code is the stable code (domain.Coded).
func (r *Refusal) Code() string { return r.code }

func (r *Refusal) Error() string {
	if r.Fix == "" {
		return r.Message
	}
	return r.Message + ". " + r.Fix
}

// Unanswered is the refusal for a read that did not answer, in the seeds' exact words.
func Unanswered(read string, budget time.Duration) *Refusal {
	return &Refusal{code: CodePreflightUnanswered,
		Message: fmt.Sprintf("`%s` did not answer within the %s this command's pre-flight repository reads share, so the repository state it depends on is unknown; it was not run", read, budget),
		Fix:     "Find out why git does not answer (a held lock, a slow file system, a hook) before running it again"}
}

// Cancelled is the refusal for a call cancelled during the reads.
func Cancelled(read string) *Refusal {
	return &Refusal{code: CodePreflightCancelled,
		Message: fmt.Sprintf("the call was cancelled while `%s` ran for this command's pre-flight, so the repository state it depends on is unknown; it was not run", read)}
}

// Failed is the refusal for a read that answered with a failure or unreadable output.
func Failed(read, why string) *Refusal {
	return &Refusal{code: CodePreflightFailed,
		Message: fmt.Sprintf("`%s` failed for this command's pre-flight (%s), so the repository state it depends on is unknown; it was not run", read, why),
		Fix:     "Run the read yourself to see what is wrong with the repository, fix it, then run the command again"}
}

// Unreadable refuses what the pre-flight cannot plan: text it cannot read, a repository it
// cannot name, or more reads than it may make.
func Unreadable(why string) *Refusal {
	return &Refusal{code: CodePreflightFailed, Message: "the git pre-flight " + why + "; it was not run",
		Fix: "Run each git add or git commit as a plain command in one repository, naming its directory literally"}
}

// Artifacts refuses to deliver generated artifacts.
func Artifacts(sub string, paths []string) *Refusal {
	shown := paths
	more := ""
	if len(shown) > 5 {
		shown, more = shown[:5], fmt.Sprintf(" and %d more", len(paths)-5)
	}
	return &Refusal{code: CodeGeneratedArtifact,
		Message: fmt.Sprintf("git %s would deliver generated artifacts (%s%s): build output, dependencies and caches are not source; it was not run",
			sub, strings.Join(shown, ", "), more),
		Fix: "Name the source paths instead, unstage the artifacts (git restore --staged PATH) and add them to .gitignore"}
}
