package replay

import (
	"slices"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
)

// named is a tool that only has a name: narrowed reads nothing else.
type named struct {
	tools.Tool
	name string
}

func (n named) Declaration() tools.Declaration { return tools.Declaration{Name: n.name} }

// An added tool the recording did not offer is left out, unless the tools config names it
// (a recording that disabled it, or a config that enables it now: the config decides);
// every other tool stays whatever the recording offered.
func TestNarrowed(t *testing.T) {
	all := []string{tools.NameRead, tools.NameGoalGet, tools.NameQuestion, tools.NameTaskContext}
	var ts []tools.Tool
	for _, n := range all {
		ts = append(ts, named{name: n})
	}
	offer := map[string]bool{tools.NameQuestion: true}
	for _, tc := range []struct {
		name       string
		offer      map[string]bool
		configured map[string]bool
		want       []string
	}{
		{"no recorded offer keeps all", nil, nil, all},
		{"added tools not offered leave", offer, nil, []string{tools.NameRead, tools.NameQuestion}},
		{"a tool the config disables stays for the config", offer, map[string]bool{tools.NameGoalGet: false},
			[]string{tools.NameRead, tools.NameGoalGet, tools.NameQuestion}},
		{"a tool the config enables stays, for the replay to report", offer, map[string]bool{tools.NameTaskContext: true},
			[]string{tools.NameRead, tools.NameQuestion, tools.NameTaskContext}},
	} {
		var got []string
		for _, tool := range narrowed(ts, tc.offer, tc.configured) {
			got = append(got, tool.Declaration().Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
