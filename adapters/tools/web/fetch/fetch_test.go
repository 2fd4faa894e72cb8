package fetch_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/web/fetch"
	"github.com/zuno-run/zuno/adapters/tools/web/netguard"
	"github.com/zuno-run/zuno/adapters/tools/web/webtest"
)

// Public addresses the tests' DNS hands out. The fetcher checks them as the public addresses
// they are; the test-only translation (export_test.go) then sends a direct connection to one
// of them to the loopback server playing it.
var (
	pubA  = netip.MustParseAddr("93.184.215.14")
	pubB  = netip.MustParseAddr("151.101.1.69")
	pub6  = netip.MustParseAddr("2606:4700::6810:84e5")
	noEnv = func(string) string { return "" }
)

// origin is a loopback HTTP server recording what reached it.
type origin struct {
	*httptest.Server
	mu    sync.Mutex
	hosts []string
	hits  atomic.Int32
}

func (o *origin) seen() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.hosts...)
}

func newOrigin(t *testing.T, h http.HandlerFunc) *origin {
	o := &origin{}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.hits.Add(1)
		o.mu.Lock()
		o.hosts = append(o.hosts, r.Host)
		o.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *origin) port() uint16 { return netip.MustParseAddrPort(o.Listener.Addr().String()).Port() }

func page(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
}

// world is a DNS server, an origin, and a fetcher whose direct connections to pubA:port reach
// the origin.
type world struct {
	dns    *webtest.DNS
	origin *origin
	f      *fetch.Fetcher
	calls  *countingResolver
}

type countingResolver struct {
	r     fetch.Resolver
	calls atomic.Int32
}

func (c *countingResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	c.calls.Add(1)
	return c.r.LookupNetIP(ctx, network, host)
}

func newWorld(t *testing.T, answer func(string, int) ([]netip.Addr, bool), h http.HandlerFunc, env func(string) string) *world {
	w := &world{origin: newOrigin(t, h), dns: webtest.StartDNS(t, answer)}
	w.calls = &countingResolver{r: w.dns.Resolver()}
	local := netip.MustParseAddrPort(w.origin.Listener.Addr().String())
	tr := map[netip.AddrPort]netip.AddrPort{
		netip.AddrPortFrom(pubA, local.Port()): local,
		netip.AddrPortFrom(pubB, local.Port()): local,
		netip.AddrPortFrom(pub6, local.Port()): local,
	}
	if env == nil {
		env = noEnv
	}
	w.f = fetch.NewForTest(w.calls, env, tr, nil)
	return w
}

func (w *world) url(host, path string) string {
	return fmt.Sprintf("http://%s:%d%s", host, w.origin.port(), path)
}

var table = map[string][]netip.Addr{
	"public.test":    {pubA},
	"public6.test":   {pub6},
	"twopublic.test": {pubA, pubB},
	"private.test":   {netip.MustParseAddr("10.0.0.5")},
	"loop.test":      {netip.MustParseAddr("127.0.0.1")},
	"meta.test":      {netip.MustParseAddr("169.254.169.254")},
	"linklocal.test": {netip.MustParseAddr("169.254.10.10")},
	"cgnat.test":     {netip.MustParseAddr("100.64.1.1")},
	"mixed.test":     {pubA, netip.MustParseAddr("127.0.0.1")},
	"mixed6.test":    {pubA, netip.MustParseAddr("::1")},
	"mapped.test":    {netip.MustParseAddr("::ffff:127.0.0.1")},
	"ula.test":       {netip.MustParseAddr("fd12:3456::1")},
	"slow.test":      nil, // no answer: the resolver waits
}

func codeOf(err error) string {
	var fe *fetch.Error
	if errors.As(err, &fe) {
		return fe.Code()
	}
	return ""
}

