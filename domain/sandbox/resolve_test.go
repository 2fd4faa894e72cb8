package sandbox_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/settings"
)

func raw(l settings.Layer, js string) settings.Raw {
	return settings.Raw{Layer: l, Source: string(l) + "-source", JSON: json.RawMessage(js)}
}

var (
	ready       = sandbox.Availability{Ready: true}
	noLauncher  = unavailable(sandbox.ReasonNoTrustedLauncher, "no trusted system bubblewrap executable was found (looked at /usr/bin/bwrap, /bin/bwrap)")
	oldLauncher = unavailable(sandbox.ReasonLauncherMissingCapability, "bubblewrap 0.6.1 lacks --disable-userns")
	nsPolicy    = unavailable(sandbox.ReasonNamespacePolicy, "No permissions to create new namespace")
	untrusted   = unavailable(sandbox.ReasonUntrustedLauncher, "/usr/bin/bwrap is world-writable")
	seccomp     = unavailable(sandbox.ReasonSeccomp, "seccomp filter failed")
	helper      = unavailable(sandbox.ReasonHelper, "bwrap exited 1")
	internal    = unavailable(sandbox.ReasonInternal, "probe crashed")
	badPaths    = unavailable(sandbox.ReasonInvalidConfig, "writable root /nope does not exist")
)

func unavailable(c sandbox.ReasonCode, text string) sandbox.Availability {
	return sandbox.Availability{Reason: sandbox.Reason{Code: c, Text: text}}
}

const runUnconfined = `{"onUnavailable": "run-unconfined"}`

