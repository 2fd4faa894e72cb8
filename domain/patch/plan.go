package patch

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"
)

// FileKind is what a path names in the workspace.
type FileKind uint8

const (
	// Missing: nothing at the path. The zero value, so an unset FileState is "no file".
	Missing FileKind = iota
	// File: a regular file (a symlink the caller resolved to one counts).
	File
	// Dir: a directory.
	Dir
	// Special: anything else (device, socket, dangling link); never edited.
	Special
)

func (k FileKind) String() string {
	switch k {
	case Missing:
		return "missing"
	case File:
		return "file"
	case Dir:
		return "directory"
	default:
		return "special file"
	}
}

// ReadCredential is what the read tool handed the model: the digest of the bytes it returned
// and the read generation of the file at that time. apply_patch trusts it, not the model's
// memory of the text.
type ReadCredential struct {
	Digest     Digest
	Generation uint64
}

// Attempt is an earlier apply_patch operation on a path, as the runtime recorded it: the
// operation's digest and the digest of the content the attempt left the file with (what it
// wrote, or what it found when the content made it fail).
type Attempt struct {
	Op      Digest
	Content Digest
}

// PathAttempt is an Attempt to record against Path.
type PathAttempt struct {
	Path string
	Attempt
}

// FileState is a path as the caller saw it under the mutation lock.
type FileState struct {
	Kind FileKind
	// Content is the file's bytes (Kind File).
	Content []byte
	// Generation is the path's current read generation, the counter read credentials are
	// compared with.
	Generation uint64
	// Read is the model's credential for the path, nil when it has none.
	Read *ReadCredential
	// Attempts are recorded earlier operations on the path, for IdenticalReplay.
	Attempts []Attempt
}

// Snapshot maps each path of Patch.Paths to its state.
type Snapshot map[string]FileState

// Write is one step of the plan: Content becomes Path's bytes, or Path is deleted.
type Write struct {
	Path    string
	Delete  bool
	Content []byte
	// Op is the digest of the operation that planned this write.
	Op Digest
	// Prior is the digest of the bytes Path held when planned (zero: no file), so the writer
	// can tell whether the path is still what was planned against.
	Prior Digest
}

// WritePlan is a patch that passed pre-flight: the exact bytes to write, in order.
type WritePlan struct {
	Writes []Write
	// WrittenPaths are the files that exist after the patch with new content (the result's
	// metadata.writtenPaths: "this file is here now and can be read again"); deletions and the
	// sources of moves are not among them.
	WrittenPaths []string
	// DeletedPaths are the files removed, including move sources.
	DeletedPaths []string
}

// Attempts are what the caller records after writing the plan, so that sending the same
// operations again is an IdenticalReplay rather than a second application.
func (w WritePlan) Attempts() []PathAttempt {
	var out []PathAttempt
	for _, wr := range w.Writes {
		if !wr.Delete {
			out = append(out, PathAttempt{Path: wr.Path, Attempt: Attempt{Op: wr.Op, Content: DigestOf(wr.Content)}})
		}
	}
	return out
}

// Paths lists every path whose state Plan needs, sorted: the paths the operations name, and
// the parent directories of every path the patch creates (Add File, Move to), because a file
// in the way of a directory must be a conflict before anything is written, not an I/O error
// halfway through.
func (p *Patch) Paths() []string {
	set := map[string]bool{}
	created := func(q string) {
		set[q] = true
		for dir := path.Dir(q); dir != "."; dir = path.Dir(dir) {
			set[dir] = true
		}
	}
	for _, op := range p.Ops {
		switch op := op.(type) {
		case *Add:
			created(op.Path)
		case *Delete:
			set[op.Path] = true
		case *Update:
			set[op.Path] = true
			if op.MoveTo != "" {
				created(op.MoveTo)
			}
		}
	}
	out := make([]string, 0, len(set))
	for q := range set {
		out = append(out, q)
	}
	slices.Sort(out)
	return out
}

