package fetch

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpproxy"
	"golang.org/x/net/proxy"
)

// Route kinds, as a result's details and a timeout's message name them.
const (
	RouteDirect = "direct"
	RouteHTTP   = "http-proxy"
	RouteHTTPS  = "https-proxy"
	RouteSOCKS4 = "socks4-proxy"
	RouteSOCKS5 = "socks5-proxy"
)

// Route is how one hop reaches its pinned address: directly, or through the proxy the
// process environment names for it. Proxy is the proxy as host:port, never with its
// credentials (it is recorded).
type Route struct {
	Kind  string `json:"kind"`
	Proxy string `json:"proxy,omitempty"`
	// Scheme and Source say which variable chose the proxy (HTTPS_PROXY, ALL_PROXY, ...);
	// NoProxy is set when NO_PROXY sent a host that a proxy variable covers direct.
	Source  string `json:"source,omitempty"`
	NoProxy bool   `json:"noProxy,omitempty"`

	proxyURL *url.URL
}

// envFirst returns the first set variable of names, and its name.
func envFirst(getenv func(string) string, names ...string) (string, string) {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v, n
		}
	}
	return "", ""
}

// chooseRoute reads HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY (either case) as the
// process has them, for a request to u (its host as written, so NO_PROXY matches names). A
// proxy variable that does not parse, or names a scheme that is not http, https, socks4(a)
// or socks5(h), is an error: never a reason to go direct.
func chooseRoute(getenv func(string) string, u *url.URL) (Route, error) {
	httpP, httpSrc := envFirst(getenv, "HTTP_PROXY", "http_proxy")
	httpsP, httpsSrc := envFirst(getenv, "HTTPS_PROXY", "https_proxy")
	allP, allSrc := envFirst(getenv, "ALL_PROXY", "all_proxy")
	noP, _ := envFirst(getenv, "NO_PROXY", "no_proxy")
	if httpP == "" {
		httpP, httpSrc = allP, allSrc
	}
	if httpsP == "" {
		httpsP, httpsSrc = allP, allSrc
	}
	src, val := httpSrc, httpP
	if u.Scheme == "https" {
		src, val = httpsSrc, httpsP
	}
	if err := parsesAsProxy(src, val); err != nil {
		return Route{}, proxyError(Route{Kind: "proxy", Source: src}, "", err)
	}
	// Under CGI (REQUEST_METHOD set) httpproxy refuses HTTP_PROXY, the httpoxy defence.
	cfg := httpproxy.Config{HTTPProxy: httpP, HTTPSProxy: httpsP, NoProxy: noP, CGI: getenv("REQUEST_METHOD") != ""}
	p, err := cfg.ProxyFunc()(u)
	if err != nil {
		// A value that does not parse, or HTTP_PROXY under CGI (httpoxy: a request header could
		// have set it), stops the fetch rather than sending it direct.
		return Route{}, proxyError(Route{Kind: "proxy", Source: src}, "", fmt.Errorf("%s cannot be used: %v", src, err))
	}
	if p == nil {
		r := Route{Kind: RouteDirect}
		if val != "" {
			r.NoProxy, r.Source = true, src
		}
		return r, nil
	}
	r := Route{Proxy: p.Host, Source: src, proxyURL: p}
	switch strings.ToLower(p.Scheme) {
	case "http":
		r.Kind = RouteHTTP
	case "https":
		r.Kind = RouteHTTPS
	case "socks4", "socks4a":
		r.Kind = RouteSOCKS4
	case "socks5", "socks5h":
		r.Kind = RouteSOCKS5
	default:
		return Route{}, proxyError(Route{Kind: "proxy", Source: src}, "", fmt.Errorf("%s names scheme %q, not http, https, socks4 or socks5", src, p.Scheme))
	}
	if r.Proxy == "" || p.Port() == "" && r.Kind != RouteHTTP && r.Kind != RouteHTTPS {
		return Route{}, proxyError(r, "", fmt.Errorf("%s names no proxy host and port", src))
	}
	if p.Port() == "" {
		r.Proxy = net.JoinHostPort(p.Hostname(), map[string]string{RouteHTTP: "80", RouteHTTPS: "443"}[r.Kind])
	}
	return r, nil
}

// parsesAsProxy refuses a proxy value that does not parse as httpproxy reads it (a URL, or
// host:port taken as http://host:port): httpproxy itself drops such a value without a word,
// and the request would go direct. The value is not quoted: it may hold a password.
func parsesAsProxy(name, v string) error {
	if v == "" {
		return nil
	}
	if u, err := url.Parse(v); err == nil && u.Scheme != "" && u.Host != "" {
		return nil
	}
	if _, err := url.Parse("http://" + v); err == nil {
		return nil
	}
	return fmt.Errorf("%s does not parse as a proxy URL (its value is not shown: it may hold a password)", name)
}

