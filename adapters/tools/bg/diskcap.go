package bg

import (
	"fmt"
	"io/fs"
	"path/filepath"
)

// diskBudget is how many bytes the next task's log may take: the per-task cap, or what the
// session's cap leaves when that is less; a typed refusal when it leaves nothing. Sizes are
// read from the directories, so the budget holds across processes (docs/config.md, "Bounds").
func (m *Manager) diskBudget() (int64, error) {
	if m.maxSession <= 0 {
		return m.maxTask, nil
	}
	used := dirBytes(m.LogDir())
	for _, d := range m.ArtifactRoots {
		used += dirBytes(d)
	}
	left := m.maxSession - used
	if left <= 0 {
		return 0, &Error{Code: CodeSessionArtifactCap, Message: fmt.Sprintf("not started: this session's background logs and saved output already hold %d bytes, "+
			"its limit tool_output.max_session_artifact_bytes being %d; read what is saved, or ask the user to raise the limit in a trusted configuration layer or start a new session", used, m.maxSession)}
	}
	if m.maxTask > 0 && m.maxTask < left {
		return m.maxTask, nil
	}
	return left, nil
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
