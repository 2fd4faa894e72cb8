// Package netguard decides which network addresses and URLs webfetch may reach (docs/web.md,
// "The address guard"; seeds 000: webfetch). It is pure: it parses and classifies, it never
// dials. The fetcher (package fetch) resolves a host through a Resolver, hands every answer to
// CheckAnswers, and dials only the addresses that came back allowed.
package netguard

import (
	"net/netip"
)

// Reason says why an address is refused. The values are stable: they are recorded in a
// webfetch result's details and named in its refusal.
type Reason string

// The reasons an address is refused, each a range of the IANA special-purpose registries (or
// a cloud metadata address) that a fetch on the model's behalf must never reach.
const (
	ReasonUnspecified   Reason = "unspecified"    // 0.0.0.0/8, ::/128
	ReasonLoopback      Reason = "loopback"       // 127.0.0.0/8, ::1
	ReasonPrivate       Reason = "private"        // 10/8, 172.16/12, 192.168/16
	ReasonLinkLocal     Reason = "link_local"     // 169.254/16, fe80::/10
	ReasonMetadata      Reason = "metadata"       // 169.254.169.254, fd00:ec2::254, 100.100.100.200
	ReasonCGNAT         Reason = "cgnat"          // 100.64/10 (shared address space)
	ReasonMulticast     Reason = "multicast"      // 224/4, ff00::/8
	ReasonBroadcast     Reason = "broadcast"      // 255.255.255.255
	ReasonReserved      Reason = "reserved"       // 240/4, IETF assignments, benchmarking, 6to4 relay, IPv6 outside 2000::/3
	ReasonDocumentation Reason = "documentation"  // 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20
	ReasonUniqueLocal   Reason = "unique_local"   // fc00::/7
	ReasonSiteLocal     Reason = "site_local"     // fec0::/10 (deprecated)
	ReasonIPv4Mapped    Reason = "ipv4_mapped"    // ::ffff:0:0/96
	ReasonIPv4Embedded  Reason = "ipv4_embedded"  // ::/96 (IPv4-compatible), 2002::/16 (6to4), Teredo, NAT64 local-use
	ReasonZone          Reason = "zone"           // an IPv6 address with a zone (fe80::1%eth0)
	ReasonInvalid       Reason = "invalid"        // not an address
	ReasonNAT64Embedded Reason = "nat64_embedded" // 64:ff9b::/96 whose embedded IPv4 address is refused
)

// rule is one refused range.
type rule struct {
	prefix netip.Prefix
	reason Reason
}

func p(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// metadata are the cloud instance-metadata endpoints: named apart from their range so a
// refusal says what was being reached.
var metadata = map[netip.Addr]bool{
	netip.MustParseAddr("169.254.169.254"): true, // AWS, GCP, Azure, OpenStack, ...
	netip.MustParseAddr("fd00:ec2::254"):   true, // AWS over IPv6
	netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
	netip.MustParseAddr("169.254.170.2"):   true, // AWS ECS task metadata
}

// v4Rules are the refused IPv4 ranges (IANA IPv4 Special-Purpose Address Registry, every
// entry not "globally reachable", plus multicast and the reserved 240/4).
var v4Rules = []rule{
	{p("0.0.0.0/8"), ReasonUnspecified},
	{p("10.0.0.0/8"), ReasonPrivate},
	{p("100.64.0.0/10"), ReasonCGNAT},
	{p("127.0.0.0/8"), ReasonLoopback},
	{p("169.254.0.0/16"), ReasonLinkLocal},
	{p("172.16.0.0/12"), ReasonPrivate},
	{p("192.0.0.0/24"), ReasonReserved},
	{p("192.0.2.0/24"), ReasonDocumentation},
	{p("192.88.99.0/24"), ReasonReserved},
	{p("192.168.0.0/16"), ReasonPrivate},
	{p("198.18.0.0/15"), ReasonReserved},
	{p("198.51.100.0/24"), ReasonDocumentation},
	{p("203.0.113.0/24"), ReasonDocumentation},
	{p("224.0.0.0/4"), ReasonMulticast},
	{p("255.255.255.255/32"), ReasonBroadcast},
	{p("240.0.0.0/4"), ReasonReserved},
}

// v6Rules are the refused IPv6 ranges, checked in order (the first match names the reason).
// Anything outside 2000::/3 (global unicast) is refused as well, after these.
var v6Rules = []rule{
	{p("::/128"), ReasonUnspecified},
	{p("::1/128"), ReasonLoopback},
	{p("::ffff:0:0/96"), ReasonIPv4Mapped},
	{p("::/96"), ReasonIPv4Embedded},
	{p("64:ff9b:1::/48"), ReasonIPv4Embedded},
	{p("100::/64"), ReasonReserved},
	{p("2001:db8::/32"), ReasonDocumentation},
	{p("2001::/32"), ReasonIPv4Embedded}, // Teredo
	{p("2001::/23"), ReasonReserved},
	{p("2002::/16"), ReasonIPv4Embedded}, // 6to4
	{p("3fff::/20"), ReasonDocumentation},
	{p("5f00::/16"), ReasonReserved},
	{p("fc00::/7"), ReasonUniqueLocal},
	{p("fe80::/10"), ReasonLinkLocal},
	{p("fec0::/10"), ReasonSiteLocal},
	{p("ff00::/8"), ReasonMulticast},
}

var (
	globalUnicast6 = p("2000::/3")
	nat64          = p("64:ff9b::/96")
)

// Classify says whether a may be reached: "" when it is a public unicast address, else the
// reason it is refused. An IPv4-mapped IPv6 address is refused as such, never unmapped and
// judged as IPv4, so no spelling of an address reaches a range its plain spelling cannot.
func Classify(a netip.Addr) Reason {
	switch {
	case !a.IsValid():
		return ReasonInvalid
	case a.Zone() != "":
		return ReasonZone
	case metadata[a]:
		return ReasonMetadata
	case a.Is4():
		return classify4(a)
	}
	for _, r := range v6Rules {
		if r.prefix.Contains(a) {
			return r.reason
		}
	}
	if nat64.Contains(a) {
		b := a.As16()
		v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		if classify4(v4) != "" {
			return ReasonNAT64Embedded
		}
		return ""
	}
	if !globalUnicast6.Contains(a) {
		return ReasonReserved
	}
	return ""
}

func classify4(a netip.Addr) Reason {
	if metadata[a] {
		return ReasonMetadata
	}
	for _, r := range v4Rules {
		if r.prefix.Contains(a) {
			return r.reason
		}
	}
	return ""
}
