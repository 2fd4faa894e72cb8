package toolset

// Security review (helper/review): the shell's workdir is not a gate subject, so the tool
// itself must refuse a working directory outside the workspace, foreground and background.

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

type recordingStarter struct{ dirs []string }

func (r *recordingStarter) StartBackground(_ context.Context, req BackgroundRequest) (string, error) {
	r.dirs = append(r.dirs, req.Dir)
	return "bg_review", nil
}

func TestReviewShellWorkdirOutside(t *testing.T) {
	starter := &recordingStarter{}
	s, root := newSet(t, func(c *Config) { c.Background = starter })
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	for _, wd := range []string{"/", outside, "..", "../..", "link", "./link/.", filepath.Join(root, "..")} {
		res := call(t, s, "shell", `{"command":"pwd > `+filepath.Join(outside, "fg")+`","workdir":"`+wd+`"}`)
		if _, err := os.Stat(filepath.Join(outside, "fg")); err == nil {
			t.Errorf("BROKEN: foreground command ran in workdir %q: %s", wd, res.Output)
			os.Remove(filepath.Join(outside, "fg"))
		}
		call(t, s, "shell", `{"command":"true","workdir":"`+wd+`","background":true}`)
	}
	if len(starter.dirs) != 0 {
		t.Errorf("BROKEN: background commands started outside the workspace in %v", starter.dirs)
	}
}