// TestAttackTable is the address guard's table (docs/web.md, "Attacks"): each row is a URL a
// model might send, answered by a real DNS server on loopback, and the origin the URL would
// reach on a machine without the guard is a real server that must see nothing.
func TestAttackTable(t *testing.T) {
	w := newWorld(t, webtest.Static(table), page("<p>secret</p>"), nil)
	port := w.origin.port()
	rows := []struct {
		name, url, code string
	}{
		{"loopback literal", w.url("127.0.0.1", "/"), netguard.CodeAddressRefused},
		{"loopback other", "http://127.0.0.2:80/", netguard.CodeAddressRefused},
		{"private 10/8", "http://10.0.0.1/", netguard.CodeAddressRefused},
		{"private 172.16/12", "http://172.31.255.1/", netguard.CodeAddressRefused},
		{"private 192.168/16", "http://192.168.1.1/", netguard.CodeAddressRefused},
		{"link-local", "http://169.254.1.1/", netguard.CodeAddressRefused},
		{"metadata", "http://169.254.169.254/latest/meta-data/", netguard.CodeAddressRefused},
		{"metadata ipv6", "http://[fd00:ec2::254]/", netguard.CodeAddressRefused},
		{"cgnat", "http://100.64.0.1/", netguard.CodeAddressRefused},
		{"multicast", "http://224.0.0.251/", netguard.CodeAddressRefused},
		{"unspecified", "http://0.0.0.0/", netguard.CodeAddressRefused},
		{"broadcast", "http://255.255.255.255/", netguard.CodeAddressRefused},
		{"ipv6 loopback", fmt.Sprintf("http://[::1]:%d/", port), netguard.CodeAddressRefused},
		{"ipv6 unspecified", "http://[::]/", netguard.CodeAddressRefused},
		{"ipv4-mapped", "http://[::ffff:127.0.0.1]/", netguard.CodeAddressRefused},
		{"ipv4-mapped hex", "http://[::ffff:7f00:1]/", netguard.CodeAddressRefused},
		{"ipv4-mapped public", "http://[::ffff:93.184.215.14]/", netguard.CodeAddressRefused},
		{"ipv4-compatible", "http://[::127.0.0.1]/", netguard.CodeAddressRefused},
		{"nat64 of loopback", "http://[64:ff9b::7f00:1]/", netguard.CodeAddressRefused},
		{"6to4 of loopback", "http://[2002:7f00:1::1]/", netguard.CodeAddressRefused},
		{"unique-local", "http://[fd00::1]/", netguard.CodeAddressRefused},
		{"ipv6 link-local zone", "http://[fe80::1%25lo]/", netguard.CodeAddressRefused},
		{"ipv6 multicast", "http://[ff02::1]/", netguard.CodeAddressRefused},
		{"decimal", fmt.Sprintf("http://2130706433:%d/", port), netguard.CodeAddressRefused},
		{"octal", fmt.Sprintf("http://0177.0.0.1:%d/", port), netguard.CodeAddressRefused},
		{"hex short", fmt.Sprintf("http://0x7f.1:%d/", port), netguard.CodeAddressRefused},
		{"hex whole", "http://0x7f000001/", netguard.CodeAddressRefused},
		{"short form", "http://127.1/", netguard.CodeAddressRefused},
		{"octal whole", "http://017700000001/", netguard.CodeAddressRefused},
		{"decimal metadata", "http://2852039166/", netguard.CodeAddressRefused},
		{"numeric garbage", "http://1.2.3.4.5/", netguard.CodeURLInvalid},
		{"octal digit 8", "http://08.0.0.1/", netguard.CodeURLInvalid},
		{"localhost", w.url("localhost", "/"), netguard.CodeAddressRefused},
		{"sub.localhost", "http://a.localhost/", netguard.CodeAddressRefused},
		{"dns private", w.url("private.test", "/"), netguard.CodeAddressRefused},
		{"dns loopback", w.url("loop.test", "/"), netguard.CodeAddressRefused},
		{"dns metadata", w.url("meta.test", "/"), netguard.CodeAddressRefused},
		{"dns link-local", w.url("linklocal.test", "/"), netguard.CodeAddressRefused},
		{"dns cgnat", w.url("cgnat.test", "/"), netguard.CodeAddressRefused},
		{"dns mixed", w.url("mixed.test", "/"), netguard.CodeAddressRefused},
		{"dns mixed v6", w.url("mixed6.test", "/"), netguard.CodeAddressRefused},
		{"dns ipv4-mapped", w.url("mapped.test", "/"), netguard.CodeAddressRefused},
		{"dns unique-local", w.url("ula.test", "/"), netguard.CodeAddressRefused},
		{"dns no such host", w.url("nowhere.test", "/"), fetch.CodeDNSFailed},
		{"credentials", "http://user:pass@public.test/", netguard.CodeURLCredentials},
		{"user only", "http://user@public.test/", netguard.CodeURLCredentials},
		{"empty user info", "http://@public.test/", netguard.CodeURLCredentials},
		{"ftp", "ftp://public.test/", netguard.CodeURLScheme},
		{"file", "file:///etc/passwd", netguard.CodeURLScheme},
		{"gopher", "gopher://public.test:70/", netguard.CodeURLScheme},
		{"no scheme", "public.test/", netguard.CodeURLScheme},
		{"backslash", `http://public.test\@127.0.0.1/`, netguard.CodeURLInvalid},
		{"port zero", "http://public.test:0/", netguard.CodeURLInvalid},
		{"port too big", "http://public.test:65536/", netguard.CodeURLInvalid},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			_, err := w.f.Fetch(context.Background(), fetch.Request{URL: r.url, Timeout: 5 * time.Second})
			if got := codeOf(err); got != r.code {
				t.Fatalf("%s: code %q, want %q (%v)", r.url, got, r.code, err)
			}
		})
	}
	if n := w.origin.hits.Load(); n != 0 {
		t.Fatalf("the origin was reached %d times", n)
	}
}

