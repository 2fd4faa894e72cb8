package netguard

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/idna"

	"github.com/zuno-run/zuno/domain"
)

// Stable error codes of the guard (docs/web.md, "Refusals").
const (
	// CodeURLInvalid: the URL does not parse, has no host, or its host is neither a valid
	// domain name nor an IP address (a numeric host that is not a valid IPv4 address).
	CodeURLInvalid = "url_invalid"
	// CodeURLScheme: a scheme other than http or https.
	CodeURLScheme = "url_scheme"
	// CodeURLCredentials: the URL carries a user name or password (user:pass@host).
	CodeURLCredentials = "url_credentials"
	// CodeAddressRefused: an address the host is or resolves to is not a public unicast
	// address (loopback, private, link-local, metadata, ...). When a name resolves to several
	// addresses and any one is refused, the whole answer is refused.
	CodeAddressRefused = "address_refused"
)

// maxURLBytes bounds what is parsed: a URL longer than this is refused before parsing.
const maxURLBytes = 8192

// Target is a URL the guard accepted, in its one canonical spelling.
type Target struct {
	// URL is the request URL: scheme and host lower-cased, the host in ASCII (IDNA), an IPv4
	// host in dotted decimal whatever spelling it was given in, no user info, no fragment.
	URL *url.URL
	// Host is the host without port or brackets: a domain name or an IP address.
	Host string
	// Addr is the host as an address when it is an IP literal; invalid for a domain name.
	Addr netip.Addr
	// Port is the port to connect to (the scheme's default when the URL names none).
	Port uint16
}

// Literal reports whether the host is an IP address (nothing to resolve).
func (t Target) Literal() bool { return t.Addr.IsValid() }

// HostPort is host:port as the Host header and TLS name are derived from it.
func (t Target) HostPort() string { return net.JoinHostPort(t.Host, strconv.Itoa(int(t.Port))) }

func refuse(code, message, fix string) *domain.Error { return domain.NewError(code, message, fix) }

// Parse checks raw as a webfetch target: http or https, no credentials, a host that is a
// valid domain name or IP address, a port in 1..65535. An IP host, in any spelling a resolver
// would accept (2130706433, 0177.0.0.1, 0x7f.1, [::ffff:127.0.0.1]), is read as that address
// and must be public; a domain name's addresses are checked when it is resolved
// (CheckAnswers). The error is a *domain.Error with a stable code.
func Parse(raw string) (Target, error) {
	if len(raw) > maxURLBytes {
		return Target{}, refuse(CodeURLInvalid, fmt.Sprintf("the URL is %d bytes, over %d", len(raw), maxURLBytes), "fetch a shorter URL")
	}
	if strings.ContainsAny(raw, "\\\x00\r\n\t ") {
		return Target{}, refuse(CodeURLInvalid, "the URL contains a backslash, a control character or a space",
			"percent-encode the URL (a space is %20) and use forward slashes")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Target{}, refuse(CodeURLInvalid, "the URL does not parse: "+strings.TrimPrefix(err.Error(), "parse "), "send an absolute http(s) URL such as https://example.com/page")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return Target{}, refuse(CodeURLScheme, fmt.Sprintf("scheme %q is not http or https", u.Scheme), "fetch an http:// or https:// URL")
	}
	if u.User != nil || strings.Contains(u.Host, "@") {
		return Target{}, refuse(CodeURLCredentials, "the URL carries credentials (user info before @)",
			"remove the user name and password from the URL; webfetch never sends credentials")
	}
	if u.Opaque != "" || u.Host == "" {
		return Target{}, refuse(CodeURLInvalid, "the URL has no host", "send an absolute URL such as https://example.com/page")
	}
	t, err := parseHost(u)
	if err != nil {
		return Target{}, err
	}
	t.URL = canonical(u, scheme, t)
	if n := len(t.URL.String()); n > maxURLBytes { // escaping can lengthen it
		return Target{}, refuse(CodeURLInvalid, fmt.Sprintf("the URL is %d bytes once escaped, over %d", n, maxURLBytes), "fetch a shorter URL")
	}
	if t.Literal() {
		if r := Classify(t.Addr); r != "" {
			return Target{}, Refused(t.Host, t.Addr, r)
		}
	}
	return t, nil
}