// Plan checks every operation against the snapshot and returns the bytes to write, or an
// error and nothing to write: a *ConflictError the model can fix, a *Error for a malformed
// hand-built patch, or a *SnapshotError for a snapshot that misses a path of p.Paths().
// Every operation is checked before the result is decided, so one conflict anywhere means
// zero writes.
func Plan(p *Patch, files Snapshot) (WritePlan, error) {
	if err := p.validate(false); err != nil {
		return WritePlan{}, err
	}
	for _, q := range p.Paths() {
		if _, ok := files[q]; !ok {
			return WritePlan{}, &SnapshotError{Path: q}
		}
	}
	var plan WritePlan
	var conflicts []*Conflict
	for i, op := range p.Ops {
		pl := opPlanner{op: op, index: i + 1, digest: OpDigest(op), files: files}
		writes, c := pl.plan()
		if c != nil {
			conflicts = append(conflicts, c)
			continue
		}
		plan.Writes = append(plan.Writes, writes...)
	}
	if len(conflicts) > 0 {
		return WritePlan{}, &ConflictError{Conflicts: conflicts}
	}
	for _, w := range plan.Writes {
		if w.Delete {
			plan.DeletedPaths = append(plan.DeletedPaths, w.Path)
		} else {
			plan.WrittenPaths = append(plan.WrittenPaths, w.Path)
		}
	}
	return plan, nil
}

type opPlanner struct {
	op     Op
	index  int
	digest Digest
	files  Snapshot
}

func (pl *opPlanner) conflict(kind ConflictKind, q string, action, format string, args ...any) *Conflict {
	st := pl.files[q]
	c := &Conflict{
		Kind: kind, Path: q, Op: pl.index, OpLine: pl.op.HeaderLine(), OpDigest: pl.digest,
		Generation: st.Generation, Message: fmt.Sprintf(format, args...), RequiredAction: action,
	}
	if st.Kind == File {
		c.ContentDigest = DigestOf(st.Content)
	}
	return c
}

func (pl *opPlanner) plan() ([]Write, *Conflict) {
	switch op := pl.op.(type) {
	case *Add:
		return pl.add(op)
	case *Delete:
		return pl.delete(op)
	case *Update:
		return pl.update(op)
	}
	return nil, nil
}

// mustBeFile checks that an operation's source is an existing regular file.
func (pl *opPlanner) mustBeFile(q, verb string) *Conflict {
	switch pl.files[q].Kind {
	case File:
		return nil
	case Missing:
		action := "check the path (glob lists the files); create a new file with '*** Add File:'"
		if verb == "delete" {
			action = "check the path (glob lists the files); if it is already gone, drop the Delete File operation"
		}
		return pl.conflict(FileNotFound, q, action, "cannot %s %s: there is no such file", verb, q)
	default:
		return pl.conflict(NotAFile, q, "name a regular file; apply_patch neither edits nor deletes directories",
			"cannot %s %s: it is a %s, not a file", verb, q, pl.files[q].Kind)
	}
}

// mayCreate checks that a file can be written at q: q is not a directory and no parent of q
// is a file.
func (pl *opPlanner) mayCreate(q string) *Conflict {
	if k := pl.files[q].Kind; k == Dir || k == Special {
		return pl.conflict(NotAFile, q, "choose a path that is not a directory",
			"cannot write %s: it is a %s", q, k)
	}
	for dir := path.Dir(q); dir != "."; dir = path.Dir(dir) {
		if k := pl.files[dir].Kind; k == File || k == Special {
			return pl.conflict(NotADirectory, dir, fmt.Sprintf("choose a path outside %s, or move %s away first", dir, dir),
				"cannot create %s: %s is a %s, not a directory", q, dir, k)
		}
	}
	return nil
}

// credential is the read rule: an existing file is only changed by a model that read its
// current bytes.
func (pl *opPlanner) credential(q, verb string) *Conflict {
	st := pl.files[q]
	if st.Kind != File {
		return nil
	}
	if st.Read == nil {
		return pl.conflict(ReadRequired, q, fmt.Sprintf("read %s with the read tool, then build the operation from what you read", q),
			"%s %s, which exists and has not been read", verb, q)
	}
	current := DigestOf(st.Content)
	if st.Read.Digest != current || st.Read.Generation != st.Generation {
		c := pl.conflict(StaleRead, q, fmt.Sprintf("read %s again and rebuild the operation from its current content", q),
			"%s changed since it was read (read: %s at generation %d; now: %s at generation %d)",
			q, st.Read.Digest, st.Read.Generation, current, st.Generation)
		read := *st.Read
		c.Read = &read
		return c
	}
	return nil
}

