package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/zuno-run/zuno/adapters/tools/web/webtest"
)

// The web tools' script command (docs/web.md): webfetch reaches public addresses only, so a
// script cannot serve it a page from loopback directly. It serves one the way production
// reaches any site through a proxy: `webproxy NAME ADDR:PORT` starts a page server on
// loopback and a real HTTP CONNECT proxy that tunnels the public ADDR:PORT to it, and sets
// $NAME to the proxy's host:port for HTTP_PROXY. The page server answers every path with an
// HTML page naming the path and the Host header it received, but /go/REST, which redirects
// (302) to /REST.
func init() {
	scriptCmds["webproxy"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: webproxy NAME ADDR:PORT")
		}
		public, err := netip.ParseAddrPort(args[1])
		ts.Check(err)
		origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if rest, ok := strings.CutPrefix(r.URL.Path, "/go/"); ok {
				http.Redirect(w, r, "/"+rest, http.StatusFound)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<html><body><h1>Page %s</h1><p>Served for host %s.</p><script>ignored()</script></body></html>",
				strings.TrimPrefix(r.URL.Path, "/"), r.Host)
		}))
		ts.Defer(origin.Close)
		p := webtest.StartProxy(scriptTB{ts}, webtest.KindHTTP, map[netip.AddrPort]string{public: origin.Listener.Addr().String()}, nil)
		ts.Setenv(args[0], p.Addr)
	}
}

// scriptTB is the little of testing.TB that webtest's servers use, over a script.
type scriptTB struct{ ts *testscript.TestScript }

func (s scriptTB) Fatal(args ...any) { s.ts.Fatalf("%s", fmt.Sprint(args...)) }
func (s scriptTB) Cleanup(f func())  { s.ts.Defer(f) }
