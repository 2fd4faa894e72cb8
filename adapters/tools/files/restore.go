package files

import (
	"fmt"
	"io/fs"

	"github.com/zuno-run/zuno/domain/patch"
)

// Restoring a session's read state.
//
// A Credentials store lives in one process, but a session's turns run in several (each
// `zuno run --session` is a new one). The tools record every credential they issue with
// their results, and a new process folds those results back in, in log order, before its
// first step: RestoreCredential for what was read or written, Credentials.Invalidate for
// what was deleted or left uncertain, RestoreAttempts for IdenticalReplay.
//
// A restored credential is a claim from the log, not proof: it only lets a later write or
// apply_patch proceed while the file on disk still has the recorded digest (the same check a
// credential issued in this process gets), and the write still resolves its own path inside
// the workspace. Restoring therefore only accepts keys the files package itself would have
// produced (clean, root-relative, free of symbolic links today), so a tampered log cannot
// make a key that names another location, or one outside the root, look read.
//
// Generations. A path's generation counts the runtime's own changes to it (Written,
// Invalidate), and a held credential is current only while its generation equals the
// path's. A new process starts every counter at 0, so restoring a credential with
// generation g raises the path's counter to g: the credential is as current as it was in
// the process that issued it, a read issues g again (as a re-read did there), and the next
// runtime change makes g+1, newer than anything restored; no credential issued later can
// be older than a restored one. A restored credential with g below the path's counter is
// refused and lowers nothing: every process restores before it acts, so one path's
// recorded generations never decrease in a session's log. A lower one is a read that raced
// a runtime write (the write's credential had replaced it in that process too) or a
// reordered or tampered log; either way the newer state stands.

// maxRestoredGeneration bounds a restored generation. No session writes one path anywhere
// near 2^53 times; the bound keeps a tampered log from pushing a counter to wrap around to
// 0, and keeps generations exact for clients that read them as JSON numbers.
const maxRestoredGeneration = 1 << 53

// RestoreCredential gives the model back a credential an earlier process of the session
// issued for rel, the root-relative path recorded with it. It is refused (and nothing is
// held) unless rel is a clean relative slash path that resolves, through the file system
// as it is now, to itself inside the root, cred has a digest, and its generation is not
// older than rel's current one (see "Generations" above).
func (w *Workspace) RestoreCredential(rel string, cred patch.ReadCredential) error {
	if cred.Digest.IsZero() {
		return fmt.Errorf("files: restore %q: the credential has no digest", rel)
	}
	if cred.Generation > maxRestoredGeneration {
		return fmt.Errorf("files: restore %q: generation %d is beyond any real session", rel, cred.Generation)
	}
	key, err := w.canonicalKey(rel)
	if err != nil {
		return err
	}
	return w.Credentials.restore(key, cred)
}

// RestoreAttempts records apply_patch attempts from an earlier process, so that resending an
// operation it applied (or that failed on the same content) is still an IdenticalReplay.
// Each path is resolved now, as ApplyPatch resolves a patch's paths before recording; an
// attempt whose path is malformed or no longer resolves inside the root, or that lacks a
// digest, is dropped. Attempts only ever refuse an operation, so this grants nothing.
func (w *Workspace) RestoreAttempts(as []patch.PathAttempt) {
	var keep []patch.PathAttempt
	for _, a := range as {
		if a.Op.IsZero() || a.Content.IsZero() || !fs.ValidPath(a.Path) || a.Path == "." {
			continue
		}
		pl, err := w.place(a.Path, "")
		if err != nil || pl.rel == "." {
			continue
		}
		a.Path = pl.key
		keep = append(keep, a)
	}
	w.Credentials.Record(keep)
}

// canonicalKey accepts rel only if it is already the key the files package would use for
// it: clean ("a/b", not "./a", "a//b", "a/../b", "/a" or ".."), not the root, inside the
// workspace, and reached now without any symbolic link. A link on the way is refused by the
// walk; a final link (dangling or not) names another key, so it is refused too: a credential
// for it would stand for a file that is elsewhere. Keys of files outside the workspace (under
// an external_directory grant) are never restored: the grant belonged to its call.
func (w *Workspace) canonicalKey(rel string) (string, error) {
	if !fs.ValidPath(rel) || rel == "." {
		return "", fmt.Errorf("files: restore %q: not a clean root-relative path", rel)
	}
	pl, err := w.place(rel, "")
	if err != nil {
		return "", fmt.Errorf("files: restore %q: %w", rel, err)
	}
	if pl.link || pl.key != rel {
		return "", fmt.Errorf("files: restore %q: the path is a symbolic link (to %q)", rel, pl.key)
	}
	return rel, nil
}

// restore holds cred for path (a canonical key) and raises path's generation to it, unless
// cred is older than the path's generation.
func (c *Credentials) restore(path string, cred patch.ReadCredential) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cur := c.gen[path]; cred.Generation < cur {
		return fmt.Errorf("files: restore %q: generation %d is older than the path's generation %d", path, cred.Generation, cur)
	}
	c.gen[path] = cred.Generation
	c.held[path] = cred
	return nil
}
