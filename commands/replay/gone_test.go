package replay

import (
	"errors"
	"testing"

	"github.com/zuno-run/zuno/domain"
)

// A step that needed a gone workspace is its own finding: never replay_mismatch unless a
// checked step differs too (docs/replay.md, "A workspace that is gone").
func TestReportErrCodes(t *testing.T) {
	diff := Difference{Step: 2, Event: "session.tool.started.1", Field: "decision"}
	skip := Unchecked{Step: 1, Event: "session.tool.blocked.1", Workspace: "/gone", Needs: "a look at /gone/x"}
	for _, tc := range []struct {
		name      string
		r         Report
		wantCode  string
		wantClean bool
	}{
		{name: "every decision agrees", r: Report{}, wantClean: true},
		{name: "a difference", r: Report{Differences: []Difference{diff}}, wantCode: CodeReplayMismatch},
		{name: "only unchecked steps", r: Report{Unchecked: []Unchecked{skip}}, wantCode: CodeReplayWorkspaceGone},
		{name: "a difference beside an unchecked step", r: Report{Differences: []Difference{diff}, Unchecked: []Unchecked{skip}}, wantCode: CodeReplayMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.r.Err()
			if tc.wantClean {
				if err != nil {
					t.Fatalf("Err() = %v, want nil", err)
				}
				return
			}
			var de *domain.Error
			if !errors.As(err, &de) || de.Code() != tc.wantCode {
				t.Fatalf("Err() = %v, want code %s", err, tc.wantCode)
			}
		})
	}
}

func TestInside(t *testing.T) {
	for _, tc := range []struct {
		dir, p string
		want   bool
	}{
		{"/w/ws", "/w/ws/AGENTS.md", true},
		{"/w/ws", "/w/ws/sub/AGENTS.md", true},
		{"/w/ws", "/w/AGENTS.md", false},
		{"/w/ws", "/w/ws2/AGENTS.md", false},
		{"/w/ws", "zuno-runtime:identity", false},
		{"/w/ws", "/w/ws/../x/AGENTS.md", false},
	} {
		if got := inside(tc.dir, tc.p); got != tc.want {
			t.Errorf("inside(%q, %q) = %v, want %v", tc.dir, tc.p, got, tc.want)
		}
	}
}