// TestResolveTable has one row per sentence of the seeds' sandbox sections and per row of
// the interactions table (docs/sandbox.md).
func TestResolveTable(t *testing.T) {
	type want struct {
		kind      sandbox.Kind
		mode      string
		authority string
		network   string
		effNet    string
		allowAll  bool
		refused   sandbox.ReasonCode // a *Refusal with this reason
		fallback  bool               // Refusal.FallbackApplies
		warning   bool
	}
	rows := []struct {
		name   string
		layers []settings.Raw
		req    sandbox.Request
		want   want
	}{
		{"mode unset defaults to workspace-write, network deny, confined when bwrap is ready", nil,
			sandbox.Request{Platform: "linux", Availability: ready},
			want{kind: sandbox.KindConfined, mode: "workspace-write", authority: "workspace-write", network: "deny", effNet: "deny"}},
		{"read-only agent contract narrows workspace-write to read-only", nil,
			sandbox.Request{Platform: "linux", ReadOnlyAgent: true, Availability: ready},
			want{kind: sandbox.KindConfined, mode: "read-only", authority: "read-only", network: "deny", effNet: "deny"}},
		{"network allow is recorded and enforced as allow when confined", []settings.Raw{raw(settings.Global, `{"network": "allow"}`)},
			sandbox.Request{Platform: "linux", Availability: ready},
			want{kind: sandbox.KindConfined, mode: "workspace-write", authority: "workspace-write", network: "allow", effNet: "allow"}},
		{"must have a sandbox: backend auto + onUnavailable deny stops shell assembly", []settings.Raw{raw(settings.Global, `{"backend": "auto", "onUnavailable": "deny"}`)},
			sandbox.Request{Platform: "linux", Availability: noLauncher},
			want{refused: sandbox.ReasonNoTrustedLauncher, fallback: true}},
		{"default onUnavailable deny stops shell assembly when the backend is unavailable", nil,
			sandbox.Request{Platform: "linux", Availability: noLauncher},
			want{refused: sandbox.ReasonNoTrustedLauncher, fallback: true}},
		{"workspace-write + trusted run-unconfined + no trusted launcher falls back with host authority",
			[]settings.Raw{raw(settings.Global, runUnconfined)},
			sandbox.Request{Platform: "linux", Availability: noLauncher},
			want{kind: sandbox.KindFallback, mode: "workspace-write", authority: "host", network: "deny", effNet: "host", warning: true}},
		{"fallback: launcher missing a capability (bubblewrap < 0.8.0) is eligible", []settings.Raw{raw(settings.Env, runUnconfined)},
			sandbox.Request{Platform: "linux", Availability: oldLauncher},
			want{kind: sandbox.KindFallback, mode: "workspace-write", authority: "host", network: "deny", effNet: "host", warning: true}},
		{"fallback: namespace/container policy is eligible", []settings.Raw{raw(settings.CLI, runUnconfined)},
			sandbox.Request{Platform: "linux", Availability: nsPolicy},
			want{kind: sandbox.KindFallback, mode: "workspace-write", authority: "host", network: "deny", effNet: "host", warning: true}},
		{"fallback: unsupported platform (explicit backend auto on macOS) is eligible", []settings.Raw{raw(settings.Managed, `{"backend": "auto", "onUnavailable": "run-unconfined"}`)},
			sandbox.Request{Platform: "darwin"},
			want{kind: sandbox.KindFallback, mode: "workspace-write", authority: "host", network: "deny", effNet: "host", warning: true}},
		{"never falls back: launcher present but untrusted", []settings.Raw{raw(settings.Global, runUnconfined)},
			sandbox.Request{Platform: "linux", Availability: untrusted},
			want{refused: sandbox.ReasonUntrustedLauncher}},
		{"never falls back: invalid sandbox paths", []settings.Raw{raw(settings.Global, runUnconfined)},
			sandbox.Request{Platform: "linux", Availability: badPaths},
			want{refused: sandbox.ReasonInvalidConfig}},
		{"never falls back: seccomp error", []settings.Raw{raw(settings.Global, runUnconfined)},
			sandbox.Request{Platform: "linux", Availability: seccomp}, want{refused: sandbox.ReasonSeccomp}},
		{"never falls back: helper error", []settings.Raw{raw(settings.Global, runUnconfined)},
			sandbox.Request{Platform: "linux", Availability: helper}, want{refused: sandbox.ReasonHelper}},
		{"never falls back: internal error", []settings.Raw{raw(settings.Global, runUnconfined)},
			sandbox.Request{Platform: "linux", Availability: internal}, want{refused: sandbox.ReasonInternal}},
		{"never falls back: a probe that gives no reason is an internal error", []settings.Raw{raw(settings.Global, runUnconfined)},
			sandbox.Request{Platform: "linux"}, want{refused: sandbox.ReasonInternal}},
		{"read-only + run-unconfined + no backend: shell not assembled, read-only never falls back",
			[]settings.Raw{raw(settings.Global, `{"mode": "read-only", "onUnavailable": "run-unconfined"}`)},
			sandbox.Request{Platform: "linux", Availability: noLauncher}, want{refused: sandbox.ReasonNoTrustedLauncher}},
		{"read-only agent with trusted run-unconfined never falls back", []settings.Raw{raw(settings.Global, runUnconfined)},
			sandbox.Request{Platform: "linux", ReadOnlyAgent: true, Availability: nsPolicy}, want{refused: sandbox.ReasonNamespacePolicy}},
		{"read-only + trusted backend native: runs natively, trusted_native, requestedMode read-only",
			[]settings.Raw{raw(settings.Global, `{"mode": "read-only", "backend": "native"}`)},
			sandbox.Request{Platform: "linux", Availability: noLauncher},
			want{kind: sandbox.KindTrustedNative, mode: "read-only", authority: "host", network: "deny", effNet: "host"}},
		{"backend native from the CLI layer (--sandbox-backend native) for a read-only agent", []settings.Raw{raw(settings.CLI, `{"backend": "native"}`)},
			sandbox.Request{Platform: "linux", ReadOnlyAgent: true},
			want{kind: sandbox.KindTrustedNative, mode: "read-only", authority: "host", network: "deny", effNet: "host"}},
		{"danger-full-access skips probing, host network, forces allow_all", []settings.Raw{raw(settings.CLI, `{"mode": "danger-full-access"}`)},
			sandbox.Request{Platform: "linux", Availability: noLauncher},
			want{kind: sandbox.KindFullAccess, mode: "danger-full-access", authority: "host", network: "host", effNet: "host", allowAll: true}},
		{"danger-full-access on macOS also runs natively with allow_all", []settings.Raw{raw(settings.Global, `{"mode": "danger-full-access"}`)},
			sandbox.Request{Platform: "darwin"},
			want{kind: sandbox.KindFullAccess, mode: "danger-full-access", authority: "host", network: "host", effNet: "host", allowAll: true}},
		{"macOS with nothing explicit: platform_native, permission mode untouched", nil,
			sandbox.Request{Platform: "darwin"},
			want{kind: sandbox.KindPlatformNative, mode: "workspace-write", authority: "host", network: "deny", effNet: "host"}},
		{"Windows read-only agent with nothing explicit: platform_native", nil,
			sandbox.Request{Platform: "windows", ReadOnlyAgent: true},
			want{kind: sandbox.KindPlatformNative, mode: "read-only", authority: "host", network: "deny", effNet: "host"}},
		{"macOS: an explicit backend auto is not overridden by the platform default", []settings.Raw{raw(settings.Global, `{"backend": "auto"}`)},
			sandbox.Request{Platform: "darwin"}, want{refused: sandbox.ReasonUnsupportedPlatform, fallback: true}},
		{"macOS: explicit onUnavailable deny (project may set deny) disables the platform default", []settings.Raw{raw(settings.Project, `{"onUnavailable": "deny"}`)},
			sandbox.Request{Platform: "darwin"}, want{refused: sandbox.ReasonUnsupportedPlatform, fallback: true}},
		{"macOS: explicit network deny disables the platform default", []settings.Raw{raw(settings.Project, `{"network": "deny"}`)},
			sandbox.Request{Platform: "darwin"}, want{refused: sandbox.ReasonUnsupportedPlatform, fallback: true}},
		{"macOS: explicit network allow keeps the platform default", []settings.Raw{raw(settings.Global, `{"network": "allow"}`)},
			sandbox.Request{Platform: "darwin"},
			want{kind: sandbox.KindPlatformNative, mode: "workspace-write", authority: "host", network: "allow", effNet: "host"}},
		{"Windows: non-empty protectedPaths disables the platform default", []settings.Raw{raw(settings.Project, `{"protectedPaths": [".git"]}`)},
			sandbox.Request{Platform: "windows"}, want{refused: sandbox.ReasonUnsupportedPlatform, fallback: true}},
		{"Windows: non-empty writableRoots disables the platform default", []settings.Raw{raw(settings.Global, `{"writableRoots": ["/srv/cache"]}`)},
			sandbox.Request{Platform: "windows"}, want{refused: sandbox.ReasonUnsupportedPlatform, fallback: true}},
		{"macOS read-only request under explicit auto: refused, never falls back", []settings.Raw{raw(settings.Global, `{"backend": "auto", "onUnavailable": "run-unconfined"}`)},
			sandbox.Request{Platform: "darwin", ReadOnlyAgent: true}, want{refused: sandbox.ReasonUnsupportedPlatform}},
		{"Linux default behaviour is unchanged: no platform default, confinement required", nil,
			sandbox.Request{Platform: "linux", ReadOnlyAgent: true, Availability: noLauncher}, want{refused: sandbox.ReasonNoTrustedLauncher}},
		{"managed policy has the final say: forces onUnavailable back to deny",
			[]settings.Raw{raw(settings.Global, runUnconfined), raw(settings.Managed, `{"onUnavailable": "deny"}`)},
			sandbox.Request{Platform: "linux", Availability: noLauncher}, want{refused: sandbox.ReasonNoTrustedLauncher, fallback: true}},
		{"a later layer wins per key, earlier keys survive",
			[]settings.Raw{raw(settings.Global, `{"mode": "read-only", "network": "allow"}`), raw(settings.CLI, `{"mode": "workspace-write"}`)},
			sandbox.Request{Platform: "linux", Availability: ready},
			want{kind: sandbox.KindConfined, mode: "workspace-write", authority: "workspace-write", network: "allow", effNet: "allow"}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			cfg, err := sandbox.Merge(row.layers)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			res, err := sandbox.Resolve(cfg, row.req)
			w := row.want
			if w.refused != "" {
				var r *sandbox.Refusal
				if !errors.As(err, &r) {
					t.Fatalf("want a refusal (%s), got %+v, %v", w.refused, res, err)
				}
				if r.Reason.Code != w.refused || r.FallbackApplies != w.fallback || domain.CodeOf(err) != sandbox.CodeUnavailable {
					t.Fatalf("refusal %s fallbackApplies=%v code=%s, want %s %v", r.Reason.Code, r.FallbackApplies, domain.CodeOf(err), w.refused, w.fallback)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if res.ResolutionKind != w.kind || res.RequestedMode != w.mode || res.EffectiveAuthority != w.authority ||
				res.Network != w.network || res.EffectiveNetwork != w.effNet || res.ForcesAllowAll != w.allowAll || (res.Warning != "") != w.warning {
				t.Fatalf("got %+v\nwant %+v", res, w)
			}
			if res.Enforced != (w.kind == sandbox.KindConfined) {
				t.Fatalf("enforced=%v for %s", res.Enforced, res.ResolutionKind)
			}
			if wantBackend := map[bool]string{true: "bubblewrap", false: "native"}[w.kind == sandbox.KindConfined]; res.Backend != wantBackend {
				t.Fatalf("backend %s, want %s", res.Backend, wantBackend)
			}
		})
	}
}

func TestNeedsProbe(t *testing.T) {
	for _, tc := range []struct {
		layers []settings.Raw
		req    sandbox.Request
		want   bool
	}{
		{nil, sandbox.Request{Platform: "linux"}, true},
		{[]settings.Raw{raw(settings.CLI, `{"mode": "danger-full-access"}`)}, sandbox.Request{Platform: "linux"}, false},
		{[]settings.Raw{raw(settings.Env, `{"backend": "native"}`)}, sandbox.Request{Platform: "linux", ReadOnlyAgent: true}, false},
		{nil, sandbox.Request{Platform: "darwin"}, false},
		{[]settings.Raw{raw(settings.Global, `{"backend": "auto"}`)}, sandbox.Request{Platform: "windows"}, false},
	} {
		cfg, err := sandbox.Merge(tc.layers)
		if err != nil {
			t.Fatal(err)
		}
		if got := sandbox.NeedsProbe(cfg, tc.req); got != tc.want {
			t.Errorf("NeedsProbe(%s, %+v) = %v, want %v", tc.layers, tc.req, got, tc.want)
		}
	}
}

func TestMergeRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layers []settings.Raw
		code   string
		field  string
	}{
		{"unknown mode", []settings.Raw{raw(settings.Global, `{"mode": "workspace_write"}`)}, domain.CodeInvalidArgument, "sandbox.mode"},
		{"unknown network", []settings.Raw{raw(settings.Global, `{"network": "none"}`)}, domain.CodeInvalidArgument, "sandbox.network"},
		{"unknown backend", []settings.Raw{raw(settings.Global, `{"backend": "bubblewrap"}`)}, domain.CodeInvalidArgument, "sandbox.backend"},
		{"unknown onUnavailable", []settings.Raw{raw(settings.Global, `{"onUnavailable": "allow"}`)}, domain.CodeInvalidArgument, "sandbox.onUnavailable"},
		{"case matters", []settings.Raw{raw(settings.Global, `{"mode": "Read-Only"}`)}, domain.CodeInvalidArgument, "sandbox.mode"},
		{"unknown key", []settings.Raw{raw(settings.Global, `{"modes": "read-only"}`)}, domain.CodeInvalidArgument, "sandbox"},
		{"not an object", []settings.Raw{raw(settings.Global, `"read-only"`)}, domain.CodeInvalidArgument, "sandbox"},
		{"wrong type", []settings.Raw{raw(settings.Global, `{"writableRoots": "/srv"}`)}, domain.CodeInvalidArgument, "sandbox"},
		{"danger-full-access with explicit network deny cannot be enforced",
			[]settings.Raw{raw(settings.Global, `{"mode": "danger-full-access", "network": "deny"}`)}, sandbox.CodeUnenforceable, "sandbox.network"},
		{"danger-full-access over a lower layer's network deny", []settings.Raw{raw(settings.Project, `{"network": "deny"}`),
			raw(settings.CLI, `{"mode": "danger-full-access"}`)}, sandbox.CodeUnenforceable, "sandbox.network"},
		{"project layer cannot enable run-unconfined", []settings.Raw{raw(settings.Project, runUnconfined)}, sandbox.CodeUntrustedLayer, "sandbox.onUnavailable"},
		{"project layer cannot select the native backend", []settings.Raw{raw(settings.Project, `{"backend": "native"}`)}, sandbox.CodeUntrustedLayer, "sandbox.backend"},
		{"project layer cannot select danger-full-access", []settings.Raw{raw(settings.Project, `{"mode": "danger-full-access"}`)}, sandbox.CodeUntrustedLayer, "sandbox.mode"},
		{"project layer cannot add writable roots", []settings.Raw{raw(settings.Project, `{"writableRoots": ["/home"]}`)}, sandbox.CodeUntrustedLayer, "sandbox.writableRoots"},
		{"agent contract cannot enable run-unconfined", []settings.Raw{raw(settings.Agent, runUnconfined)}, sandbox.CodeUntrustedLayer, "sandbox.onUnavailable"},
		{"project run-unconfined refused even when a later layer overrides it",
			[]settings.Raw{raw(settings.Project, runUnconfined), raw(settings.Managed, `{"onUnavailable": "deny"}`)}, sandbox.CodeUntrustedLayer, "sandbox.onUnavailable"},
		{"relative writable root", []settings.Raw{raw(settings.Global, `{"writableRoots": ["build"]}`)}, domain.CodeInvalidArgument, "sandbox.writableRoots[0]"},
		{"writable root /", []settings.Raw{raw(settings.Global, `{"writableRoots": ["/"]}`)}, domain.CodeInvalidArgument, "sandbox.writableRoots[0]"},
		{"writable root /./", []settings.Raw{raw(settings.Global, `{"writableRoots": ["/./"]}`)}, domain.CodeInvalidArgument, "sandbox.writableRoots[0]"},
		{"empty protected path", []settings.Raw{raw(settings.Project, `{"protectedPaths": [""]}`)}, domain.CodeInvalidArgument, "sandbox.protectedPaths[0]"},
		{"protected path escaping the workspace", []settings.Raw{raw(settings.Project, `{"protectedPaths": ["../x"]}`)}, domain.CodeInvalidArgument, "sandbox.protectedPaths[0]"},
		{"protected path . would protect nothing specific", []settings.Raw{raw(settings.Project, `{"protectedPaths": ["./"]}`)}, domain.CodeInvalidArgument, "sandbox.protectedPaths[0]"},
		{"protected path with NUL", []settings.Raw{raw(settings.Project, `{"protectedPaths": ["a\u0000b"]}`)}, domain.CodeInvalidArgument, "sandbox.protectedPaths[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sandbox.Merge(tc.layers)
			var e *domain.Error
			if !errors.As(err, &e) || e.Code() != tc.code || e.Field != tc.field {
				t.Fatalf("Merge: %v, want code %s field %s", err, tc.code, tc.field)
			}
			if e.Fix == "" {
				t.Fatalf("no fix in %v", err)
			}
		})
	}
}

