package files

import (
	"context"
	"errors"
	"io/fs"
	"slices"

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
	// Editor: the written files went to the editor (Workspace.Editor), which wrote them;
	// deletions, which the editor's protocol has no request for, were Zuno's on the disk.
	Editor bool
}

// ApplyPatch parses and applies a patch. Errors:
//   - *patch.Error (invalid_argument): the patch text is malformed; nothing was planned.
//   - *Error (invalid_arguments, symlink_refused, external_directory_required): a path cannot
//     be used; nothing was written.
//   - *patch.ConflictError: pre-flight refused at least one operation; nothing was written.
//   - *UncertainError: a write failed after writing had begun.
//
// The snapshot, the plan and every write happen under the workspace's one mutation lock, and
// each file is written through the directory handle its snapshot was taken from.
func (w *Workspace) ApplyPatch(ctx context.Context, text string) (ApplyResult, error) {
	return w.ApplyPatchIn(ctx, "", text)
}

// ApplyPatchIn is ApplyPatch for a call whose external_directory grant admitted externalRoot
// ("" for none); see WriteIn.
func (w *Workspace) ApplyPatchIn(ctx context.Context, externalRoot, text string) (ApplyResult, error) {
	if err := ctxErr(ctx); err != nil {
		return ApplyResult{}, err
	}
	p, err := patch.Parse(text)
	if err != nil {
		return ApplyResult{}, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()

	targets := map[string]*held{}
	defer func() {
		for _, h := range targets {
			h.close()
		}
	}()
	snap, err := w.snapshot(ctx, p, externalRoot, targets)
	if err != nil {
		return ApplyResult{}, err
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
	for _, wr := range plan.Writes {
		if wr.Delete {
			continue
		}
		if err := w.checkEditorText(targets[wr.Path].pl.key, wr.Content); err != nil {
			return ApplyResult{}, err
		}
		if err := w.checkEditorLinks(targets[wr.Path]); err != nil {
			return ApplyResult{}, err
		}
	}

	res, err := w.writePlan(ctx, plan, targets)
	if err != nil {
		return ApplyResult{}, err
	}
	res.Attempts = canonical(plan.Attempts(), targets)
	res.Editor = w.Editor.Writes() && len(res.WrittenPaths) > 0
	w.Credentials.Record(res.Attempts)
	return res, nil
}

// snapshot holds a handle on every path of the patch and reads its state. Children before
// their parents (Paths is sorted, and a child sorts after its parent), so a symbolic link
// among a new file's directories is reported as the link on that file's way
// (symlink_refused), not followed as if the directory were the file asked about.
func (w *Workspace) snapshot(ctx context.Context, p *patch.Patch, externalRoot string, targets map[string]*held) (patch.Snapshot, error) {
	snap := patch.Snapshot{}
	paths := p.Paths()
	slices.Reverse(paths)
	for _, q := range paths {
		pl, err := w.place(q, externalRoot)
		if err != nil {
			return nil, err
		}
		if pl.rel == "." {
			return nil, invalid("patch", "path %q is a directory the tools are rooted at; name a file", q)
		}
		if err := w.guard(q, pl, true); err != nil {
			return nil, err
		}
		h, err := w.hold(q, pl)
		if err != nil {
			return nil, err
		}
		targets[q] = h
		st, err := w.stateOf(h)
		if err != nil {
			return nil, &Error{Kind: InvalidArguments, Field: "patch", Message: "path " + quote(q) + " cannot be read: " + err.Error(), Err: err}
		}
		if st, err = w.editorState(ctx, h, st); err != nil {
			return nil, err
		}
		snap[q] = st
	}
	return snap, nil
}

// writePlan performs the plan's writes in order. A failure after the first write is uncertain:
// it names what was written, what failed and what was not, and every touched path must be
// read again before the next change.
func (w *Workspace) writePlan(ctx context.Context, plan patch.WritePlan, targets map[string]*held) (ApplyResult, error) {
	res := ApplyResult{Credentials: map[string]patch.ReadCredential{}}
	var done []string
	for i, wr := range plan.Writes {
		key := targets[wr.Path].pl.key
		if err := w.writeOne(ctx, i, wr, plan.Writes, targets); err != nil {
			u := &UncertainError{Written: done, Failed: key, Err: err}
			for _, rest := range plan.Writes[i+1:] {
				u.NotWritten = append(u.NotWritten, targets[rest.Path].pl.key)
			}
			for _, q := range append(append([]string{}, done...), key) {
				w.Credentials.Invalidate(q)
			}
			return ApplyResult{}, u
		}
		done = append(done, key)
		if wr.Delete {
			w.Credentials.Invalidate(key)
			res.DeletedPaths = append(res.DeletedPaths, key)
		} else {
			res.Credentials[key] = w.Credentials.Written(key, wr.Content)
			res.WrittenPaths = append(res.WrittenPaths, key)
		}
	}
	return res, nil
}

// writeOne performs one step of the plan through the handles held for its path.
func (w *Workspace) writeOne(ctx context.Context, i int, wr patch.Write, all []patch.Write, targets map[string]*held) error {
	h := targets[wr.Path]
	if w.beforeWrite != nil {
		if err := w.beforeWrite(i, h.pl.key); err != nil {
			return err
		}
	}
	if wr.Delete {
		return h.remove()
	}
	mode := fs.FileMode(0o644)
	// A move target takes its source's mode (the source is deleted by a later step of the
	// same operation).
	for _, other := range all[i+1:] {
		if other.Delete && other.Op == wr.Op {
			mode = targets[other.Path].mode(mode)
			break
		}
	}
	return h.write(ctx, w, wr.Content, mode)
}

// canonical rekeys attempts from patch paths to the paths' credential keys.
func canonical(as []patch.PathAttempt, targets map[string]*held) []patch.PathAttempt {
	out := make([]patch.PathAttempt, 0, len(as))
	for _, a := range as {
		if h, ok := targets[a.Path]; ok {
			a.Path = h.pl.key
		}
		out = append(out, a)
	}
	return out
}
