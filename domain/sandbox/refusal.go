package sandbox

import (
	"fmt"
	"strings"
)

// Refusal is a resolution that refuses to assemble the shell: the requested confinement is
// unavailable and nothing allows host execution. Its message is written for a person to act
// on (docs/sandbox.md "The refusal"): the typed reason first, whether the trusted
// run-unconfined fallback applies to this request, each remedy with the layers that may set
// it, and that none of them is sandbox isolation.
type Refusal struct {
	Reason        Reason `json:"reason"`
	RequestedMode string `json:"requestedMode"`
	Platform      string `json:"platform"`
	// FallbackApplies: run-unconfined would have applied to this request (write-capable
	// workspace-write, eligible reason).
	FallbackApplies bool   `json:"fallbackApplies"`
	OnUnavailable   string `json:"onUnavailable,omitempty"`
	// Askable: no layer constrained the sandbox explicitly, so an interactive terminal may
	// ask "run natively?" (answering yes is Config.WithBackendNative).
	Askable bool `json:"askable"`
}

// Code is CodeUnavailable.
func (r *Refusal) Code() string { return CodeUnavailable }

const trustedLayers = "in a trusted layer (global, managed, env, CLI)"

func (r *Refusal) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, so the Shell tool cannot be registered under the requested `%s` authority.\n", r.Reason.Text, r.RequestedMode)
	switch {
	case r.RequestedMode == ModeReadOnly:
		b.WriteString("Read-only requests never fall back to host execution: run-unconfined does not apply to this request.\n")
	case r.FallbackApplies:
		onu := r.OnUnavailable
		if onu == "" {
			onu = OnUnavailableDeny
		}
		fmt.Fprintf(&b, "The trusted run-unconfined fallback applies to this request (a write-capable workspace-write request, and %s is an eligible unavailable reason), but sandbox.onUnavailable is %q.\n", r.Reason.Code, onu)
	default:
		fmt.Fprintf(&b, "run-unconfined does not apply to this request: %s never falls back (a present but untrusted launcher, invalid configuration or paths, and seccomp, helper or internal errors fail closed).\n", r.Reason.Code)
	}
	b.WriteString("Remedies:\n")
	if r.FallbackApplies {
		b.WriteString("  - fall back to host execution only when the sandbox is unavailable: --sandbox-on-unavailable run-unconfined, " +
			"ZUNO_SANDBOX_ON_UNAVAILABLE=run-unconfined, or \"sandbox\": {\"onUnavailable\": \"run-unconfined\"} " + trustedLayers +
			"; the project layer cannot enable it.\n")
	}
	fmt.Fprintf(&b, "  - run this agent's Shell natively while keeping your permission mode: --sandbox-backend native, ZUNO_SANDBOX_BACKEND=native, "+
		"or \"sandbox\": {\"backend\": \"native\"} %s; the project layer cannot select it. The requested `%s` authority is then recorded "+
		"but not enforced by the OS: the agent's tool contract, your permission rules and the shell risk gate remain, a role boundary, not an OS boundary.\n",
		trustedLayers, r.RequestedMode)
	if r.RequestedMode == ModeWorkspaceWrite {
		b.WriteString("  - --sandbox danger-full-access (or \"sandbox\": {\"mode\": \"danger-full-access\"} " + trustedLayers +
			") also runs natively, and additionally sets the effective permission mode to allow_all.\n")
	}
	b.WriteString("None of these remedies is sandbox isolation: each runs commands with the Zuno process user's host authority.")
	if r.Platform == "linux" {
		b.WriteString("\nTo be confined instead: install bubblewrap 0.8.0 or newer as a root-owned system executable (/usr/bin/bwrap) " +
			"where user namespaces are allowed; `zuno debug sandbox` checks both.")
	}
	return b.String()
}
