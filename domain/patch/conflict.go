package patch

import (
	"fmt"
	"strings"
)

// ConflictKind is a conflict's stable code. A conflict is a result the model can fix by doing
// what RequiredAction says; the runtime never replays the operation by itself.
type ConflictKind string

const (
	// ReadRequired: an existing file would be updated, deleted, moved, or overwritten (by
	// Add File or as a move target) and the model holds no read credential for it.
	ReadRequired ConflictKind = "read_required"
	// StaleRead: the file changed since the model read it (digest or read generation).
	StaleRead ConflictKind = "stale_read"
	// ContextMismatch: a hunk's lines (or its "@@" context line) are not in the file.
	ContextMismatch ConflictKind = "context_mismatch"
	// IdenticalReplay: the same operation meets the same content it already met (it was
	// applied, or failed, and nothing changed since), or it would leave the file unchanged.
	IdenticalReplay ConflictKind = "identical_replay"
	// FileNotFound: Update File or Delete File names a path with no file.
	FileNotFound ConflictKind = "file_not_found"
	// NotAFile: the path is a directory or another non-regular entry.
	NotAFile ConflictKind = "not_a_file"
	// NotADirectory: a file would be created below a path that is a file.
	NotADirectory ConflictKind = "not_a_directory"
)

// Conflict is why one operation cannot be applied. It carries all a conflict must report: the
// resource, the operation digest, the current content digest, the hunk where one applies, and
// the required action.
type Conflict struct {
	Kind ConflictKind
	// Path is the resource at fault; for a move it may be the target.
	Path string
	// Op is the 1-based index of the operation in the patch; OpLine its header line.
	Op       int
	OpLine   int
	OpDigest Digest
	// ContentDigest is the digest of Path's current bytes; zero when Path has no file.
	ContentDigest Digest
	// Hunk is the 1-based hunk of an Update (ContextMismatch), HunkHeader its "@@" context
	// text, HunkLine its line in the patch.
	Hunk       int
	HunkHeader string
	HunkLine   int
	// Read is the credential the model held (StaleRead); Generation the file's current
	// read generation.
	Read       *ReadCredential
	Generation uint64
	// Nearest is the part of the file most like what the hunk expected (ContextMismatch).
	Nearest *Candidate
	// Message says what is wrong; RequiredAction what the model must do before trying again.
	Message        string
	RequiredAction string
}

// Code returns the stable code of the conflict's kind.
func (c *Conflict) Code() string { return string(c.Kind) }

func (c *Conflict) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", c.Kind, c.Message)
	multiline := strings.Contains(c.Message, "\n")
	if c.Nearest != nil {
		fmt.Fprintf(&b, "\nnearest candidate at line %d:", c.Nearest.Line)
		for _, l := range c.Nearest.Lines {
			b.WriteString("\n  | ")
			b.WriteString(clip(l))
		}
		multiline = true
	}
	if c.RequiredAction != "" {
		if multiline {
			b.WriteString("\nrequired action: ")
		} else {
			b.WriteString("; required action: ")
		}
		b.WriteString(c.RequiredAction)
	}
	return b.String()
}

// ConflictError is a patch that pre-flight refused: nothing may be written. It lists the
// first conflict of every operation that has one, so the model can fix them all at once.
type ConflictError struct {
	Conflicts []*Conflict
}

// Code is the first conflict's kind; every conflict keeps its own in Conflicts.
func (e *ConflictError) Code() string {
	if len(e.Conflicts) == 0 {
		return ""
	}
	return e.Conflicts[0].Code()
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apply_patch wrote nothing: %d conflicting operation", len(e.Conflicts))
	if len(e.Conflicts) != 1 {
		b.WriteString("s")
	}
	for _, c := range e.Conflicts {
		fmt.Fprintf(&b, "\n- operation %d (line %d): %s", c.Op, c.OpLine, c.Error())
	}
	return b.String()
}

// Unwrap lets errors.As find a *Conflict.
func (e *ConflictError) Unwrap() []error {
	out := make([]error, len(e.Conflicts))
	for i, c := range e.Conflicts {
		out[i] = c
	}
	return out
}

// Attempts are what the caller records so that sending the same operation again at the same
// content is an IdenticalReplay: the conflicts that the content decided (a mismatch, a no-op,
// a replay). Missing credentials and paths are not recorded; once fixed, the same operation
// may well succeed.
func (e *ConflictError) Attempts() []PathAttempt {
	var out []PathAttempt
	for _, c := range e.Conflicts {
		if (c.Kind == ContextMismatch || c.Kind == IdenticalReplay) && !c.ContentDigest.IsZero() {
			out = append(out, PathAttempt{Path: c.Path, Attempt: Attempt{Op: c.OpDigest, Content: c.ContentDigest}})
		}
	}
	return out
}

// SnapshotError is a caller bug: Plan needs the state of every path Patch.Paths lists.
type SnapshotError struct {
	Path string
}

// CodeSnapshotIncomplete is SnapshotError's code.
const CodeSnapshotIncomplete = "snapshot_incomplete"

// Code returns the stable error code.
func (e *SnapshotError) Code() string { return CodeSnapshotIncomplete }

func (e *SnapshotError) Error() string {
	return fmt.Sprintf("%s: the snapshot has no state for %s; load every path Patch.Paths lists", CodeSnapshotIncomplete, e.Path)
}
