package shell

import (
	"slices"
	"strconv"
	"testing"
)

// dedupEnv keeps the last value of each name in os/exec's order, and hands back an
// environment without a repeated name as it is (the fast path, no map).
func TestDedupEnv(t *testing.T) {
	big := make([]string, 300)
	for i := range big {
		big[i] = "N" + strconv.Itoa(i) + "=x"
	}
	bigDup := append(slices.Clone(big), "N7=y")
	wantBigDup := append(slices.Delete(slices.Clone(big), 7, 8), "N7=y")
	for _, tc := range []struct {
		name     string
		env      []string
		want     []string
		sameBack bool
	}{
		{"empty", nil, nil, true},
		{"no repeat", []string{"A=1", "B=2", "AB=3"}, []string{"A=1", "B=2", "AB=3"}, true},
		{"repeat, last wins", []string{"A=1", "B=2", "A=3"}, []string{"B=2", "A=3"}, false},
		{"a name that prefixes another", []string{"PATH=1", "PATHX=2"}, []string{"PATH=1", "PATHX=2"}, true},
		{"an entry without '='", []string{"A", "A=1"}, []string{"A=1"}, false},
		{"empty value repeated", []string{"A=", "A="}, []string{"A="}, false},
		{"more names than the fast path takes, no repeat", big, big, false},
		{"more names than the fast path takes, a repeat", bigDup, wantBigDup, false},
	} {
		got := dedupEnv(tc.env)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
		if tc.sameBack && len(tc.env) > 0 && &got[0] != &tc.env[0] {
			t.Errorf("%s: copied an environment with no repeated name", tc.name)
		}
	}
}
