package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/web"
	"github.com/zuno-run/zuno/adapters/tools/web/fetch"
	"github.com/zuno-run/zuno/adapters/tools/web/netguard"
	"github.com/zuno-run/zuno/adapters/tools/web/webtest"
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/tools"
)

var (
	pubA   = netip.MustParseAddr("93.184.215.14")
	allow  = web.NetworkOf(sandbox.Config{Network: sandbox.NetworkAllow})
	denied = web.NetworkOf(sandbox.Config{})
)

// site is a page server reached the way production reaches any public site through a proxy:
// the tool's fetcher is the production one, its proxy (HTTP_PROXY) a real CONNECT proxy on
// loopback that tunnels the public address pubA:port to the page server.
type site struct {
	origin *httptest.Server
	proxy  *webtest.Proxy
	env    func(string) string
	dns    *webtest.DNS
}

func newSite(t *testing.T, h http.HandlerFunc) *site {
	o := httptest.NewServer(h)
	t.Cleanup(o.Close)
	local := netip.MustParseAddrPort(o.Listener.Addr().String())
	p := webtest.StartProxy(t, webtest.KindHTTP, map[netip.AddrPort]string{netip.AddrPortFrom(pubA, local.Port()): local.String()}, nil)
	dns := webtest.StartDNS(t, webtest.Static(map[string][]netip.Addr{"docs.test": {pubA}, "inside.test": {netip.MustParseAddr("10.9.8.7")}}))
	return &site{origin: o, proxy: p, dns: dns, env: func(k string) string {
		if k == "HTTP_PROXY" {
			return "http://" + p.Addr
		}
		return ""
	}}
}

func (s *site) url(host, path string) string {
	return fmt.Sprintf("http://%s:%d%s", host, netip.MustParseAddrPort(s.origin.Listener.Addr().String()).Port(), path)
}

func (s *site) tool(n web.Network, cap web.Capper) *web.FetchTool {
	return web.NewFetch(fetch.New(s.dns.Resolver(), s.env), n, cap)
}

func call(t *testing.T, tool tools.Tool, args string) tools.Result {
	t.Helper()
	p, err := tool.Validate(json.RawMessage(args))
	if err != nil {
		t.Fatalf("validate %s: %v", args, err)
	}
	return tool.Execute(context.Background(), tools.Invocation{SessionID: "ses_1", CallID: "c1", Parsed: p})
}

type details struct {
	Network web.Network `json:"network"`
	Hops    []fetch.Hop `json:"hops"`
	Status  int         `json:"status"`
}

func detailsOf(t *testing.T, r tools.Result) details {
	t.Helper()
	var d details
	if err := json.Unmarshal(r.Metadata.Details, &d); err != nil {
		t.Fatalf("details %s: %v", r.Metadata.Details, err)
	}
	return d
}

const article = `<!doctype html><html><head><title>T</title><script>steal()</script></head>
<body><h1>Guide</h1><p>Read <a href="/next">the next page</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`

// TestFetchMarkdown: a page is fetched, converted to Markdown with absolute links, headed by
// the data notice, and the result records the network decision, the route and the hop.
func TestFetchMarkdown(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, article)
	})
	r := call(t, s.tool(allow, nil), fmt.Sprintf(`{"url": %q}`, s.url("docs.test", "/guide")))
	if r.Outcome != tools.OutcomeCompleted {
		t.Fatalf("%s %s", r.Outcome, r.Output)
	}
	for _, want := range []string{web.DataNotice, "# Guide", "[the next page](" + s.url("docs.test", "/next") + ")", "- one"} {
		if !strings.Contains(r.Output, want) {
			t.Fatalf("output lacks %q:\n%s", want, r.Output)
		}
	}
	if strings.Contains(r.Output, "steal()") {
		t.Fatal("script text reached the output")
	}
	d := detailsOf(t, r)
	if !d.Network.Allowed || len(d.Hops) != 1 || d.Hops[0].Route.Kind != fetch.RouteHTTP || d.Hops[0].Pinned != pubA.String() {
		t.Fatalf("details %+v", d)
	}
	if seen := s.proxy.Seen(); len(seen) != 1 || !strings.HasPrefix(seen[0].Target, pubA.String()+":") {
		t.Fatalf("proxy saw %+v", seen)
	}
	text := call(t, s.tool(allow, nil), fmt.Sprintf(`{"url": %q, "format": "text"}`, s.url("docs.test", "/")))
	if !strings.Contains(text.Output, "Guide\n") || strings.Contains(text.Output, "<h1>") || strings.Contains(text.Output, "steal") {
		t.Fatalf("text: %s", text.Output)
	}
	raw := call(t, s.tool(allow, nil), fmt.Sprintf(`{"url": %q, "format": "html"}`, s.url("docs.test", "/")))
	if !strings.Contains(raw.Output, "<h1>Guide</h1>") {
		t.Fatalf("html: %s", raw.Output)
	}
}