// replayed reports an operation that already met this exact content: resending it cannot
// have a new outcome.
func (pl *opPlanner) replayed(q string) *Conflict {
	st := pl.files[q]
	if st.Kind != File {
		return nil
	}
	current := DigestOf(st.Content)
	for _, a := range st.Attempts {
		if a.Op == pl.digest && a.Content == current {
			return pl.conflict(IdenticalReplay, q,
				"do not resend this operation unchanged: change it, or wait until the file really changes and read it again",
				"this operation was already applied to %s, or already failed on it, and the file has not changed since (%s)", q, current)
		}
	}
	return nil
}

func (pl *opPlanner) add(op *Add) ([]Write, *Conflict) {
	if c := pl.mayCreate(op.Path); c != nil {
		return nil, c
	}
	if c := pl.credential(op.Path, "Add File would overwrite"); c != nil {
		return nil, c
	}
	if c := pl.replayed(op.Path); c != nil {
		return nil, c
	}
	st := pl.files[op.Path]
	if st.Kind == File && bytes.Equal(st.Content, []byte(op.Content)) {
		return nil, pl.conflict(IdenticalReplay, op.Path,
			"do not resend it: the change is already there; move on, or read the file and write the change you still need",
			"%s already has exactly the content Add File gives it", op.Path)
	}
	w := Write{Path: op.Path, Content: []byte(op.Content), Op: pl.digest}
	if st.Kind == File {
		w.Prior = DigestOf(st.Content)
	}
	return []Write{w}, nil
}

func (pl *opPlanner) delete(op *Delete) ([]Write, *Conflict) {
	if c := pl.mustBeFile(op.Path, "delete"); c != nil {
		return nil, c
	}
	if c := pl.credential(op.Path, "Delete File would remove"); c != nil {
		return nil, c
	}
	return []Write{{Path: op.Path, Delete: true, Op: pl.digest, Prior: DigestOf(pl.files[op.Path].Content)}}, nil
}

func (pl *opPlanner) update(op *Update) ([]Write, *Conflict) {
	if c := pl.mustBeFile(op.Path, "update"); c != nil {
		return nil, c
	}
	if op.MoveTo != "" {
		if c := pl.mayCreate(op.MoveTo); c != nil {
			return nil, c
		}
	}
	verb := "Update File would change"
	if op.MoveTo != "" {
		verb = "Move to would move"
	}
	if c := pl.credential(op.Path, verb); c != nil {
		return nil, c
	}
	if op.MoveTo != "" {
		if c := pl.credential(op.MoveTo, "Move to would overwrite"); c != nil {
			return nil, c
		}
	}
	if c := pl.replayed(op.Path); c != nil {
		return nil, c
	}
	src := pl.files[op.Path]
	updated, m := applyChunks(src.Content, op.Chunks)
	if m != nil {
		return nil, pl.mismatch(op, m)
	}
	prior := DigestOf(src.Content)
	if op.MoveTo == "" {
		if bytes.Equal(updated, src.Content) {
			return nil, pl.conflict(IdenticalReplay, op.Path,
				"do not resend it: if the change is already there, move on; otherwise read the file and write hunks that change it",
				"the hunks leave %s byte for byte unchanged", op.Path)
		}
		return []Write{{Path: op.Path, Content: updated, Op: pl.digest, Prior: prior}}, nil
	}
	var destPrior Digest
	if dst := pl.files[op.MoveTo]; dst.Kind == File {
		destPrior = DigestOf(dst.Content)
	}
	// The target first: if writing stops in between, the content exists twice rather than
	// not at all.
	return []Write{
		{Path: op.MoveTo, Content: updated, Op: pl.digest, Prior: destPrior},
		{Path: op.Path, Delete: true, Op: pl.digest, Prior: prior},
	}, nil
}