// dialer opens connections for one fetch.
type dialer struct {
	net   net.Dialer
	roots *x509.CertPool
	// translate, when set, maps a validated address to the one dialled. Only this package's
	// tests set it (export_test.go): it is how a test's "public" address reaches a server on
	// loopback without the guard learning any exception. Production leaves it nil.
	translate func(netip.AddrPort) netip.AddrPort
}

// open connects to target (a validated, pinned address) over r: the TCP connection to the
// address itself, or a tunnel to it through the proxy. host is the original host name, for
// nothing but the proxy's own TLS name check (the target's name goes in the request).
func (d *dialer) open(ctx context.Context, r Route, target netip.AddrPort) (net.Conn, error) {
	switch r.Kind {
	case RouteDirect:
		if d.translate != nil {
			target = d.translate(target)
		}
		return d.net.DialContext(ctx, "tcp", target.String())
	case RouteHTTP, RouteHTTPS:
		return d.connectTunnel(ctx, r, target)
	case RouteSOCKS4:
		return d.socks4(ctx, r, target)
	case RouteSOCKS5:
		return d.socks5(ctx, r, target)
	}
	return nil, fmt.Errorf("unknown route %q", r.Kind)
}

// connectTunnel asks an HTTP(S) proxy for a CONNECT tunnel to the pinned address. Plain http
// targets are tunnelled too: the proxy is told the address, never the name, so it cannot
// resolve the name again to somewhere else, and the request inside keeps the original Host.
func (d *dialer) connectTunnel(ctx context.Context, r Route, target netip.AddrPort) (net.Conn, error) {
	conn, err := d.net.DialContext(ctx, "tcp", r.Proxy)
	if err != nil {
		return nil, err
	}
	if r.Kind == RouteHTTPS {
		tc := tls.Client(conn, &tls.Config{ServerName: r.proxyURL.Hostname(), RootCAs: d.roots, MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("TLS to the proxy: %w", err)
		}
		conn = tc
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: target.String()}, Host: target.String(),
		Header: http.Header{}}
	if u := r.proxyURL.User; u != nil {
		pw, _ := u.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
	}
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, err
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("reading the proxy's CONNECT answer: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		conn.Close()
		return nil, fmt.Errorf("the proxy answered CONNECT with %s", resp.Status)
	}
	if ctx.Err() != nil {
		conn.Close()
		return nil, ctx.Err()
	}
	if br.Buffered() > 0 {
		return &bufferedConn{Conn: conn, r: br}, nil
	}
	return conn, nil
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// socks4 opens a SOCKS4 tunnel to the pinned IPv4 address (SOCKS4 carries no IPv6; socks4a
// is spoken as socks4, since the address is always known).
func (d *dialer) socks4(ctx context.Context, r Route, target netip.AddrPort) (net.Conn, error) {
	if !target.Addr().Is4() {
		return nil, fmt.Errorf("SOCKS4 cannot reach the IPv6 address %s", target.Addr())
	}
	conn, err := d.net.DialContext(ctx, "tcp", r.Proxy)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	msg := []byte{4, 1, 0, 0}
	binary.BigEndian.PutUint16(msg[2:], target.Port())
	ip := target.Addr().As4()
	msg = append(msg, ip[:]...)
	if u := r.proxyURL.User; u != nil {
		msg = append(msg, u.Username()...)
	}
	msg = append(msg, 0)
	if _, err := conn.Write(msg); err != nil {
		conn.Close()
		return nil, err
	}
	var reply [8]byte
	if _, err := io.ReadFull(conn, reply[:]); err != nil {
		conn.Close()
		return nil, fmt.Errorf("reading the SOCKS4 answer: %w", err)
	}
	if reply[1] != 0x5a {
		conn.Close()
		return nil, fmt.Errorf("the SOCKS4 proxy refused the connection (code 0x%02x)", reply[1])
	}
	if ctx.Err() != nil {
		conn.Close()
		return nil, ctx.Err()
	}
	return conn, nil
}

// socks5 opens a SOCKS5 tunnel to the pinned address with golang.org/x/net/proxy, which
// sends an IP literal as an address (never a name for the proxy to resolve).
func (d *dialer) socks5(ctx context.Context, r Route, target netip.AddrPort) (net.Conn, error) {
	var auth *proxy.Auth
	if u := r.proxyURL.User; u != nil {
		pw, _ := u.Password()
		auth = &proxy.Auth{User: u.Username(), Password: pw}
	}
	p, err := proxy.SOCKS5("tcp", r.Proxy, auth, &d.net)
	if err != nil {
		return nil, err
	}
	cd, ok := p.(proxy.ContextDialer)
	if !ok {
		return nil, fmt.Errorf("the SOCKS5 dialer cannot be cancelled")
	}
	return cd.DialContext(ctx, "tcp", net.JoinHostPort(target.Addr().String(), strconv.Itoa(int(target.Port()))))
}
