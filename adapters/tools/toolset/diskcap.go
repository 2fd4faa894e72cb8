package toolset

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/domain/tools"
)

// budget is what one shell command may keep on disk: the per-call cap, or what the session's
// cap has left when that is less (docs/config.md, "Bounds"), and which of the two it is.
type budget struct {
	bytes int64
	key   string // the tool_output key that set it
}

// diskBudget is the next command's budget, or the refusal when the session has none left:
// the artifact directory and the background logs already hold the session's cap. Sizes are
// read from the directories themselves, so the budget holds across processes and restarts.
func (s *Set) diskBudget() (budget, *tools.Result) {
	used := dirBytes(s.art.dir)
	for _, d := range s.cfg.UsageDirs {
		used += dirBytes(d)
	}
	left := s.cfg.MaxSessionArtifactBytes - used
	if left <= 0 {
		return budget{}, &tools.Result{Outcome: tools.OutcomeError, ErrorCode: string(CodeSessionArtifactCap),
			Output: fmt.Sprintf("shell: not run: this session's saved output (artifacts and background logs) already holds %d bytes, "+
				"its limit tool_output.max_session_artifact_bytes being %d. Nothing ran. Read what is saved with bg "+
				`{"action": "artifact", ...}, or ask the user to raise the limit in a trusted configuration layer or start a new session.`,
				used, s.cfg.MaxSessionArtifactBytes)}
	}
	if left < s.cfg.MaxArtifactBytes {
		return budget{left, "max_session_artifact_bytes"}, nil
	}
	return budget{s.cfg.MaxArtifactBytes, "max_artifact_bytes"}, nil
}

// capped is the typed refusal of a command stopped at its disk budget: the result r rendered
// for what was kept, marked uncertain (the command was stopped while it ran), and a first
// line that says what was kept, where, and its digest.
func capped(r tools.Result, b budget, res shell.Result) tools.Result {
	where := "in the output above"
	digest := ""
	if len(r.Metadata.OutputPaths) > 0 {
		where = "at " + r.Metadata.OutputPaths[0]
		digest = fileDigest(r.Metadata.OutputPaths[0])
	} else if res.Spool == "" {
		sum := sha256.Sum256(res.Output)
		digest = hex.EncodeToString(sum[:])
	}
	head := fmt.Sprintf("Stopped: the command's output reached tool_output.%s (%d bytes), so Zuno stopped its process group. "+
		"Kept: the first %d bytes (sha256 %s) %s; the %d bytes after them were counted and dropped. "+
		"What the command changed before it was stopped is unknown: inspect it before running anything again, and write less "+
		"(filter with grep, head or tail, or redirect to a file you read a part of).\n",
		b.key, b.bytes, res.Kept, digest, where, res.TotalBytes-res.Kept)
	r.Output = head + r.Output
	r.Outcome, r.ErrorCode = tools.OutcomeUncertain, string(CodeArtifactCapReached)
	return r
}

// fileDigest is the hex SHA-256 of the file at p, read through a fixed buffer ("" if it
// cannot be read).
func fileDigest(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, f, make([]byte, 64<<10)); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// dirBytes is the size of the regular files under dir (0 when it does not exist).
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// withholdKept stores what a command stopped at its disk cap kept, and renders the notice
// the model gets: the first bytes only, the rest dropped, never "nothing was cut".
func (a *artifacts) withholdKept(callID string, res shell.Result, w *tools.WithheldOutput) (withheld, error) {
	var p string
	var err error
	switch {
	case res.Spool != "":
		p, err = a.keep(callID, tools.NameShell, res.Spool)
	case res.SpoolErr != nil:
		err = fmt.Errorf("spooling the output: %w", res.SpoolErr)
	default:
		p, err = a.store(callID, tools.NameShell, res.Output)
	}
	if err != nil {
		return withheld{}, err
	}
	w.Path = p
	text := fmt.Sprintf("Output withheld: %d bytes were written, over tool_output.max_bytes (%d bytes); the first %d are saved at %s and the rest was dropped. "+
		`Read it back a window at a time with bg {"action": "artifact", "outputPath": %q}.`, res.TotalBytes, w.MaxBytes, res.Kept, p, p)
	return withheld{notice: text, meta: tools.Metadata{OutputPaths: []string{p}, WithheldOutput: w}}, nil
}
