package toolset

import (
	"encoding/hex"
	"encoding/json"
	"strings"

	"github.com/zuno-run/zuno/domain/patch"
	"github.com/zuno-run/zuno/domain/tools"
	"github.com/zuno-run/zuno/events"
)

// read, write and apply_patch rebuild the session's read state from the results they
// recorded earlier (tools.Restorer): the turn driver hands each of them, in log order and
// before the turn's first step, every settlement recorded under its name. What may be
// restored follows what the call did in the process that ran it:
//
//   - a completed read or write gives back its credential, a completed apply_patch the
//     credentials for what it wrote (it counts as read), and removes any for what it deleted;
//   - an uncertain write or apply_patch removes the credentials of what it wrote or failed
//     to write, as that process did; it grants nothing;
//   - apply_patch's recorded attempts (IdenticalReplay) come back from its completed
//     results (details "attempts") and from the refusals decided by content (conflicts
//     context_mismatch and identical_replay, which carry both digests); they only refuse;
//   - anything else (another tool's result, an error, blocked or cancelled result, a
//     settlement made by restart recovery, details that do not decode or name an unclean
//     path) restores nothing, and the model reads the file again.
//
// Nothing restored is trusted beyond what a credential from this process would be: a write
// still needs the file on disk to have the recorded digest and still resolves its path
// inside the workspace.
var (
	_ tools.Restorer = (*readTool)(nil)
	_ tools.Restorer = (*writeTool)(nil)
	_ tools.Restorer = (*applyPatchTool)(nil)
)

// Restore takes back a completed read's credential.
func (t *readTool) Restore(ev events.ToolSettled) {
	if !ownResult(ev, tools.NameRead) || ev.Outcome != string(tools.OutcomeCompleted) {
		return
	}
	t.s.restorePathCredential(ev.Metadata.Details) // a directory listing has none
}

// restorePathCredential takes back the credential a read or write recorded beside its path;
// details without one restore nothing.
func (s *Set) restorePathCredential(details json.RawMessage) {
	var d struct {
		Path       string           `json:"path"`
		Credential *credentialFacts `json:"credential"`
	}
	if json.Unmarshal(details, &d) != nil || d.Credential == nil {
		return
	}
	s.restoreCredential(d.Path, *d.Credential)
}

// Restore takes back a completed write's credential, or drops the credential of the file
// an uncertain write may have changed.
func (t *writeTool) Restore(ev events.ToolSettled) {
	if !ownResult(ev, tools.NameWrite) {
		return
	}
	switch tools.Outcome(ev.Outcome) {
	case tools.OutcomeCompleted:
		t.s.restorePathCredential(ev.Metadata.Details)
	case tools.OutcomeUncertain:
		t.s.revokeUncertain(ev.Metadata.Details)
	}
}

// attemptFacts is one recorded apply_patch attempt: the operation's digest and the digest
// of the content it left the file with.
type attemptFacts struct {
	Path    string `json:"path"`
	Op      string `json:"op"`
	Content string `json:"content"`
}

// Restore takes back what a completed apply_patch wrote (credentials and attempts) and
// what it deleted, the attempts a refused one recorded, or what an uncertain one may have
// changed.
func (t *applyPatchTool) Restore(ev events.ToolSettled) {
	if !ownResult(ev, tools.NameApplyPatch) {
		return
	}
	switch tools.Outcome(ev.Outcome) {
	case tools.OutcomeCompleted:
		var d struct {
			DeletedPaths []string                   `json:"deletedPaths"`
			Credentials  map[string]credentialFacts `json:"credentials"`
			Attempts     []attemptFacts             `json:"attempts"`
		}
		if json.Unmarshal(ev.Metadata.Details, &d) != nil {
			return
		}
		ws := t.s.ws
		deleted := map[string]bool{}
		for _, p := range d.DeletedPaths {
			deleted[p] = true
			ws.Credentials.Invalidate(p)
		}
		for p, c := range d.Credentials {
			// A path recorded as both written and deleted cannot be told apart in order
			// from the record, so it keeps no credential.
			if !deleted[p] {
				t.s.restoreCredential(p, c)
			}
		}
		// Results recorded before attempts were recorded restore no attempts: a resent
		// patch is then judged by its hunks alone.
		var as []patch.PathAttempt
		for _, a := range d.Attempts {
			op, ok1 := parseDigest(a.Op)
			content, ok2 := parseDigest(a.Content)
			if ok1 && ok2 {
				as = append(as, patch.PathAttempt{Path: a.Path, Attempt: patch.Attempt{Op: op, Content: content}})
			}
		}
		ws.RestoreAttempts(as)
	case tools.OutcomeError:
		var d struct {
			Conflicts []conflictFacts `json:"conflicts"`
		}
		if json.Unmarshal(ev.Metadata.Details, &d) != nil {
			return
		}
		// The conflicts ApplyPatch recorded as attempts (patch.ConflictError.Attempts);
		// their paths are the patch's, which RestoreAttempts resolves as ApplyPatch did.
		var as []patch.PathAttempt
		for _, c := range d.Conflicts {
			if c.Kind != string(patch.ContextMismatch) && c.Kind != string(patch.IdenticalReplay) {
				continue
			}
			op, ok1 := parseDigest(c.OpDigest)
			content, ok2 := parseDigest(c.ContentDigest)
			if ok1 && ok2 {
				as = append(as, patch.PathAttempt{Path: c.Path, Attempt: patch.Attempt{Op: op, Content: content}})
			}
		}
		t.s.ws.RestoreAttempts(as)
	case tools.OutcomeUncertain:
		t.s.revokeUncertain(ev.Metadata.Details)
	}
}

// ownResult reports whether ev is a result the tool named name produced itself: a
// settlement made by restart recovery carries no facts of the tool's.
func ownResult(ev events.ToolSettled, name string) bool {
	return ev.Tool == name && !ev.Recovered
}

// restoreCredential hands a recorded credential to the workspace, which accepts it only for
// a clean workspace path. A refusal is not reported: Restore has no one to report to, and
// the model, holding no credential, is told to read the file again (read_required).
func (s *Set) restoreCredential(path string, c credentialFacts) {
	d, ok := parseDigest(c.Digest)
	if !ok {
		return
	}
	_ = s.ws.RestoreCredential(path, patch.ReadCredential{Digest: d, Generation: c.Generation})
}

// revokeUncertain drops the credentials of the paths an uncertain write or apply_patch
// wrote or failed on (its details "written" and "failed"), as the process that ran it did:
// the model must look at them again. Revoking only takes away, so the paths are used as
// recorded keys without further checks.
func (s *Set) revokeUncertain(details json.RawMessage) {
	var d struct {
		Written []string `json:"written"`
		Failed  string   `json:"failed"`
	}
	if json.Unmarshal(details, &d) != nil {
		return
	}
	for _, p := range d.Written {
		s.ws.Credentials.Invalidate(p)
	}
	if d.Failed != "" {
		s.ws.Credentials.Invalidate(d.Failed)
	}
}

// parseDigest reads a digest as patch.Digest.String renders it ("sha256:" and 64 lowercase
// hex digits) and nothing else; "none", the zero digest, is not one.
func parseDigest(s string) (patch.Digest, bool) {
	var d patch.Digest
	digits, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(digits) != hex.EncodedLen(len(d)) {
		return patch.Digest{}, false
	}
	if _, err := hex.Decode(d[:], []byte(digits)); err != nil {
		return patch.Digest{}, false
	}
	return d, !d.IsZero() && d.String() == s
}