// TestMixedAnswerNamesBoth: a name with public and private answers is refused as a whole,
// and the refusal says so (it is never narrowed to the public part).
func TestMixedAnswerNamesBoth(t *testing.T) {
	w := newWorld(t, webtest.Static(table), page("x"), nil)
	_, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("mixed.test", "/")})
	if err == nil || !strings.Contains(err.Error(), "public and refused addresses together") || !strings.Contains(err.Error(), "127.0.0.1 (loopback)") {
		t.Fatalf("err = %v", err)
	}
	var fe *fetch.Error
	errors.As(err, &fe)
	if len(fe.Hops) != 1 || fe.Hops[0].Refused != "address_refused: loopback" || len(fe.Hops[0].Addresses) != 2 {
		t.Fatalf("hops = %+v", fe.Hops)
	}
}

// TestPublicFetch: a public name is fetched, the Host header is the original, and the hop
// records the addresses, the pinned one and the direct route.
func TestPublicFetch(t *testing.T) {
	for _, host := range []string{"public.test", "public6.test", "twopublic.test", "PUBLIC.test."} {
		t.Run(host, func(t *testing.T) {
			w := newWorld(t, webtest.Static(table), page("<h1>Hello</h1>"), nil)
			res, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url(host, "/a")})
			if err != nil {
				t.Fatal(err)
			}
			want := strings.TrimSuffix(strings.ToLower(host), ".")
			if got := w.origin.seen(); len(got) != 1 || got[0] != fmt.Sprintf("%s:%d", want, w.origin.port()) {
				t.Fatalf("Host headers %v", got)
			}
			h := res.Hops[0]
			if string(res.Body) != "<h1>Hello</h1>" || h.Route.Kind != fetch.RouteDirect || h.Pinned == "" || h.Status != 200 {
				t.Fatalf("res %+v", res)
			}
		})
	}
}

// TestRebinding: the DNS server answers public first and loopback after; the fetcher asks
// once and connects to the address it checked.
func TestRebinding(t *testing.T) {
	answer := func(name string, n int) ([]netip.Addr, bool) {
		if name != "rebind.test" {
			return nil, false
		}
		if n == 1 {
			return []netip.Addr{pubA}, true
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, true
	}
	w := newWorld(t, answer, page("pinned"), nil)
	res, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("rebind.test", "/")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Hops[0].Pinned != pubA.String() || w.calls.calls.Load() != 1 || w.dns.Queries("rebind.test") != 1 {
		t.Fatalf("pinned %s, lookups %d, queries %d", res.Hops[0].Pinned, w.calls.calls.Load(), w.dns.Queries("rebind.test"))
	}
	// A second fetch resolves again and meets the loopback answer: refused.
	if _, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("rebind.test", "/")}); codeOf(err) != netguard.CodeAddressRefused {
		t.Fatalf("second fetch: %v", err)
	}
	if w.origin.hits.Load() != 1 {
		t.Fatalf("origin hits %d", w.origin.hits.Load())
	}
}