func (pl *opPlanner) mismatch(op *Update, m *mismatch) *Conflict {
	c := m.chunk
	where := ""
	if m.after > 0 {
		where = fmt.Sprintf(" after line %d", m.after)
	}
	hunk := fmt.Sprintf("hunk %d", m.hunk)
	if c.Context != "" && !m.header {
		hunk = fmt.Sprintf("hunk %d (@@ %s)", m.hunk, clip(c.Context))
	}
	var msg string
	switch {
	case m.header:
		msg = fmt.Sprintf("hunk %d: its context line %q (the @@ header) is not in %s%s", m.hunk, c.Context, op.Path, where)
	case c.EndOfFile:
		msg = fmt.Sprintf("%s: %s not the last lines of %s%s", hunk, expectedLines(len(c.Old)), op.Path, where)
	default:
		msg = fmt.Sprintf("%s: %s not in %s%s", hunk, expectedLines(len(c.Old)), op.Path, where)
	}
	if len(c.Old) > 0 && !m.header {
		msg += ":\n" + quoteLines(c.Old)
	}
	action := fmt.Sprintf("read %s, then send a smaller patch whose context lines are copied fresh from the file and are unique", op.Path)
	if m.nearest != nil {
		action = fmt.Sprintf("read %s around line %d, then send a smaller patch whose context lines are copied fresh from the file and are unique", op.Path, m.nearest.Line)
	}
	conflict := pl.conflict(ContextMismatch, op.Path, action, "%s", msg)
	conflict.Hunk, conflict.HunkHeader, conflict.HunkLine, conflict.Nearest = m.hunk, c.Context, c.Line, m.nearest
	return conflict
}

func expectedLines(n int) string {
	if n == 1 {
		return "its expected line is"
	}
	return fmt.Sprintf("its %d expected lines are", n)
}

func quoteLines(lines []string) string {
	const limit = 20
	var b strings.Builder
	for i, l := range lines {
		if i == limit {
			fmt.Fprintf(&b, "  | … (%d more)\n", len(lines)-limit)
			break
		}
		b.WriteString("  | ")
		b.WriteString(clip(l))
		b.WriteString("\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// mismatch is a hunk that found no place in the file.
type mismatch struct {
	hunk  int
	chunk Chunk
	// header: the "@@" context line was not found (rather than the hunk's lines).
	header bool
	// after is the 1-based line after which the hunk was searched for (0: from the start).
	after   int
	nearest *Candidate
}

// applyChunks applies an Update's hunks to a file's bytes. Hunks are placed in order, each
// searched for after the previous one, and matched on logical lines; the result keeps the
// file's BOM, line endings and final-newline state.
func applyChunks(content []byte, chunks []Chunk) ([]byte, *mismatch) {
	doc := decode(content)
	lines := doc.texts()
	var reps []replacement
	cursor := 0
	for i, c := range chunks {
		if c.Context != "" {
			at, ok := seek(lines, []string{c.Context}, cursor, false)
			if !ok {
				return nil, &mismatch{hunk: i + 1, chunk: c, header: true, after: cursor, nearest: nearest(lines, []string{c.Context})}
			}
			cursor = at + 1
		}
		if len(c.Old) == 0 {
			reps = append(reps, replacement{start: insertionPoint(lines, c, cursor), texts: c.New})
			continue
		}
		old, repl := c.Old, c.New
		at, ok := seek(lines, old, cursor, c.EndOfFile)
		if !ok && old[len(old)-1] == "" {
			// A trailing empty line in a hunk often stands for the file's final newline,
			// which is not a line of its own here (Codex retries the same way).
			old = old[:len(old)-1]
			if len(repl) > 0 && repl[len(repl)-1] == "" {
				repl = repl[:len(repl)-1]
			}
			at, ok = seek(lines, old, cursor, c.EndOfFile)
		}
		if !ok {
			return nil, &mismatch{hunk: i + 1, chunk: c, after: cursor, nearest: nearest(lines, c.Old)}
		}
		reps = append(reps, replacement{start: at, n: len(old), texts: repl})
		cursor = at + len(old)
	}
	slices.SortStableFunc(reps, func(a, b replacement) int { return a.start - b.start })
	return doc.apply(reps).encode(), nil
}

// insertionPoint places a hunk with no expected lines. Under a "@@ <context>" header it goes
// right after the context line, where the model anchored it; otherwise at the end of the file,
// before a trailing blank line if there is one (Codex's rule, scenario 016).
func insertionPoint(lines []string, c Chunk, cursor int) int {
	if c.Context != "" && !c.EndOfFile {
		return cursor
	}
	end := len(lines)
	if end > 0 && lines[end-1] == "" {
		end--
	}
	return max(end, cursor)
}