// TestFetchNetworkDenied: under the sandbox's network deny (the default when confined) the
// call is refused with a typed reason, recorded, and nothing is sent.
func TestFetchNetworkDenied(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) { t.Error("the origin was reached") })
	for _, cfg := range []sandbox.Config{{}, {Mode: sandbox.ModeReadOnly}, {Mode: sandbox.ModeWorkspaceWrite, Network: sandbox.NetworkDeny}} {
		n := web.NetworkOf(cfg)
		r := call(t, s.tool(n, nil), fmt.Sprintf(`{"url": %q}`, s.url("docs.test", "/")))
		if r.Outcome != tools.OutcomeError || r.ErrorCode != web.CodeNetworkDenied || !strings.Contains(r.Output, `"network": "allow"`) {
			t.Fatalf("%+v: %s %s %s", cfg, r.Outcome, r.ErrorCode, r.Output)
		}
		if d := detailsOf(t, r); d.Network.Allowed || d.Network.Policy != sandbox.NetworkDeny {
			t.Fatalf("details %+v", d)
		}
	}
	if len(s.proxy.Seen()) != 0 {
		t.Fatal("the proxy was asked")
	}
	if n := web.NetworkOf(sandbox.Config{Mode: sandbox.ModeDangerFullAccess}); !n.Allowed || n.Policy != sandbox.NetworkHost {
		t.Fatalf("danger-full-access: %+v", n)
	}
}

// TestFetchRefusalsRecorded: a refused address is an error result whose details name the hop
// and the refusal; the proxy is never asked for it.
func TestFetchRefusalsRecorded(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/", http.StatusFound)
	})
	r := call(t, s.tool(allow, nil), fmt.Sprintf(`{"url": %q}`, s.url("inside.test", "/")))
	if r.ErrorCode != netguard.CodeAddressRefused || len(detailsOf(t, r).Hops) != 1 || detailsOf(t, r).Hops[0].Refused != "address_refused: private" {
		t.Fatalf("%s %s %s", r.ErrorCode, r.Output, r.Metadata.Details)
	}
	r = call(t, s.tool(allow, nil), fmt.Sprintf(`{"url": %q}`, s.url("docs.test", "/")))
	d := detailsOf(t, r)
	if r.ErrorCode != netguard.CodeAddressRefused || len(d.Hops) != 2 || d.Hops[0].Status != 302 || d.Hops[1].Refused != "address_refused: metadata" {
		t.Fatalf("redirect: %s %s", r.Output, r.Metadata.Details)
	}
	if len(s.proxy.Seen()) != 1 {
		t.Fatalf("proxy saw %+v", s.proxy.Seen())
	}
}

// TestFetchValidate: what the guard refuses by spelling is blocked before the gate; the
// permission subject is the canonical URL, and always saves its origin.
func TestFetchValidate(t *testing.T) {
	tool := web.NewFetch(fetch.New(nil, func(string) string { return "" }), allow, nil)
	for _, bad := range []string{`{"url": "http://u:p@example.com/"}`, `{"url": "ftp://example.com/"}`, `{"url": "http://1.2.3.4.5/"}`,
		`{"url": "https://example.com", "timeout": 121}`, `{"url": "https://example.com", "timeout": 0}`, `{"url": "https://example.com", "format": "pdf"}`, `{}`} {
		if _, err := tool.Validate(json.RawMessage(bad)); err == nil {
			t.Errorf("%s validated", bad)
		}
	}
	p, err := tool.Validate(json.RawMessage(`{"url": "HTTPS://Docs.Example.COM:443/a?b=1#x", "timeout": 120}`))
	if err != nil {
		t.Fatal(err)
	}
	subjects, _ := tool.Subjects(p)
	if len(subjects) != 1 || subjects[0].Resource != "https://docs.example.com/a?b=1" || subjects[0].Always != "https://docs.example.com/*" {
		t.Fatalf("subjects %+v", subjects)
	}
	if d := tool.Declaration(); d.Policy.SideEffect != tools.ReadOnly || d.Policy.Replay != tools.Safe || d.Policy.Concurrency != tools.ParallelSafe {
		t.Fatalf("policy %+v", d.Policy)
	}
}

// TestFetchCapped: the result goes through the output caps it is given (the catalogue gives
// the session's), keeping its details.
func TestFetchCapped(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("line\n", 100))
	})
	var capped bool
	cap := func(callID, tool string, r tools.Result) tools.Result {
		capped = callID == "c1" && tool == web.NameWebFetch && strings.Count(r.Output, "line") == 100 && len(r.Metadata.Details) > 0
		r.Output = "withheld"
		return r
	}
	r := call(t, s.tool(allow, cap), fmt.Sprintf(`{"url": %q}`, s.url("docs.test", "/")))
	if !capped || r.Output != "withheld" || len(r.Metadata.Details) == 0 {
		t.Fatalf("capped %v: %+v", capped, r)
	}
}

// TestToolsConfigRemovesWebfetch: tools.webfetch false takes it off the offered surface.
func TestToolsConfigRemovesWebfetch(t *testing.T) {
	runtime := []tools.Tool{web.NewFetch(fetch.New(nil, nil), allow, nil)}
	build := agent.Builtins()[0]
	on, err := agent.Offer(build, runtime, nil)
	if err != nil || len(on.Tools) != 1 {
		t.Fatalf("default: %v %d", err, len(on.Tools))
	}
	off, err := agent.Offer(build, runtime, map[string]bool{"webfetch": false})
	if err != nil || len(off.Tools) != 0 {
		t.Fatalf("tools.webfetch false: %v %d", err, len(off.Tools))
	}
}

// TestRender: non-text is refused; other charsets are decoded.
func TestRender(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/img":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte("caf\xe9"))
		}
	})
	if r := call(t, s.tool(allow, nil), fmt.Sprintf(`{"url": %q}`, s.url("docs.test", "/img"))); r.ErrorCode != web.CodeUnsupportedContent {
		t.Fatalf("image: %s %s", r.ErrorCode, r.Output)
	}
	if r := call(t, s.tool(allow, nil), fmt.Sprintf(`{"url": %q}`, s.url("docs.test", "/latin1"))); !strings.HasSuffix(r.Output, "café") {
		t.Fatalf("latin1: %q", r.Output)
	}
}