// TestRedirectTable: a public page redirecting to each refused target is refused at that hop;
// the refused target is never requested.
func TestRedirectTable(t *testing.T) {
	var target atomic.Value
	w := newWorld(t, webtest.Static(table), func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			http.Redirect(rw, r, target.Load().(string), http.StatusFound)
			return
		}
		page("landed")(rw, r)
	}, nil)
	port := w.origin.port()
	rows := []struct{ name, to, code string }{
		{"loopback", fmt.Sprintf("http://127.0.0.1:%d/landed", port), netguard.CodeAddressRefused},
		{"private", "http://10.1.2.3/", netguard.CodeAddressRefused},
		{"link-local", "http://169.254.3.3/", netguard.CodeAddressRefused},
		{"metadata", "http://169.254.169.254/latest/meta-data/iam/", netguard.CodeAddressRefused},
		{"ipv4-mapped", fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port), netguard.CodeAddressRefused},
		{"decimal", fmt.Sprintf("http://2130706433:%d/", port), netguard.CodeAddressRefused},
		{"octal", fmt.Sprintf("http://0177.0.0.1:%d/", port), netguard.CodeAddressRefused},
		{"hex", fmt.Sprintf("http://0x7f.1:%d/", port), netguard.CodeAddressRefused},
		{"dns private", w.url("private.test", "/"), netguard.CodeAddressRefused},
		{"dns mixed", w.url("mixed.test", "/"), netguard.CodeAddressRefused},
		{"dns metadata", w.url("meta.test", "/"), netguard.CodeAddressRefused},
		{"credentials", "http://user:pw@public.test/", netguard.CodeURLCredentials},
		{"scheme", "file:///etc/passwd", netguard.CodeURLScheme},
		{"localhost", fmt.Sprintf("http://localhost:%d/", port), netguard.CodeAddressRefused},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			target.Store(r.to)
			before := w.origin.hits.Load()
			_, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("public.test", "/go")})
			if codeOf(err) != r.code {
				t.Fatalf("code %q, want %q: %v", codeOf(err), r.code, err)
			}
			var fe *fetch.Error
			errors.As(err, &fe)
			if len(fe.Hops) != 2 || fe.Hops[0].Status != http.StatusFound || fe.Hops[1].Refused == "" {
				t.Fatalf("hops %+v", fe.Hops)
			}
			if strings.Contains(fe.Hops[1].URL, "pw@") || strings.Contains(err.Error(), "pw") {
				t.Fatalf("a password in the Location was recorded: %+v", fe.Hops[1])
			}
			if got := w.origin.hits.Load() - before; got != 1 {
				t.Fatalf("the origin saw %d requests, want only the redirecting one", got)
			}
		})
	}
	// A redirect to a public name is followed (relative Location too).
	target.Store("/landed")
	res, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("public.test", "/go")})
	if err != nil || string(res.Body) != "landed" || len(res.Hops) != 2 {
		t.Fatalf("relative redirect: %v %+v", err, res)
	}
}

// TestRedirectLimit: five redirects are followed, a sixth is refused.
func TestRedirectLimit(t *testing.T) {
	w := newWorld(t, webtest.Static(table), func(rw http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/r/%d", &n)
		if n > 0 {
			http.Redirect(rw, r, fmt.Sprintf("/r/%d", n-1), http.StatusMovedPermanently)
			return
		}
		page("end")(rw, r)
	}, nil)
	res, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("public.test", "/r/5")})
	if err != nil || len(res.Hops) != 6 {
		t.Fatalf("5 redirects: %v, %d hops", err, len(res.Hops))
	}
	_, err = w.f.Fetch(context.Background(), fetch.Request{URL: w.url("public.test", "/r/6")})
	if codeOf(err) != fetch.CodeTooManyRedirects {
		t.Fatalf("6 redirects: %v", err)
	}
}

// TestBodyCaps: a body over the cap is refused whether it declares its length or streams.
func TestBodyCaps(t *testing.T) {
	big := strings.Repeat("a", 2048)
	w := newWorld(t, webtest.Static(table), func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		if r.URL.Path == "/stream" {
			for range 4 {
				fmt.Fprint(rw, big)
				rw.(http.Flusher).Flush()
			}
			return
		}
		fmt.Fprint(rw, big+big)
	}, nil)
	for _, path := range []string{"/declared", "/stream"} {
		_, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("public.test", path), MaxBody: 1024})
		if codeOf(err) != fetch.CodeBodyTooLarge {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if res, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("public.test", "/declared"), MaxBody: 4096}); err != nil || len(res.Body) != 4096 {
		t.Fatalf("at the cap: %v", err)
	}
}