func TestProjectMayTightenOnly(t *testing.T) {
	cfg, err := sandbox.Merge([]settings.Raw{raw(settings.Project, `{"mode": "read-only", "network": "deny", "onUnavailable": "deny", "backend": "auto", "protectedPaths": [".git", "secrets"]}`)})
	if err != nil {
		t.Fatalf("the project layer may set deny and constraints: %v", err)
	}
	if l, ok := cfg.SetBy(sandbox.KeyOnUnavailable); !ok || l != settings.Project {
		t.Fatalf("SetBy(onUnavailable) = %s %v", l, ok)
	}
}

func TestMayAskNative(t *testing.T) {
	for _, tc := range []struct {
		js   string
		want bool
	}{
		{``, true},
		{`{"mode": "read-only"}`, true},
		{`{"network": "allow"}`, true},
		{`{"network": "deny"}`, false},
		{`{"onUnavailable": "deny"}`, false},
		{`{"backend": "auto"}`, false},
		{`{"protectedPaths": [".git"]}`, false},
		{`{"writableRoots": ["/srv"]}`, false},
	} {
		var layers []settings.Raw
		if tc.js != "" {
			layers = []settings.Raw{raw(settings.Global, tc.js)}
		}
		cfg, err := sandbox.Merge(layers)
		if err != nil {
			t.Fatal(err)
		}
		if got := sandbox.MayAskNative(cfg); got != tc.want {
			t.Errorf("MayAskNative(%s) = %v, want %v", tc.js, got, tc.want)
		}
		res, rerr := sandbox.Resolve(cfg, sandbox.Request{Platform: "linux", Availability: noLauncher})
		var r *sandbox.Refusal
		if errors.As(rerr, &r) && r.Askable != tc.want {
			t.Errorf("%s: Refusal.Askable = %v, want %v", tc.js, r.Askable, tc.want)
		} else if rerr == nil && tc.js != `{"writableRoots": ["/srv"]}` {
			t.Errorf("%s: resolved %+v, want a refusal", tc.js, res)
		}
	}
	// Answering yes is exactly --sandbox-backend native: trusted_native, even for a
	// read-only agent later.
	cfg, _ := sandbox.Merge(nil)
	res, err := sandbox.Resolve(cfg.WithBackendNative(), sandbox.Request{Platform: "linux", ReadOnlyAgent: true, Availability: noLauncher})
	if err != nil || res.ResolutionKind != sandbox.KindTrustedNative || res.RequestedMode != "read-only" {
		t.Fatalf("after yes: %+v, %v", res, err)
	}
	if cfg.Explicit(sandbox.KeyBackend) {
		t.Fatal("WithBackendNative changed the original config")
	}
}

func TestResolutionJSON(t *testing.T) {
	cfg, _ := sandbox.Merge([]settings.Raw{raw(settings.Global, `{"mode": "read-only", "backend": "native"}`)})
	res, _ := sandbox.Resolve(cfg, sandbox.Request{Platform: "linux"})
	b, _ := json.Marshal(res)
	for _, s := range []string{`"resolutionKind":"trusted_native"`, `"requestedMode":"read-only"`, `"effectiveAuthority":"host"`, `"forcesAllowAll":false`, `"reason":{"code":"native_backend_selected"`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("%s lacks %s", b, s)
		}
	}
}
