package webtest

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
)

// Proxy is a proxy server on loopback that tunnels to Origins: the address a client asks for
// (always an IP and port, the fetcher never names a host to a proxy) mapped to the loopback
// server playing it. A target not in the map is refused. Seen records what clients asked.
type Proxy struct {
	Addr    string
	Origins map[netip.AddrPort]string
	// Refuse makes the proxy refuse every tunnel.
	Refuse bool
	mu     sync.Mutex
	seen   []Request
}

// Request is one tunnel a client asked for.
type Request struct {
	Target string
	// Auth is the Proxy-Authorization header (HTTP) or the user (SOCKS).
	Auth string
}

// Seen returns the tunnels asked for so far.
func (p *Proxy) Seen() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.seen...)
}

func (p *Proxy) record(r Request) {
	p.mu.Lock()
	p.seen = append(p.seen, r)
	p.mu.Unlock()
}

func (p *Proxy) origin(target string) (string, bool) {
	ap, err := netip.ParseAddrPort(target)
	if err != nil || p.Refuse {
		return "", false
	}
	o, ok := p.Origins[ap]
	return o, ok
}

// Kinds of proxy.
const (
	KindHTTP   = "http"
	KindHTTPS  = "https"
	KindSOCKS4 = "socks4"
	KindSOCKS5 = "socks5"
)

// StartProxy starts a proxy of kind; cert is the TLS certificate of an https proxy.
func StartProxy(t T, kind string, origins map[netip.AddrPort]string, cert *tls.Certificate) *Proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if kind == KindHTTPS {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}})
	}
	t.Cleanup(func() { ln.Close() })
	p := &Proxy{Addr: ln.Addr().String(), Origins: origins}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(kind, c)
		}
	}()
	return p
}

func (p *Proxy) serve(kind string, c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	var target string
	var ok bool
	switch kind {
	case KindHTTP, KindHTTPS:
		target, ok = p.connect(br, c)
	case KindSOCKS4:
		target, ok = p.socks4(br, c)
	case KindSOCKS5:
		target, ok = p.socks5(br, c)
	}
	if !ok {
		return
	}
	o, _ := p.origin(target)
	up, err := net.Dial("tcp", o)
	if err != nil {
		return
	}
	defer up.Close()
	go io.Copy(up, br)
	io.Copy(c, up)
}

func (p *Proxy) connect(br *bufio.Reader, c net.Conn) (string, bool) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return "", false
	}
	p.record(Request{Target: req.Host, Auth: req.Header.Get("Proxy-Authorization")})
	if req.Method != http.MethodConnect {
		io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		return "", false
	}
	if _, ok := p.origin(req.Host); !ok {
		io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
		return "", false
	}
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	return req.Host, true
}

func (p *Proxy) socks4(br *bufio.Reader, c net.Conn) (string, bool) {
	var h [8]byte
	if _, err := io.ReadFull(br, h[:]); err != nil || h[0] != 4 || h[1] != 1 {
		return "", false
	}
	user, err := br.ReadString(0)
	if err != nil {
		return "", false
	}
	target := netip.AddrPortFrom(netip.AddrFrom4([4]byte(h[4:8])), binary.BigEndian.Uint16(h[2:4])).String()
	p.record(Request{Target: target, Auth: user[:len(user)-1]})
	if _, ok := p.origin(target); !ok {
		c.Write([]byte{0, 0x5b, 0, 0, 0, 0, 0, 0})
		return "", false
	}
	c.Write([]byte{0, 0x5a, 0, 0, 0, 0, 0, 0})
	return target, true
}

func (p *Proxy) socks5(br *bufio.Reader, c net.Conn) (string, bool) {
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil || h[0] != 5 {
		return "", false
	}
	methods := make([]byte, h[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return "", false
	}
	user := ""
	if containsByte(methods, 2) { // username/password
		c.Write([]byte{5, 2})
		var v [2]byte
		io.ReadFull(br, v[:])
		u := make([]byte, v[1])
		io.ReadFull(br, u)
		var pl [1]byte
		io.ReadFull(br, pl[:])
		pw := make([]byte, pl[0])
		io.ReadFull(br, pw)
		user = string(u)
		c.Write([]byte{1, 0})
	} else {
		c.Write([]byte{5, 0})
	}
	var r [4]byte
	if _, err := io.ReadFull(br, r[:]); err != nil || r[1] != 1 {
		return "", false
	}
	var addr netip.Addr
	switch r[3] {
	case 1:
		var b [4]byte
		io.ReadFull(br, b[:])
		addr = netip.AddrFrom4(b)
	case 4:
		var b [16]byte
		io.ReadFull(br, b[:])
		addr = netip.AddrFrom16(b)
	default: // a name: the fetcher must never send one
		var l [1]byte
		io.ReadFull(br, l[:])
		name := make([]byte, l[0])
		io.ReadFull(br, name)
		var port [2]byte
		io.ReadFull(br, port[:])
		p.record(Request{Target: string(name) + ":" + strconv.Itoa(int(binary.BigEndian.Uint16(port[:]))), Auth: user})
		c.Write([]byte{5, 8, 0, 1, 0, 0, 0, 0, 0, 0})
		return "", false
	}
	var port [2]byte
	io.ReadFull(br, port[:])
	target := netip.AddrPortFrom(addr, binary.BigEndian.Uint16(port[:])).String()
	p.record(Request{Target: target, Auth: user})
	if _, ok := p.origin(target); !ok {
		c.Write([]byte{5, 2, 0, 1, 0, 0, 0, 0, 0, 0}) // not allowed by ruleset
		return "", false
	}
	c.Write([]byte{5, 0, 0, 1, 127, 0, 0, 1, 0, 0})
	return target, true
}

func containsByte(b []byte, v byte) bool {
	for _, x := range b {
		if x == v {
			return true
		}
	}
	return false
}
