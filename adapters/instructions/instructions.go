// Package instructions reads the AGENTS.md files a turn is assembled with, from the user's
// configuration directory and from the project.
package instructions

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/zuno-run/zuno/domain/prompt"
)

// Read reads the AGENTS.md files a turn in dir is assembled with: the user's
// global file ($XDG_CONFIG_HOME/zuno/AGENTS.md) and the project's, from the project root (the
// nearest directory above dir holding .git, else dir itself) down to dir. Files are read once
// per turn; their bytes and digests go into the receipt.
func Read(dir string) (*prompt.InstructionFile, []prompt.InstructionFile, error) {
	var global *prompt.InstructionFile
	if cfg, err := os.UserConfigDir(); err == nil {
		p := filepath.Join(cfg, "zuno", "AGENTS.md")
		b, err := os.ReadFile(p)
		switch {
		case err == nil:
			global = &prompt.InstructionFile{Path: p, Content: b}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, nil, err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	root := abs
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			root = d
			break
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	var project []prompt.InstructionFile
	for d := abs; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "AGENTS.md")
		b, err := os.ReadFile(p)
		switch {
		case err == nil:
			project = append(project, prompt.InstructionFile{Path: p, Content: b})
		case !errors.Is(err, fs.ErrNotExist):
			return nil, nil, err
		}
		if d == root || filepath.Dir(d) == d {
			break
		}
	}
	return global, project, nil
}
