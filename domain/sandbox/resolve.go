package sandbox

import (
	"fmt"
	"strings"
)

// ReasonCode is the typed reason of a resolution or of the backend probe's answer.
type ReasonCode string

// Reasons a resolution was chosen.
const (
	ReasonConfinedReady   ReasonCode = "confined_backend_ready"
	ReasonPlatformDefault ReasonCode = "platform_default"
	ReasonNativeBackend   ReasonCode = "native_backend_selected"
	ReasonFullAccess      ReasonCode = "danger_full_access"
)

// Reasons the confined backend is unavailable. The first four are eligible for the trusted
// run-unconfined fallback; the rest never are (docs/sandbox.md "Fail closed").
const (
	ReasonUnsupportedPlatform       ReasonCode = "unsupported_platform"
	ReasonNoTrustedLauncher         ReasonCode = "no_trusted_launcher"
	ReasonLauncherMissingCapability ReasonCode = "launcher_missing_capability"
	ReasonNamespacePolicy           ReasonCode = "namespace_policy"

	ReasonUntrustedLauncher ReasonCode = "untrusted_launcher"
	ReasonInvalidConfig     ReasonCode = "invalid_config"
	ReasonSeccomp           ReasonCode = "seccomp_error"
	ReasonHelper            ReasonCode = "helper_error"
	ReasonInternal          ReasonCode = "internal_error"
)

// FallbackEligible reports whether an unavailable reason may lead to the trusted
// run-unconfined fallback: an unsupported platform, no trusted launcher, a launcher missing a
// capability, or a namespace/container policy. Everything else (a present but untrusted
// launcher, invalid config or paths, seccomp, helper and internal errors, and any reason
// this build does not know) fails closed.
func (c ReasonCode) FallbackEligible() bool {
	switch c {
	case ReasonUnsupportedPlatform, ReasonNoTrustedLauncher, ReasonLauncherMissingCapability, ReasonNamespacePolicy:
		return true
	}
	return false
}

// Reason is a typed code and the sentence a person reads.
type Reason struct {
	Code ReasonCode `json:"code"`
	Text string     `json:"text"`
}

// Availability is the backend probe's typed answer (adapters/sandbox computes it).
type Availability struct {
	Ready bool `json:"ready"`
	// Reason says why not, when not Ready.
	Reason Reason `json:"reason"`
}

// Kind is how a resolution runs commands (resolutionKind).
type Kind string

const (
	KindConfined       Kind = "confined"
	KindPlatformNative Kind = "platform_native"
	KindTrustedNative  Kind = "trusted_native"
	KindFallback       Kind = "fallback"
	KindFullAccess     Kind = "full_access"
)

// AuthorityHost is the effective authority of every native kind: the Zuno process user's.
const AuthorityHost = "host"

// Request is what Resolve needs besides the config.
type Request struct {
	// ReadOnlyAgent: the agent's contract is read-only; it narrows the mode to read-only and
	// never falls back.
	ReadOnlyAgent bool
	// Platform is runtime.GOOS ("linux", "darwin", "windows", ...).
	Platform string
	// Availability is the confined backend's probe result. It is read only when NeedsProbe
	// says so; the caller need not probe otherwise.
	Availability Availability
}

// Resolution is the recorded answer: what was asked, what is in force, and why.
type Resolution struct {
	RequestedMode string `json:"requestedMode"`
	// Network is the requested network policy (deny or allow; host for danger-full-access).
	Network string `json:"network"`
	// EffectiveNetwork is what is in force: the requested policy when confined, else host.
	EffectiveNetwork string `json:"effectiveNetwork"`
	// EffectiveAuthority is the OS authority commands run with: the requested mode when
	// confined, "host" otherwise.
	EffectiveAuthority string `json:"effectiveAuthority"`
	ResolutionKind     Kind   `json:"resolutionKind"`
	Reason             Reason `json:"reason"`
	// Backend is "bubblewrap" (confined) or "native".
	Backend string `json:"backend"`
	// Enforced says the OS enforces the requested contract (only when confined).
	Enforced bool `json:"enforced"`
	// ForcesAllowAll: danger-full-access sets the effective permission mode to allow_all (the
	// permission package applies it).
	ForcesAllowAll bool `json:"forcesAllowAll"`
	// Warning is the host warning printed once when the fallback is active.
	Warning string `json:"warning,omitempty"`
	// WritableRoots and ProtectedPaths are the requested policy: enforced when confined,
	// recorded for diagnostics otherwise.
	WritableRoots  []string `json:"writableRoots,omitempty"`
	ProtectedPaths []string `json:"protectedPaths,omitempty"`
}

// PlatformName is how a GOOS value is named to people (darwin is "macos").
func PlatformName(goos string) string {
	if goos == "darwin" {
		return "macos"
	}
	return goos
}

// requestedMode is the mode the agent asks for: the configured one (workspace-write when
// unset), narrowed to read-only by a read-only contract.
func requestedMode(cfg Config, req Request) string {
	mode := cfg.Mode
	if mode == "" {
		mode = ModeWorkspaceWrite
	}
	if req.ReadOnlyAgent && mode != ModeDangerFullAccess {
		mode = ModeReadOnly
	}
	return mode
}