// TestTimeouts: each phase that hangs times out, and the error names route, phase, elapsed.
func TestTimeouts(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	w := newWorld(t, webtest.Static(table), func(rw http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/headers":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/body":
			rw.Header().Set("Content-Type", "text/plain")
			rw.WriteHeader(200)
			for {
				if _, err := fmt.Fprint(rw, "."); err != nil {
					return
				}
				rw.(http.Flusher).Flush()
				select {
				case <-time.After(100 * time.Millisecond):
				case <-r.Context().Done():
					return
				}
			}
		}
	}, nil)
	for _, row := range []struct{ host, path, phase string }{
		{"public.test", "/headers", fetch.PhaseHeaders},
		{"public.test", "/body", fetch.PhaseBody},
		{"slow.test", "/", fetch.PhaseDNS},
	} {
		t.Run(row.phase, func(t *testing.T) {
			_, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url(row.host, row.path), Timeout: 700 * time.Millisecond})
			var fe *fetch.Error
			if !errors.As(err, &fe) || fe.Code() != fetch.CodeTimeout {
				t.Fatalf("err %v", err)
			}
			msg := fe.Error()
			for _, want := range []string{"route direct", "phase " + row.phase, "elapsed "} {
				if !strings.Contains(msg, want) {
					t.Fatalf("%q lacks %q", msg, want)
				}
			}
		})
	}
}

// TestTimeoutBounds: the default is 30 s and nothing waits longer than 120 s.
func TestTimeoutBounds(t *testing.T) {
	if fetch.DefaultTimeout != 30*time.Second || fetch.MaxTimeout != 120*time.Second || fetch.MaxRedirects != 5 {
		t.Fatal("bounds moved")
	}
}

// TestHTTPSHostAndSNI: an https target is reached at its pinned address, with the original
// name as SNI and Host, and its certificate checked against that name.
func TestHTTPSHostAndSNI(t *testing.T) {
	var sni atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "host=%s", r.Host)
	}))
	srv.TLS = &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		sni.Store(h.ServerName)
		return nil, nil
	}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	local := netip.MustParseAddrPort(srv.Listener.Addr().String())
	dns := webtest.StartDNS(t, webtest.Static(map[string][]netip.Addr{"example.com": {pubA}, "other.test": {pubA}}))
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	f := fetch.NewForTest(dns.Resolver(), noEnv, map[netip.AddrPort]netip.AddrPort{netip.AddrPortFrom(pubA, local.Port()): local}, roots)
	res, err := f.Fetch(context.Background(), fetch.Request{URL: fmt.Sprintf("https://example.com:%d/", local.Port())})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Body) != fmt.Sprintf("host=example.com:%d", local.Port()) || sni.Load() != "example.com" {
		t.Fatalf("body %q, sni %v", res.Body, sni.Load())
	}
	// A name the certificate does not cover fails TLS: the address is not trusted for it.
	if _, err := f.Fetch(context.Background(), fetch.Request{URL: fmt.Sprintf("https://other.test:%d/", local.Port())}); codeOf(err) != fetch.CodeFetchFailed {
		t.Fatalf("other.test: %v", err)
	}
}

