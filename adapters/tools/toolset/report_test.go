package toolset

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
)

func TestReportWrite(t *testing.T) {
	s, root := newSet(t)
	content := "# Audit\n\nNo findings. ✓\n"
	r := callID(t, s, tools.NameReportWrite, "rep-1", args("name", "audit.md", "content", content))
	want(t, r, tools.OutcomeCompleted, "")

	rel := ".zuno/reports/" + reportPrefix(testSession, "rep-1") + "-audit.md"
	if !regexp.MustCompile(`^\.zuno/reports/[0-9a-f]{12}-audit\.md$`).MatchString(rel) {
		t.Fatalf("path %s", rel)
	}
	if !slices.Equal(r.Metadata.WrittenPaths, []string{rel}) || get(t, root, rel) != content {
		t.Fatalf("written %v", r.Metadata.WrittenPaths)
	}
	sum := sha256.Sum256([]byte(content))
	var d struct {
		Receipt reportReceipt `json:"reportArtifact"`
	}
	if err := json.Unmarshal(r.Metadata.Details, &d); err != nil {
		t.Fatal(err)
	}
	if d.Receipt != (reportReceipt{Path: rel, Bytes: len(content), SHA256: hex.EncodeToString(sum[:])}) {
		t.Errorf("receipt %+v", d.Receipt)
	}
	for _, part := range []string{rel, hex.EncodeToString(sum[:]), strconv.Itoa(len(content)) + " bytes"} {
		if !strings.Contains(r.Output, part) {
			t.Errorf("output lacks %q: %s", part, r.Output)
		}
	}
	if got := get(t, root, ".zuno/reports/.gitignore"); got != "*\n" {
		t.Errorf(".gitignore %q", got)
	}

	// The same call id and name again: the existing report is never replaced.
	again := callID(t, s, tools.NameReportWrite, "rep-1", args("name", "audit.md", "content", "other"))
	want(t, again, tools.OutcomeError, "report_exists")
	if get(t, root, rel) != content || len(again.Metadata.WrittenPaths) != 0 {
		t.Fatal("a report was overwritten")
	}
	// Another call gets its own file; another session too.
	other := callID(t, s, tools.NameReportWrite, "rep-2", args("name", "audit.md", "content", "second"))
	want(t, other, tools.OutcomeCompleted, "")
	if other.Metadata.WrittenPaths[0] == rel || reportPrefix("other-session", "rep-1") == reportPrefix(testSession, "rep-1") {
		t.Error("report paths are not distinct per call and session")
	}
}

func TestReportKeepsExistingGitignore(t *testing.T) {
	s, root := newSet(t)
	put(t, root, ".zuno/reports/.gitignore", "# mine\n*.md\n")
	want(t, call(t, s, tools.NameReportWrite, `{"name":"r.txt","content":"x"}`), tools.OutcomeCompleted, "")
	if got := get(t, root, ".zuno/reports/.gitignore"); got != "# mine\n*.md\n" {
		t.Errorf(".gitignore replaced: %q", got)
	}
}

func TestReportRefusesUnsafeAncestors(t *testing.T) {
	t.Run("symlinked .zuno", func(t *testing.T) {
		s, root := newSet(t)
		if err := os.MkdirAll(filepath.Join(root, "elsewhere"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("elsewhere", filepath.Join(root, ".zuno")); err != nil {
			t.Fatal(err)
		}
		r := call(t, s, tools.NameReportWrite, `{"name":"r.md","content":"x"}`)
		want(t, r, tools.OutcomeError, "unsafe_report_path")
		if entries, _ := os.ReadDir(filepath.Join(root, "elsewhere")); len(entries) != 0 {
			t.Errorf("wrote through the link: %v", entries)
		}
	})
	t.Run("symlinked reports", func(t *testing.T) {
		s, root := newSet(t)
		outside := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, ".zuno"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(root, ".zuno", "reports")); err != nil {
			t.Fatal(err)
		}
		want(t, call(t, s, tools.NameReportWrite, `{"name":"r.md","content":"x"}`), tools.OutcomeError, "unsafe_report_path")
		if entries, _ := os.ReadDir(outside); len(entries) != 0 {
			t.Errorf("wrote outside the workspace: %v", entries)
		}
	})
	t.Run("reports is a file", func(t *testing.T) {
		s, root := newSet(t)
		put(t, root, ".zuno/reports", "not a dir")
		want(t, call(t, s, tools.NameReportWrite, `{"name":"r.md","content":"x"}`), tools.OutcomeError, "unsafe_report_path")
		if get(t, root, ".zuno/reports") != "not a dir" {
			t.Error("the file was touched")
		}
	})
}
