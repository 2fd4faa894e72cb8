package sandbox_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/settings"
)

func refusal(t *testing.T, layers []settings.Raw, req sandbox.Request) string {
	t.Helper()
	cfg, err := sandbox.Merge(layers)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sandbox.Resolve(cfg, req)
	var r *sandbox.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("want a refusal, got %v", err)
	}
	return err.Error()
}

// TestRefusalMessages follows "其他平台" and "沙箱默认失败即拒绝" (docs/sandbox.md "The
// refusal"): each row is one sentence about what the message says.
func TestRefusalMessages(t *testing.T) {
	macWrite := refusal(t, []settings.Raw{raw(settings.Global, `{"backend": "auto"}`)}, sandbox.Request{Platform: "darwin"})
	macRead := refusal(t, []settings.Raw{raw(settings.Global, `{"backend": "auto"}`)}, sandbox.Request{Platform: "darwin", ReadOnlyAgent: true})
	linuxWrite := refusal(t, nil, sandbox.Request{Platform: "linux", Availability: noLauncher})
	linuxRead := refusal(t, nil, sandbox.Request{Platform: "linux", ReadOnlyAgent: true, Availability: noLauncher})
	untrustedRU := refusal(t, []settings.Raw{raw(settings.Global, runUnconfined)}, sandbox.Request{Platform: "linux", Availability: untrusted})

	for _, tc := range []struct {
		name     string
		msg      string
		has      []string
		hasNot   []string
		prefixed string
	}{
		{name: "macOS: starts with the typed reason naming the platform and the requested authority", msg: macWrite,
			prefixed: "OS sandbox is not implemented for platform `macos`: macos has no confined sandbox backend, so the Shell tool cannot be registered under the requested `workspace-write` authority."},
		{name: "macOS write-capable: says the fallback applies and lists flag, env and trusted layers", msg: macWrite,
			has: []string{"run-unconfined fallback applies to this request", "--sandbox-on-unavailable run-unconfined", "ZUNO_SANDBOX_ON_UNAVAILABLE=run-unconfined",
				`"sandbox": {"onUnavailable": "run-unconfined"} in a trusted layer (global, managed, env, CLI)`, "the project layer cannot enable it"}},
		{name: "write-capable: lists the native backend beside the fallback, and danger-full-access's allow_all", msg: macWrite,
			has: []string{"--sandbox-backend native", "ZUNO_SANDBOX_BACKEND=native", `"sandbox": {"backend": "native"}`, "the project layer cannot select it",
				"danger-full-access", "additionally sets the effective permission mode to allow_all"}},
		{name: "every refusal says none of the remedies is sandbox isolation", msg: macWrite + linuxWrite + macRead + linuxRead,
			has: []string{"None of these remedies is sandbox isolation"}},
		{name: "read-only: says it never falls back, and does not list the fallback remedy", msg: macRead,
			prefixed: "OS sandbox is not implemented for platform `macos`", has: []string{"Read-only requests never fall back", "requested `read-only` authority"},
			hasNot: []string{"--sandbox-on-unavailable", "ZUNO_SANDBOX_ON_UNAVAILABLE", "danger-full-access"}},
		{name: "read-only: its remedy is the native backend, a role boundary not an OS boundary", msg: macRead,
			has: []string{"--sandbox-backend native", "ZUNO_SANDBOX_BACKEND=native", "role boundary, not an OS boundary"}},
		{name: "Linux: starts with the typed reason", msg: linuxWrite, prefixed: "no trusted system bubblewrap executable was found",
			has: []string{`sandbox.onUnavailable is "deny"`, "bubblewrap 0.8.0", "zuno debug sandbox"}},
		{name: "Linux read-only: no fallback remedy", msg: linuxRead, prefixed: "no trusted system bubblewrap executable was found",
			hasNot: []string{"--sandbox-on-unavailable"}},
		{name: "untrusted launcher: run-unconfined does not apply, and is not offered", msg: untrustedRU,
			has: []string{"run-unconfined does not apply to this request: untrusted_launcher never falls back"}, hasNot: []string{"--sandbox-on-unavailable"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.prefixed != "" && !strings.HasPrefix(tc.msg, tc.prefixed) {
				t.Errorf("message does not start with %q:\n%s", tc.prefixed, tc.msg)
			}
			for _, s := range tc.has {
				if !strings.Contains(tc.msg, s) {
					t.Errorf("message lacks %q:\n%s", s, tc.msg)
				}
			}
			for _, s := range tc.hasNot {
				if strings.Contains(tc.msg, s) {
					t.Errorf("message has %q:\n%s", s, tc.msg)
				}
			}
		})
	}
}

func TestFallbackWarning(t *testing.T) {
	cfg, _ := sandbox.Merge([]settings.Raw{raw(settings.Global, `{"onUnavailable": "run-unconfined", "writableRoots": ["/srv/cache"], "protectedPaths": [".git"]}`)})
	res, err := sandbox.Resolve(cfg, sandbox.Request{Platform: "linux", Availability: nsPolicy})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"namespace_policy", "workspace-write", `network "deny"`, "writable roots and protected paths", "NOT enforced", "not sandbox isolation"} {
		if !strings.Contains(res.Warning, s) {
			t.Errorf("warning lacks %q: %s", s, res.Warning)
		}
	}
	if len(res.WritableRoots) != 1 || len(res.ProtectedPaths) != 1 {
		t.Errorf("requested paths not recorded: %+v", res)
	}
}
