// Package webtest holds the real servers the web tools' tests run against: a DNS server on
// loopback that answers from a table (and may change its answer between queries), and HTTP
// CONNECT, SOCKS4 and SOCKS5 proxies that tunnel to loopback servers standing in for public
// addresses. Only tests import it.
package webtest

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"

	"golang.org/x/net/dns/dnsmessage"
)

// T is what the servers need of a test (testing.TB has it; so does a script's adapter):
// failing it, and stopping the server when it ends.
type T interface {
	Fatal(args ...any)
	Cleanup(func())
}

// DNS is a DNS server on 127.0.0.1 (UDP). Answer maps a name (lower case, no trailing dot)
// to the addresses of its n-th query (n counts A queries of that name, from 1); a name it does
// not know is NXDOMAIN; a name mapped to nil gets no answer at all (a resolver timeout).
type DNS struct {
	Addr string
	mu   sync.Mutex
	// Answer is consulted for every query.
	Answer  func(name string, n int) ([]netip.Addr, bool)
	queries map[string]int
}

// Queries is how many A queries name received.
func (d *DNS) Queries(name string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queries[name]
}

// StartDNS starts the server; it stops with the test.
func StartDNS(t T, answer func(name string, n int) ([]netip.Addr, bool)) *DNS {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	d := &DNS{Addr: pc.LocalAddr().String(), Answer: answer, queries: map[string]int{}}
	go d.serve(pc)
	return d
}

// Static answers a fixed table.
func Static(table map[string][]netip.Addr) func(string, int) ([]netip.Addr, bool) {
	return func(name string, _ int) ([]netip.Addr, bool) {
		a, ok := table[name]
		return a, ok
	}
}

// Resolver is a resolver that asks only this server.
func (d *DNS) Resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, "udp", d.Addr)
	}}
}

func (d *DNS) serve(pc net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if reply := d.reply(buf[:n]); reply != nil {
			pc.WriteTo(reply, from)
		}
	}
}

func (d *DNS) reply(msg []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(msg)
	if err != nil {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	name := strings.TrimSuffix(strings.ToLower(q.Name.String()), ".")
	d.mu.Lock()
	if q.Type == dnsmessage.TypeA {
		d.queries[name]++
	}
	n := max(d.queries[name], 1)
	d.mu.Unlock()
	addrs, known := d.Answer(name, n)
	if known && addrs == nil {
		return nil // silence: the resolver times out
	}
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionAvailable: true}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.StartQuestions()
	b.Question(q)
	b.StartAnswers()
	for _, a := range addrs {
		hdr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}
		switch {
		case q.Type == dnsmessage.TypeA && a.Is4():
			b.AResource(hdr, dnsmessage.AResource{A: a.As4()})
		case q.Type == dnsmessage.TypeAAAA && a.Is6():
			b.AAAAResource(hdr, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}