// MayAskNative reports whether the interactive "run natively?" question may be asked when
// the confined backend is unavailable on Linux: only when no layer set onUnavailable, backend,
// a network deny, or a path constraint. The terminal checks are the caller's.
func MayAskNative(cfg Config) bool {
	return !cfg.Explicit(KeyOnUnavailable) && !cfg.Explicit(KeyBackend) &&
		!(cfg.Explicit(KeyNetwork) && cfg.Network == NetworkDeny) &&
		len(cfg.WritableRoots) == 0 && len(cfg.ProtectedPaths) == 0
}

// platformDefaultNative: Windows and macOS run natively when nothing explicit constrains
// the sandbox (no backend, onUnavailable, network deny, writableRoots or protectedPaths).
func platformDefaultNative(cfg Config, platform string) bool {
	return (platform == "darwin" || platform == "windows") && MayAskNative(cfg)
}

// NeedsProbe reports whether Resolve will read req.Availability: only when the confined
// backend is requested on Linux. danger-full-access, the native backend and the platform
// default skip probing, and other platforms have no backend to probe.
func NeedsProbe(cfg Config, req Request) bool {
	if requestedMode(cfg, req) == ModeDangerFullAccess || cfg.Backend == BackendNative {
		return false
	}
	return req.Platform == "linux"
}

// Resolve decides how the shell runs. cfg must come from Merge (it is validated again). A
// refusal is a *Refusal: the shell is not assembled and nothing runs.
func Resolve(cfg Config, req Request) (Resolution, error) {
	if err := cfg.Validate(); err != nil {
		return Resolution{}, err
	}
	mode := requestedMode(cfg, req)
	res := Resolution{RequestedMode: mode, Network: cfg.Network, Backend: BackendNative,
		EffectiveAuthority: AuthorityHost, EffectiveNetwork: NetworkHost,
		WritableRoots: cfg.WritableRoots, ProtectedPaths: cfg.ProtectedPaths}
	if res.Network == "" {
		res.Network = NetworkDeny
	}
	switch {
	case mode == ModeDangerFullAccess:
		res.Network = NetworkHost
		res.ResolutionKind, res.ForcesAllowAll = KindFullAccess, true
		res.Reason = Reason{ReasonFullAccess, "danger-full-access skips sandbox probing: commands run natively with the host's filesystem, processes and network, and the effective permission mode is allow_all"}
		return res, nil
	case cfg.Backend == BackendNative:
		res.ResolutionKind = KindTrustedNative
		res.Reason = Reason{ReasonNativeBackend, fmt.Sprintf("the trusted native backend was selected: the requested %s contract is recorded but not enforced by the OS; the tool contract, permission rules and shell risk gate remain", mode)}
		return res, nil
	case platformDefaultNative(cfg, req.Platform):
		res.ResolutionKind = KindPlatformNative
		res.Reason = Reason{ReasonPlatformDefault, fmt.Sprintf("%s has no confined sandbox backend and nothing explicit asks for one: commands run natively by platform default; the requested %s contract is recorded but not enforced by the OS", PlatformName(req.Platform), mode)}
		return res, nil
	}
	avail := req.Availability
	if req.Platform != "linux" {
		p := PlatformName(req.Platform)
		avail = Availability{Reason: Reason{ReasonUnsupportedPlatform,
			fmt.Sprintf("OS sandbox is not implemented for platform `%s`: %s has no confined sandbox backend", p, p)}}
	}
	if avail.Ready {
		res.ResolutionKind, res.Backend, res.Enforced = KindConfined, BackendBubblewrap, true
		res.EffectiveAuthority, res.EffectiveNetwork = mode, res.Network
		res.Reason = Reason{ReasonConfinedReady, "the confined backend (bubblewrap) is verified and enforces the requested mode"}
		return res, nil
	}
	if avail.Reason.Code == "" {
		avail.Reason = Reason{ReasonInternal, "the sandbox probe gave no reason for being unavailable"}
	}
	applies := fallbackApplies(mode, req, avail.Reason.Code)
	if applies && cfg.OnUnavailable == OnUnavailableRunUnconfined {
		res.ResolutionKind, res.Reason = KindFallback, avail.Reason
		res.Warning = fallbackWarning(res)
		return res, nil
	}
	return Resolution{}, &Refusal{Reason: avail.Reason, RequestedMode: mode, Platform: req.Platform,
		FallbackApplies: applies, OnUnavailable: cfg.OnUnavailable,
		Askable: req.Platform == "linux" && MayAskNative(cfg)}
}

// fallbackApplies: only a write-capable agent's workspace-write request, and only for an
// eligible unavailable reason. A read-only request never falls back.
func fallbackApplies(mode string, req Request, code ReasonCode) bool {
	return mode == ModeWorkspaceWrite && !req.ReadOnlyAgent && code.FallbackEligible()
}

func fallbackWarning(res Resolution) string {
	var b strings.Builder
	fmt.Fprintf(&b, "warning: the sandbox is unavailable (%s: %s); run-unconfined is set, so shell commands run natively with the Zuno user's host authority. ",
		res.Reason.Code, res.Reason.Text)
	fmt.Fprintf(&b, "The requested %s mode, network %q", res.RequestedMode, res.Network)
	if len(res.WritableRoots) > 0 || len(res.ProtectedPaths) > 0 {
		b.WriteString(", writable roots and protected paths")
	}
	b.WriteString(" are recorded but NOT enforced: this is not sandbox isolation. The permission mode, explicit denies, catastrophic-command denial, timeouts and cancellation still apply.")
	return b.String()
}
