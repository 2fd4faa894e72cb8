package web

import (
	"fmt"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/sandbox"
)

// CodeNetworkDenied: the sandbox's network policy is deny, so the web tools reach nothing.
const CodeNetworkDenied = "sandbox_network_denied"

// Network is the sandbox's network decision for the web tools, recorded on every call.
type Network struct {
	// Allowed says whether the tools may reach the network at all.
	Allowed bool `json:"allowed"`
	// Policy is the requested policy (deny, allow, or host under danger-full-access) and
	// Mode the sandbox mode it came with.
	Policy string `json:"policy"`
	Mode   string `json:"mode"`
}

// NetworkOf reads the sandbox configuration (docs/sandbox.md): danger-full-access has the
// host's network; otherwise the network is allowed only when sandbox.network is allow (the
// default is deny, and the project layer cannot set allow on its own). The requested deny
// binds the web tools even where the shell's backend could not enforce it (the native
// backend, the fallback): the fetch runs in Zuno's own process, which can honour it.
func NetworkOf(cfg sandbox.Config) Network {
	mode := cfg.Mode
	if mode == "" {
		mode = sandbox.ModeWorkspaceWrite
	}
	switch {
	case mode == sandbox.ModeDangerFullAccess:
		return Network{Allowed: true, Policy: sandbox.NetworkHost, Mode: mode}
	case cfg.Network == sandbox.NetworkAllow:
		return Network{Allowed: true, Policy: sandbox.NetworkAllow, Mode: mode}
	}
	return Network{Policy: sandbox.NetworkDeny, Mode: mode}
}

func (n Network) refusal() *domain.Error {
	return domain.NewError(CodeNetworkDenied,
		fmt.Sprintf("the sandbox denies the network (mode %s, network %s), so nothing was fetched or searched", n.Mode, n.Policy),
		`set "sandbox": {"network": "allow"} in a trusted configuration layer (global, --config, managed) to let the web tools reach public addresses`)
}
