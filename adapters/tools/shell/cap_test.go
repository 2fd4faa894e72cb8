package shell

import (
	"context"
	"os"
	"testing"
	"time"
)

// A command whose output reaches the disk cap is stopped, and only the first MaxKeep bytes
// are kept on disk (docs/config.md, "Bounds"): an endless `yes` no longer fills the disk.
func TestOutputOverTheDiskCapStopsTheCommand(t *testing.T) {
	bothGuards(t, testOutputOverTheDiskCapStopsTheCommand)
}

func testOutputOverTheDiskCapStopsTheCommand(t *testing.T) {
	r := &Runner{Root: t.TempDir(), SpoolDir: t.TempDir(), KillGrace: 200 * time.Millisecond}
	const keep = 3 << 20
	res := run(t, r, Request{Command: "yes", MaxKeep: keep, Timeout: time.Minute})
	defer res.RemoveSpool()
	if !res.Capped || !res.Killed || res.TimedOut || res.Authoritative {
		t.Fatalf("capped %v killed %v timedOut %v authoritative %v", res.Capped, res.Killed, res.TimedOut, res.Authoritative)
	}
	fi, err := os.Stat(res.Spool)
	if err != nil || fi.Size() != keep || res.Kept != keep || res.TotalBytes < keep {
		t.Fatalf("spool %v (%v), kept %d, total %d; want %d kept", fi, err, res.Kept, res.TotalBytes, keep)
	}
}

// A cap under the inline cap keeps the head in memory only, cut at the cap.
func TestDiskCapUnderTheInlineCap(t *testing.T) {
	r := &Runner{Root: t.TempDir(), SpoolDir: t.TempDir(), MaxBytes: 4096}
	res := run(t, r, Request{Command: "head -c 1000 /dev/zero | tr '\\0' x", MaxKeep: 100})
	if !res.Capped || len(res.Output) != 100 || res.Spool != "" || res.TotalBytes != 1000 {
		t.Fatalf("capped %v output %d spool %q total %d", res.Capped, len(res.Output), res.Spool, res.TotalBytes)
	}
}

// Output under the cap is untouched.
func TestOutputUnderTheDiskCap(t *testing.T) {
	r := &Runner{Root: t.TempDir(), SpoolDir: t.TempDir()}
	res := run(t, r, Request{Command: "head -c 200000 /dev/zero", MaxKeep: 200000})
	defer res.RemoveSpool()
	if res.Capped || res.Kept != 200000 || !res.Authoritative {
		t.Fatalf("capped %v kept %d authoritative %v", res.Capped, res.Kept, res.Authoritative)
	}
	if _, err := r.Run(context.Background(), Request{Command: "true", MaxKeep: -1}); CodeOf(err) != CodeInvalidArguments {
		t.Fatalf("negative MaxKeep: %v", err)
	}
}
