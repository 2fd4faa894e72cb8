package sandbox_test

// Security review (helper/review): the checked-in project layer loosening what a trusted layer
// tightened. docs/sandbox.md: checked-in configuration "may still set deny and tighten
// (read-only, protectedPaths, network: deny)"; a later layer wins per key, so it may loosen too.

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/settings"
)

func TestReviewProjectLayerCannotLoosenTrusted(t *testing.T) {
	global := `{"mode": "read-only", "network": "deny", "protectedPaths": ["secrets"]}`
	cases := []struct{ name, project string }{
		{"mode", `{"mode": "workspace-write"}`},
		{"network", `{"network": "allow"}`},
		{"protectedPaths", `{"protectedPaths": []}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := sandbox.Merge([]settings.Raw{
				{Layer: settings.Global, Source: "global", JSON: json.RawMessage(global)},
				{Layer: settings.Project, Source: "zuno.json", JSON: json.RawMessage(tc.project)},
			})
			if err != nil {
				return // refused: held
			}
			res, err := sandbox.Resolve(cfg, sandbox.Request{Platform: "linux",
				Availability: sandbox.Availability{Ready: true}})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case res.RequestedMode != sandbox.ModeReadOnly:
				t.Errorf("BROKEN: the project layer widened the global read-only to %s", res.RequestedMode)
			case res.Network != sandbox.NetworkDeny:
				t.Errorf("BROKEN: the project layer opened the network the global layer denied (%s)", res.Network)
			case !slices.Contains(res.ProtectedPaths, "secrets"):
				t.Errorf("BROKEN: the project layer dropped the global protected path (%v)", res.ProtectedPaths)
			}
		})
	}
}
