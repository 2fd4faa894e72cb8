package main

import (
	"strings"
	"testing"

	zapp "github.com/zuno-run/zuno/commands/app"
)

// --allow and --deny become one ordered permission.rules object: allows first, denies after
// (so a deny wins), a pattern given twice in its last place, a bare tool as the pattern *.
func TestApprovalRules(t *testing.T) {
	for _, tc := range []struct {
		allow, deny []string
		want        string
	}{
		{nil, nil, ""},
		{[]string{"shell"}, nil, `{"shell":{"*":"allow"}}`},
		{[]string{"shell:rm -rf build*", "edit:src/*"}, []string{"shell:rm -rf build/keep*"},
			`{"shell":{"rm -rf build*":"allow","rm -rf build/keep*":"deny"},"edit":{"src/*":"allow"}}`},
		{[]string{"shell:git push*"}, []string{"shell:git push*"}, `{"shell":{"git push*":"deny"}}`},
		{[]string{"shell:a:b"}, nil, `{"shell":{"a:b":"allow"}}`},
		{[]string{`shell:echo "<x>"`}, nil, `{"shell":{"echo \"\u003cx\u003e\"":"allow"}}`},
	} {
		got, err := approvalRules(tc.allow, tc.deny)
		if err != nil || string(got) != tc.want {
			t.Errorf("approvalRules(%q, %q) = %s, %v; want %s", tc.allow, tc.deny, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", ":x", "shell:", "sh ell:x"} {
		_, err := approvalRules([]string{bad}, nil)
		if zapp.CodeOf(err) != "usage" || !strings.Contains(err.Error(), "--allow") {
			t.Errorf("--allow %q: %v (%s), want a usage error naming the flag", bad, err, zapp.CodeOf(err))
		}
	}
}
