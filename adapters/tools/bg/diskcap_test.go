package bg

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A background task is under the same disk cap as a foreground call: an endless `yes` is
// stopped as capped, and its log keeps exactly the first bytes (docs/config.md, "Bounds").
func TestTaskStoppedAtTheDiskCap(t *testing.T) {
	const keep = 1 << 20
	m := newManager(t, WithDiskCaps(keep, 0))
	info := start(t, m, "yes")
	w := settled(t, m, info.ID)
	if w.Status != StatusCapped || w.TotalWritten != keep {
		t.Fatalf("status %s, total %d; want capped at %d", w.Status, w.TotalWritten, keep)
	}
	fi, err := os.Stat(info.LogPath)
	if err != nil || fi.Size() != keep {
		t.Fatalf("log %v (%v), want %d bytes", fi, err, keep)
	}
}

// A session whose logs and artifacts fill its cap starts no task; below it, a task gets
// what is left.
func TestSessionCapRefusesAStart(t *testing.T) {
	art := t.TempDir()
	if err := os.WriteFile(filepath.Join(art, "c1-shell.out"), make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, WithArtifactRoots(art), WithDiskCaps(1<<20, 4096+1000))
	w := settled(t, m, start(t, m, "yes").ID)
	if w.Status != StatusCapped || w.TotalWritten != 1000 {
		t.Fatalf("status %s, total %d; want capped at the 1000 bytes the session had left", w.Status, w.TotalWritten)
	}
	_, err := m.Start(context.Background(), StartRequest{Command: "touch ran", Dir: art, SessionID: "s1", CallID: "c2"})
	if codeOf(err) != CodeSessionArtifactCap {
		t.Fatalf("got %v, want %s", err, CodeSessionArtifactCap)
	}
	if _, err := os.Stat(filepath.Join(art, "ran")); err == nil {
		t.Fatal("the command ran past the session's cap")
	}
}
