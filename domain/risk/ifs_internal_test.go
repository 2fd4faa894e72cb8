package risk

import (
	"slices"
	"testing"
)

// ifsFields splits as bash's read does (bash -c 'IFS=X read -ra p <<< LINE; printf "[%s]" "${p[@]}"').
func TestIFSFields(t *testing.T) {
	for _, tc := range []struct {
		line, ifs string
		want      []string
	}{
		{"  a  b  ", " \t\n", []string{"a", "b"}},
		{"/home/u", "/", []string{"", "home", "u"}},
		{"a//b", "/", []string{"a", "", "b"}},
		{"a/", "/", []string{"a"}},
		{"a / b", "/ ", []string{"a", "b"}},
		{" a : b ", ": ", []string{"a", "b"}},
		{"a::b", ":", []string{"a", "", "b"}},
		{"", "/", nil},
	} {
		if got := ifsFields(tc.line, tc.ifs); !slices.Equal(got, tc.want) {
			t.Errorf("ifsFields(%q, %q) = %q, want %q", tc.line, tc.ifs, got, tc.want)
		}
	}
}