// env is a process environment for the proxy variables.
func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestProxies: every proxy kind is asked for a tunnel to the checked address (never the
// name), the origin sees the original Host, and direct connections are never made (the
// fetcher has no translation: a direct connection to the public address would fail).
func TestProxies(t *testing.T) {
	o := newOrigin(t, page("via proxy"))
	dns := webtest.StartDNS(t, webtest.Static(table))
	target := netip.AddrPortFrom(pubA, o.port())
	origins := map[netip.AddrPort]string{target: o.Listener.Addr().String()}
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(tlsSrv.Close)
	cert := tlsSrv.TLS.Certificates[0]
	roots := x509.NewCertPool()
	roots.AddCert(tlsSrv.Certificate())
	for _, row := range []struct {
		kind, scheme, variable, route, auth string
	}{
		{webtest.KindHTTP, "http", "HTTP_PROXY", fetch.RouteHTTP, "Basic dTpzZWNyZXQ="},
		{webtest.KindHTTP, "http", "http_proxy", fetch.RouteHTTP, ""},
		{webtest.KindHTTPS, "https", "HTTP_PROXY", fetch.RouteHTTPS, "Basic dTpzZWNyZXQ="},
		{webtest.KindSOCKS4, "socks4", "ALL_PROXY", fetch.RouteSOCKS4, "u"},
		{webtest.KindSOCKS4, "socks4a", "all_proxy", fetch.RouteSOCKS4, ""},
		{webtest.KindSOCKS5, "socks5", "ALL_PROXY", fetch.RouteSOCKS5, "u"},
		{webtest.KindSOCKS5, "socks5h", "HTTP_PROXY", fetch.RouteSOCKS5, ""},
	} {
		t.Run(row.scheme+"/"+row.variable+"/"+row.auth, func(t *testing.T) {
			p := webtest.StartProxy(t, row.kind, origins, &cert)
			host := "127.0.0.1" // the https proxy's certificate (httptest's) names 127.0.0.1
			cred := ""
			if row.auth != "" {
				cred = "u:secret@"
			}
			_, port, _ := net.SplitHostPort(p.Addr)
			f := fetch.NewForTest(dns.Resolver(), env(map[string]string{row.variable: fmt.Sprintf("%s://%s%s:%s", row.scheme, cred, host, port)}), nil, roots)
			before := len(o.seen())
			res, err := f.Fetch(context.Background(), fetch.Request{URL: fmt.Sprintf("http://public.test:%d/p", o.port())})
			if err != nil {
				t.Fatal(err)
			}
			seen := p.Seen()
			if len(seen) != 1 || seen[0].Target != target.String() || seen[0].Auth != row.auth {
				t.Fatalf("proxy saw %+v", seen)
			}
			hosts := o.seen()[before:]
			if len(hosts) != 1 || hosts[0] != fmt.Sprintf("public.test:%d", o.port()) {
				t.Fatalf("origin saw Host %v", hosts)
			}
			r := res.Hops[0].Route
			if r.Kind != row.route || strings.Contains(r.Proxy, "secret") || r.Proxy == "" || string(res.Body) != "via proxy" {
				t.Fatalf("route %+v", r)
			}
		})
	}
}

// TestProxyFailureNoDirect: a proxy that cannot be reached, refuses the tunnel or is
// misconfigured fails the fetch, though a direct connection would have worked.
func TestProxyFailureNoDirect(t *testing.T) {
	o := newOrigin(t, page("direct"))
	dns := webtest.StartDNS(t, webtest.Static(table))
	local := netip.MustParseAddrPort(o.Listener.Addr().String())
	direct := map[netip.AddrPort]netip.AddrPort{netip.AddrPortFrom(pubA, local.Port()): local}
	refusing := webtest.StartProxy(t, webtest.KindHTTP, nil, nil)
	refusing5 := webtest.StartProxy(t, webtest.KindSOCKS5, nil, nil)
	refusing4 := webtest.StartProxy(t, webtest.KindSOCKS4, nil, nil)
	closed := closedPort(t)
	for name, vars := range map[string]map[string]string{
		"unreachable http":  {"HTTP_PROXY": "http://" + closed},
		"unreachable socks": {"ALL_PROXY": "socks5://" + closed},
		"refusing http":     {"HTTP_PROXY": "http://" + refusing.Addr},
		"refusing socks5":   {"ALL_PROXY": "socks5://" + refusing5.Addr},
		"refusing socks4":   {"ALL_PROXY": "socks4://" + refusing4.Addr},
		"bad scheme":        {"HTTP_PROXY": "ftp://" + closed},
		"bad url":           {"HTTP_PROXY": "http://[::1"},
	} {
		t.Run(name, func(t *testing.T) {
			f := fetch.NewForTest(dns.Resolver(), env(vars), direct, nil)
			_, err := f.Fetch(context.Background(), fetch.Request{URL: w(o, "public.test"), Timeout: 5 * time.Second})
			if codeOf(err) != fetch.CodeProxyFailed {
				t.Fatalf("err %v", err)
			}
			if !strings.Contains(err.Error(), "no direct connection was tried") {
				t.Fatalf("err %v", err)
			}
		})
	}
	if o.hits.Load() != 0 {
		t.Fatalf("the origin was reached directly %d times", o.hits.Load())
	}
}

func w(o *origin, host string) string { return fmt.Sprintf("http://%s:%d/", host, o.port()) }

func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestNoProxy: NO_PROXY sends a matching host direct (recorded), others through the proxy;
// the scheme picks HTTP_PROXY or HTTPS_PROXY, ALL_PROXY filling in; under CGI HTTP_PROXY
// stops the fetch (it could come from a request header), never sending it direct.
func TestNoProxy(t *testing.T) {
	o := newOrigin(t, page("ok"))
	dns := webtest.StartDNS(t, webtest.Static(table))
	local := netip.MustParseAddrPort(o.Listener.Addr().String())
	direct := map[netip.AddrPort]netip.AddrPort{netip.AddrPortFrom(pubA, local.Port()): local}
	closed := closedPort(t)
	for _, row := range []struct {
		name  string
		vars  map[string]string
		route string
		noP   bool
	}{
		{"no_proxy name", map[string]string{"HTTP_PROXY": "http://" + closed, "NO_PROXY": "public.test"}, fetch.RouteDirect, true},
		{"no_proxy domain", map[string]string{"ALL_PROXY": "socks5://" + closed, "no_proxy": ".test"}, fetch.RouteDirect, true},
		{"no_proxy star", map[string]string{"HTTP_PROXY": "http://" + closed, "NO_PROXY": "*"}, fetch.RouteDirect, true},
		{"https_proxy only", map[string]string{"HTTPS_PROXY": "http://" + closed}, fetch.RouteDirect, false},
		{"cgi", map[string]string{"HTTP_PROXY": "http://" + closed, "REQUEST_METHOD": "GET"}, "fail", false},
		{"no_proxy other", map[string]string{"HTTP_PROXY": "http://" + closed, "NO_PROXY": "other.test"}, "fail", false},
	} {
		t.Run(row.name, func(t *testing.T) {
			f := fetch.NewForTest(dns.Resolver(), env(row.vars), direct, nil)
			res, err := f.Fetch(context.Background(), fetch.Request{URL: w(o, "public.test"), Timeout: 5 * time.Second})
			if row.route == "fail" {
				if codeOf(err) != fetch.CodeProxyFailed {
					t.Fatalf("err %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r := res.Hops[0].Route; r.Kind != row.route || r.NoProxy != row.noP {
				t.Fatalf("route %+v", r)
			}
		})
	}
}

// TestHTTPSThroughProxy: an https target through an HTTP or SOCKS5 proxy is tunnelled to the
// checked address, and TLS inside the tunnel carries the original name (SNI) and checks the
// certificate against it; the Host header is the original.
func TestHTTPSThroughProxy(t *testing.T) {
	var sni atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "host=%s", r.Host)
	}))
	srv.TLS = &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		sni.Store(h.ServerName)
		return nil, nil
	}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	local := netip.MustParseAddrPort(srv.Listener.Addr().String())
	target := netip.AddrPortFrom(pubA, local.Port())
	dns := webtest.StartDNS(t, webtest.Static(map[string][]netip.Addr{"example.com": {pubA}}))
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	for _, kind := range []string{webtest.KindHTTP, webtest.KindSOCKS5} {
		t.Run(kind, func(t *testing.T) {
			sni.Store("")
			p := webtest.StartProxy(t, kind, map[netip.AddrPort]string{target: local.String()}, nil)
			f := fetch.NewForTest(dns.Resolver(), env(map[string]string{"HTTPS_PROXY": kind + "://" + p.Addr}), nil, roots)
			res, err := f.Fetch(context.Background(), fetch.Request{URL: fmt.Sprintf("https://example.com:%d/", local.Port())})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Body) != fmt.Sprintf("host=example.com:%d", local.Port()) || sni.Load() != "example.com" {
				t.Fatalf("body %q sni %v", res.Body, sni.Load())
			}
			if seen := p.Seen(); len(seen) != 1 || seen[0].Target != target.String() {
				t.Fatalf("proxy saw %+v", seen)
			}
		})
	}
}

// TestProxyTimeout: a proxy that accepts and never answers times out naming its route and the
// connect phase; nothing goes direct.
func TestProxyTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	o := newOrigin(t, page("direct"))
	local := netip.MustParseAddrPort(o.Listener.Addr().String())
	dns := webtest.StartDNS(t, webtest.Static(table))
	f := fetch.NewForTest(dns.Resolver(), env(map[string]string{"HTTP_PROXY": "http://" + ln.Addr().String()}),
		map[netip.AddrPort]netip.AddrPort{netip.AddrPortFrom(pubA, local.Port()): local}, nil)
	_, err = f.Fetch(context.Background(), fetch.Request{URL: w(o, "public.test"), Timeout: 500 * time.Millisecond})
	if codeOf(err) != fetch.CodeTimeout || !strings.Contains(err.Error(), "route http-proxy "+ln.Addr().String()) || !strings.Contains(err.Error(), "phase connect") {
		t.Fatalf("err %v", err)
	}
	if o.hits.Load() != 0 {
		t.Fatal("went direct")
	}
}
