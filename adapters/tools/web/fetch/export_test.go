package fetch

import (
	"crypto/x509"
	"net/netip"
)

// NewForTest is New with the two things only this package's tests may set: translate, the
// map from a validated "public" address to the loopback server that plays it (an address not
// in the map is sent to 127.0.0.1:1, where nothing listens, so the test fails closed), and
// the roots the test servers' certificates chain to. Being in a _test.go file of this package,
// neither is reachable from production code or configuration.
func NewForTest(r Resolver, getenv func(string) string, translate map[netip.AddrPort]netip.AddrPort, roots *x509.CertPool) *Fetcher {
	f := New(r, getenv)
	f.dial.roots = roots
	if translate != nil {
		f.dial.translate = func(a netip.AddrPort) netip.AddrPort {
			if to, ok := translate[a]; ok {
				return to
			}
			return netip.MustParseAddrPort("127.0.0.1:1")
		}
	}
	return f
}
