package sandbox_test

import (
	"encoding/json"
	"testing"

	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/settings"
)

// FuzzMergeProject: whatever a checkout writes in its sandbox key, it never gains host
// authority, and an accepted config always resolves or refuses with a typed answer.
func FuzzMergeProject(f *testing.F) {
	for _, s := range []string{`{"mode": "read-only"}`, runUnconfined, `{"backend": "native"}`, `{"protectedPaths": [".git", "../x"]}`,
		`{"mode": "danger-full-access", "network": "deny"}`, `{"writableRoots": []}`, `null`, `{"onUnavailable": "run-unconfined", "onUnavailable": "deny"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		cfg, err := sandbox.Merge([]settings.Raw{{Layer: settings.Project, Source: "zuno.json", JSON: json.RawMessage(js)}})
		if err != nil {
			return
		}
		if cfg.OnUnavailable == sandbox.OnUnavailableRunUnconfined || cfg.Backend == sandbox.BackendNative ||
			cfg.Mode == sandbox.ModeDangerFullAccess || len(cfg.WritableRoots) > 0 {
			t.Fatalf("project layer gained host authority: %+v from %s", cfg, js)
		}
		for _, ro := range []bool{false, true} {
			res, err := sandbox.Resolve(cfg, sandbox.Request{Platform: "linux", ReadOnlyAgent: ro, Availability: noLauncher})
			if err == nil && res.ResolutionKind != sandbox.KindTrustedNative {
				t.Fatalf("resolved without a backend: %+v", res)
			}
		}
	})
}
