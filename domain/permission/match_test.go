package permission

import "testing"

func TestTrailingSpaceStarMatchesTheWordsAlone(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"git status *", "git status", true},
		{"git status *", "git status -s", true},
		{"git status *", "git statusx", false},
		{"git status*", "git statusx", true},
		{"git *", "git", true},
		{"git *", "gitk", false},
	} {
		if got := matchWildcard(tc.pattern, tc.s); got != tc.want {
			t.Errorf("matchWildcard(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}