// parseHost reads the host and port of u.
func parseHost(u *url.URL) (Target, error) {
	var t Target
	port, err := parsePort(u)
	if err != nil {
		return t, err
	}
	t.Port = port
	host := u.Hostname()
	if strings.HasPrefix(u.Host, "[") {
		a, err := netip.ParseAddr(host)
		if err != nil {
			return t, refuse(CodeURLInvalid, fmt.Sprintf("host [%s] is not an IPv6 address", host), "write an IPv6 host as [2001:db8::1]")
		}
		t.Addr, t.Host = a, a.String()
		return t, nil
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if a, ok, err := parseIPv4(host); err != nil {
		return t, err
	} else if ok {
		t.Addr, t.Host = a, a.String()
		return t, nil
	}
	ascii, err := idna.Lookup.ToASCII(host)
	if err != nil || ascii == "" || len(ascii) > 253 || slices.Contains(strings.Split(ascii, "."), "") {
		return t, refuse(CodeURLInvalid, fmt.Sprintf("host %q is not a valid domain name", u.Hostname()), "send a URL whose host is a domain name or an IP address")
	}
	// IDNA maps some characters to digits and dots (³ is 3, a fullwidth ． is .): a name that
	// becomes numeric is read as the address it now spells, like any other spelling.
	if a, ok, err := parseIPv4(ascii); err != nil {
		return t, err
	} else if ok {
		t.Addr, t.Host = a, a.String()
		return t, nil
	}
	if ascii == "localhost" || strings.HasSuffix(ascii, ".localhost") {
		return t, refuse(CodeAddressRefused, fmt.Sprintf("host %q names this machine (loopback)", ascii),
			"webfetch reaches public addresses only; read local files with read, or run a command with shell")
	}
	t.Host = ascii
	return t, nil
}

func parsePort(u *url.URL) (uint16, error) {
	s := u.Port()
	if s == "" {
		if strings.EqualFold(u.Scheme, "https") {
			return 443, nil
		}
		return 80, nil
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return 0, refuse(CodeURLInvalid, fmt.Sprintf("port %q is not in 1..65535", s), "send a port from 1 to 65535, or leave it out")
	}
	return uint16(n), nil
}

// parseIPv4 reads host as an IPv4 address when its last label is numeric, as browsers and the
// C resolver do: one to four parts, each decimal, octal (leading 0) or hexadecimal (0x), the
// last part filling the remaining bytes. So 2130706433, 0177.0.0.1, 0x7f.1 and 127.1 are all
// 127.0.0.1. ok is false for a host whose last label is not numeric (a domain name); a numeric
// host that is not a valid address is an error, never handed to a resolver to interpret.
func parseIPv4(host string) (netip.Addr, bool, error) {
	labels := strings.Split(host, ".")
	if !numeric(labels[len(labels)-1]) {
		return netip.Addr{}, false, nil
	}
	bad := refuse(CodeURLInvalid, fmt.Sprintf("host %q looks like an IPv4 address but is not one", host),
		"write an IPv4 address as four decimal numbers (93.184.215.14), or use a domain name")
	if len(labels) > 4 {
		return netip.Addr{}, true, bad
	}
	var parts []uint64
	for _, l := range labels {
		n, ok := number(l)
		if !ok {
			return netip.Addr{}, true, bad
		}
		parts = append(parts, n)
	}
	var v uint64
	for i, n := range parts[:len(parts)-1] {
		if n > 255 {
			return netip.Addr{}, true, bad
		}
		v |= n << (8 * (3 - i))
	}
	last := parts[len(parts)-1]
	if last >= 1<<(8*(5-len(parts))) {
		return netip.Addr{}, true, bad
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true, nil
}

// numeric reports whether a label is a number in the IPv4 sense (so the host is an address).
func numeric(l string) bool {
	if l == "" {
		return false
	}
	if strings.HasPrefix(l, "0x") {
		return strings.Trim(l[2:], "0123456789abcdef") == ""
	}
	return strings.Trim(l, "0123456789") == ""
}

// number reads one part: 0x hex, leading-0 octal, or decimal. Parts larger than 32 bits fail.
func number(l string) (uint64, bool) {
	base := 10
	switch {
	case l == "":
		return 0, false
	case strings.HasPrefix(l, "0x"):
		l, base = l[2:], 16
		if l == "" {
			return 0, true
		}
	case len(l) > 1 && l[0] == '0':
		l, base = l[1:], 8
	}
	n, err := strconv.ParseUint(l, base, 32)
	return n, err == nil
}

// canonical is u as it will be requested.
func canonical(u *url.URL, scheme string, t Target) *url.URL {
	c := *u
	c.Scheme, c.User, c.Fragment, c.RawFragment = scheme, nil, "", ""
	host := t.Host
	if t.Addr.Is6() {
		host = "[" + host + "]"
	}
	if (scheme == "http" && t.Port != 80) || (scheme == "https" && t.Port != 443) {
		host = net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(int(t.Port)))
	}
	c.Host = host
	if c.Path == "" && c.RawPath == "" {
		c.Path = "/"
	}
	return &c
}

// Refused is the refusal of one address.
func Refused(host string, a netip.Addr, r Reason) *domain.Error {
	what := a.String()
	if host != what {
		what = fmt.Sprintf("%s (%s)", host, a)
	}
	e := refuse(CodeAddressRefused, fmt.Sprintf("%s is a %s address, which webfetch does not reach", what, describe(r)),
		"webfetch reaches public addresses only; nothing was sent to this address")
	e.ID = string(r)
	return e
}

func describe(r Reason) string {
	return strings.ReplaceAll(string(r), "_", "-")
}

// CheckAnswers judges every address a host resolved to. It returns them when all are public;
// when any is refused the whole answer is refused (a name that resolves to both public and
// private addresses is refused, never narrowed to its public part), naming each refused one.
func CheckAnswers(host string, addrs []netip.Addr) ([]netip.Addr, error) {
	if len(addrs) == 0 {
		return nil, refuse(CodeAddressRefused, fmt.Sprintf("%s resolved to no address", host), "check the host name")
	}
	var bad []string
	var first Reason
	for _, a := range addrs {
		if r := Classify(a); r != "" {
			if first == "" {
				first = r
			}
			bad = append(bad, fmt.Sprintf("%s (%s)", a, describe(r)))
		}
	}
	if len(bad) == 0 {
		return addrs, nil
	}
	msg := fmt.Sprintf("%s resolves to refused addresses: %s", host, strings.Join(bad, ", "))
	if len(bad) < len(addrs) {
		msg = fmt.Sprintf("%s resolves to public and refused addresses together (%d of %d refused: %s); the whole answer is refused",
			host, len(bad), len(addrs), strings.Join(bad, ", "))
	}
	e := refuse(CodeAddressRefused, msg, "webfetch reaches public addresses only; nothing was sent to this host")
	e.ID = string(first)
	return nil, e
}
