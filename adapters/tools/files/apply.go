package files

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/zuno-run/zuno/domain/patch"
)

// ApplyResult is what apply_patch returns after every write succeeded.
type ApplyResult struct {
	// WrittenPaths are the files that exist after the patch with new content (writtenPaths);
	// DeletedPaths the files removed, move sources included. Both are root-relative with
	// symbolic links resolved.
	WrittenPaths []string
	DeletedPaths []string
	// Credentials are the writer's credentials for the written files: what it wrote counts
	// as read.
	Credentials map[string]patch.ReadCredential
	// Attempts are the operations recorded for IdenticalReplay (keyed like the paths above).
	// The caller records them with the result, because only they carry the operations'
	// digests, which a later process needs to refuse a resent patch (RestoreAttempts).
	Attempts []patch.PathAttempt
}

// ApplyPatch parses and applies a patch. Errors:
//   - *patch.Error (invalid_argument): the patch text is malformed; nothing was planned.
//   - *Error (invalid_arguments): a path escapes the workspace; nothing was written.
//   - *patch.ConflictError: pre-flight refused at least one operation; nothing was written.
//   - *UncertainError: a write failed after writing had begun.
//
// The snapshot, the plan and every write happen under the workspace's one mutation lock.
func (w *Workspace) ApplyPatch(ctx context.Context, text string) (ApplyResult, error) {
	if err := ctxErr(ctx); err != nil {
		return ApplyResult{}, err
	}
	p, err := patch.Parse(text)
	if err != nil {
		return ApplyResult{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()

	snap := patch.Snapshot{}
	targets := map[string]target{}
	for _, q := range p.Paths() {
		t, err := w.resolve(q)
		if err != nil {
			return ApplyResult{}, err
		}
		if t.rel == "." {
			return ApplyResult{}, invalid("patch", "path %q is the workspace root; name a file", q)
		}
		st, err := w.state(q)
		if err != nil {
			return ApplyResult{}, &Error{Kind: InvalidArguments, Field: "patch", Message: "path " + quote(q) + " cannot be read: " + err.Error(), Err: err}
		}
		snap[q], targets[q] = st, t
	}
	plan, err := patch.Plan(p, snap)
	if err != nil {
		var ce *patch.ConflictError
		if errors.As(err, &ce) {
			w.Credentials.Record(canonical(ce.Attempts(), targets))
		}
		return ApplyResult{}, err
	}
	// The last moment to stop with nothing written.
	if err := ctxErr(ctx); err != nil {
		return ApplyResult{}, err
	}

	res := ApplyResult{Credentials: map[string]patch.ReadCredential{}}
	var done []string
	for i, wr := range plan.Writes {
		t := targets[wr.Path]
		err := w.writeOne(i, wr, t, plan.Writes, targets)
		if err != nil {
			u := &UncertainError{Written: done, Failed: t.rel, Err: err}
			for _, rest := range plan.Writes[i+1:] {
				u.NotWritten = append(u.NotWritten, targets[rest.Path].rel)
			}
			// Whatever changed, the model has to look at it again before the next change.
			for _, q := range append(append([]string{}, done...), t.rel) {
				w.Credentials.Invalidate(q)
			}
			return ApplyResult{}, u
		}
		done = append(done, t.rel)
		if wr.Delete {
			w.Credentials.Invalidate(t.rel)
			res.DeletedPaths = append(res.DeletedPaths, t.rel)
		} else {
			res.Credentials[t.rel] = w.Credentials.Written(t.rel, wr.Content)
			res.WrittenPaths = append(res.WrittenPaths, t.rel)
		}
	}
	res.Attempts = canonical(plan.Attempts(), targets)
	w.Credentials.Record(res.Attempts)
	return res, nil
}

// writeOne performs one step of the plan.
func (w *Workspace) writeOne(i int, wr patch.Write, t target, all []patch.Write, targets map[string]target) error {
	if w.beforeWrite != nil {
		if err := w.beforeWrite(i, t.rel); err != nil {
			return err
		}
	}
	if wr.Delete {
		err := os.Remove(t.real)
		if errors.Is(err, fs.ErrNotExist) {
			// Gone already: the state the plan wanted.
			return nil
		}
		return err
	}
	mode := fs.FileMode(0o644)
	// A move target takes its source's mode (the source is deleted by a later step of the
	// same operation).
	for _, other := range all[i+1:] {
		if other.Delete && other.Op == wr.Op {
			if fi, err := os.Stat(targets[other.Path].real); err == nil {
				mode = fi.Mode().Perm()
			}
			break
		}
	}
	return atomicWrite(t.real, wr.Content, mode)
}

// canonical rekeys attempts from patch paths to resolved root-relative paths.
func canonical(as []patch.PathAttempt, targets map[string]target) []patch.PathAttempt {
	out := make([]patch.PathAttempt, 0, len(as))
	for _, a := range as {
		if t, ok := targets[a.Path]; ok {
			a.Path = t.rel
		}
		out = append(out, a)
	}
	return out
}
