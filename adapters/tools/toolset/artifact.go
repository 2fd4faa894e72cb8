package toolset

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zuno-run/zuno/domain/tools"
)

// artifacts stores output withheld for crossing the tool_output caps (see "Output caps and
// artifacts" in docs/tools.md): never cut, never lost, every byte on disk before the model is
// told where it is.
type artifacts struct {
	dir                string
	maxBytes, maxLines int
}

// countLines counts lines as a terminal shows them: a trailing fragment without a newline
// is a line (the same rule as the shell and search adapters).
func countLines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// over returns the withheld-output description when data crosses a cap (bytes checked
// first), or nil when it may be shown inline. Path is filled in by store.
func (a *artifacts) over(data []byte) *tools.WithheldOutput {
	w := &tools.WithheldOutput{Bytes: int64(len(data)), Lines: countLines(data), MaxBytes: a.maxBytes, MaxLines: a.maxLines}
	switch {
	case w.Bytes > int64(a.maxBytes):
		w.Limit = "max_bytes"
	case w.Lines > a.maxLines:
		w.Limit = "max_lines"
	default:
		return nil
	}
	return w
}

// maxArtifactTries bounds the search for a free artifact name.
const maxArtifactTries = 1000

// store writes data whole to a new file <dir>/<callID>-<tool>.out, created exclusively: an
// existing artifact (a re-delivered call id, another session sharing the directory) is
// never overwritten; the next free "-2", "-3", ... name is taken instead. It returns the
// absolute path. A partly written file is removed, so a path handed out always holds every
// byte.
func (a *artifacts) store(callID, tool string, data []byte) (string, error) {
	return a.claim(callID, tool, func(p string) error { return writeNew(p, bytes.NewReader(data)) })
}

// keep makes spool (a file in the artifact directory holding every byte of an output, as the
// shell wrote it while the command ran) the call's artifact under the same naming rule as
// store, so output of any size never passes through memory. A hard link claims the name
// exclusively; where linking is not possible the spool is copied through a fixed buffer.
// The spool is removed in every case.
func (a *artifacts) keep(callID, tool, spool string) (string, error) {
	defer os.Remove(spool)
	return a.claim(callID, tool, func(p string) error {
		err := os.Link(spool, p)
		if err == nil || errors.Is(err, fs.ErrExist) {
			return err
		}
		f, oerr := os.Open(spool)
		if oerr != nil {
			return oerr
		}
		defer f.Close()
		return writeNew(p, f)
	})
}

// ensureDir creates the artifact directory, where a shell spools output over the caps.
func (a *artifacts) ensureDir() error {
	if err := os.MkdirAll(a.dir, 0o700); err != nil {
		return fmt.Errorf("artifact directory: %w", err)
	}
	return nil
}

// claim calls create with <dir>/<callID>-<tool>.out, then the "-2", "-3", ... names, while
// it answers fs.ErrExist, and returns the path it succeeded with.
func (a *artifacts) claim(callID, tool string, create func(p string) error) (string, error) {
	if err := a.ensureDir(); err != nil {
		return "", err
	}
	base := safeName(callID) + "-" + tool
	for i := 1; i <= maxArtifactTries; i++ {
		name := base + ".out"
		if i > 1 {
			name = base + "-" + strconv.Itoa(i) + ".out"
		}
		p := filepath.Join(a.dir, name)
		err := create(p)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("artifact %s: %w", p, err)
		}
		return p, nil
	}
	return "", fmt.Errorf("artifact: no free name for %s in %s after %d tries", base, a.dir, maxArtifactTries)
}

// writeNew creates p exclusively and copies r into it, synced; a partly written file is
// removed, so a path handed out always holds every byte.
func writeNew(p string, r io.Reader) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := io.Copy(f, r)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(p)
	}
	return werr
}

// safeName makes a call id usable as a file name: it comes from the provider, so any byte
// outside a conservative set is replaced and the length is bounded.
func safeName(id string) string {
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 96 {
			break
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if s == "" {
		s = "call"
	}
	return s
}

// withheld is the outcome of holding output back.
type withheld struct {
	notice string
	meta   tools.Metadata // OutputPaths and WithheldOutput set
}

// withhold stores data as the call's artifact and renders the notice the model gets in
// its place: the measured size, the cap crossed, the artifact and its size, and how to
// read it back with bg. hint is the tool's own advice, appended as a sentence.
func (a *artifacts) withhold(callID, tool string, data []byte, w *tools.WithheldOutput, hint string) (withheld, error) {
	p, err := a.store(callID, tool, data)
	if err != nil {
		return withheld{}, err
	}
	return notice(p, int64(len(data)), w, hint), nil
}

// withholdSpool is withhold for an output already on disk in full (keep).
func (a *artifacts) withholdSpool(callID, tool, spool string, w *tools.WithheldOutput, hint string) (withheld, error) {
	p, err := a.keep(callID, tool, spool)
	if err != nil {
		return withheld{}, err
	}
	return notice(p, w.Bytes, w, hint), nil
}

// notice renders what the model reads instead of withheld output stored at p.
func notice(p string, size int64, w *tools.WithheldOutput, hint string) withheld {
	w.Path = p
	if fi, err := os.Stat(p); err == nil {
		size = fi.Size() // what is on disk, as the notice promises
	}
	limit, unit := w.MaxBytes, "bytes"
	if w.Limit == "max_lines" {
		limit, unit = w.MaxLines, "lines"
	}
	q := strconv.Quote(p)
	text := fmt.Sprintf("Output withheld: it is %d bytes in %d lines, over tool_output.%s (%d %s). "+
		"Nothing was cut: all of it is saved at %s (%d bytes). "+
		"Read it back a window at a time with bg {\"action\": \"artifact\", \"outputPath\": %s}: "+
		"without a cursor it starts at byte 0, each answer gives the next cursor and hasMore, and limit sets the window (default 16384, at most 51200 bytes).",
		w.Bytes, w.Lines, w.Limit, limit, unit, p, size, q)
	if hint != "" {
		text += " " + hint
	}
	return withheld{notice: text, meta: tools.Metadata{OutputPaths: []string{p}, WithheldOutput: w}}
}
