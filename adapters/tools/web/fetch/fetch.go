// Package fetch is webfetch's HTTP client (docs/web.md; seeds 000: webfetch): every host it
// is sent to, the first and each redirect's, is resolved once, all of its addresses are
// checked by netguard, and the connection goes to one of those checked addresses and nowhere
// else: directly, or through the proxy the process environment names, as a tunnel to that
// address with the original Host header and TLS server name. A proxy that fails fails the
// fetch; nothing falls back to a direct connection.
package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/web/netguard"
	"github.com/zuno-run/zuno/domain"
)

// Bounds of a fetch (seeds 000: 30 s by default, 120 s at most; at most five redirects).
const (
	DefaultTimeout = 30 * time.Second
	MaxTimeout     = 120 * time.Second
	MaxRedirects   = 5
	DefaultMaxBody = 5 << 20
	maxHeaderBytes = 64 << 10
	userAgent      = "Zuno-webfetch/1"
	acceptHeader   = "text/html, text/markdown;q=0.9, text/plain;q=0.8, application/json;q=0.7, */*;q=0.1"
	connectTimeout = 10 * time.Second
)

// Stable error codes of a fetch (docs/web.md, "Refusals"); the guard's own are netguard's.
const (
	// CodeTimeout: the fetch ran out of time; the message names the route, the phase (dns,
	// connect, tls, headers, body) and the time elapsed.
	CodeTimeout = "webfetch_timeout"
	// CodeProxyFailed: the proxy the environment names could not be used (it does not parse,
	// refused the tunnel, or could not be reached). The fetch never falls back to direct.
	CodeProxyFailed = "proxy_failed"
	// CodeTooManyRedirects: more than five redirects.
	CodeTooManyRedirects = "too_many_redirects"
	// CodeBodyTooLarge: the response body is over the size cap.
	CodeBodyTooLarge = "webfetch_too_large"
	// CodeDNSFailed: the host name did not resolve.
	CodeDNSFailed = "dns_failed"
	// CodeFetchFailed: connecting, TLS or the exchange failed (not a timeout).
	CodeFetchFailed = "fetch_failed"
	// CodeHTTPStatus: the server answered with a status other than 2xx (or a redirect
	// without a usable Location).
	CodeHTTPStatus = "http_status"
)

// Phases of one hop, as a timeout names them.
const (
	PhaseDNS     = "dns"
	PhaseConnect = "connect"
	PhaseTLS     = "tls"
	PhaseHeaders = "headers"
	PhaseBody    = "body"
)

// Resolver resolves a host name; *net.Resolver is one. Tests give a net.Resolver whose Dial
// reaches a DNS server of their own on loopback.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Fetcher fetches URLs. The zero value is not usable: use New.
type Fetcher struct {
	resolver Resolver
	getenv   func(string) string
	dial     dialer
}

// New returns a Fetcher resolving through r (nil: net.DefaultResolver) and reading the proxy
// variables through getenv (the process environment in production, read at each fetch).
func New(r Resolver, getenv func(string) string) *Fetcher {
	if r == nil {
		r = net.DefaultResolver
	}
	return &Fetcher{resolver: r, getenv: getenv, dial: dialer{net: net.Dialer{Timeout: connectTimeout}}}
}

// Request is one fetch.
type Request struct {
	URL string
	// Timeout bounds the whole fetch, redirects included: DefaultTimeout when 0, at most
	// MaxTimeout.
	Timeout time.Duration
	// MaxBody caps the body read (after content decoding): DefaultMaxBody when 0.
	MaxBody int64
	// Follow, when set, is asked before each redirect is followed, with the target's
	// canonical URL; an error refuses the redirect (its hop records the refusal) and ends the
	// fetch with that error.
	Follow func(url string) *domain.Error
}

// Hop is one request of a fetch as its result records it: what was asked, what the guard
// decided, where the connection went and what came back.
type Hop struct {
	URL string `json:"url"`
	// Addresses are every address the host resolved to (or its literal), all checked.
	Addresses []string `json:"addresses,omitempty"`
	// Pinned is the checked address the connection was made to.
	Pinned string `json:"pinned,omitempty"`
	Route  Route  `json:"route"`
	Status int    `json:"status,omitempty"`
	// Refused is the guard's refusal of this hop (its code and reason), when it was refused.
	Refused string `json:"refused,omitempty"`
}

// Result is a completed fetch.
type Result struct {
	FinalURL    string
	Status      int
	ContentType string
	Body        []byte
	Hops        []Hop
	Elapsed     time.Duration
}

// Error is a failed fetch: the typed error and the hops made before it.
type Error struct {
	Err  *domain.Error
	Hops []Hop
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Code is the stable code of the failure.
func (e *Error) Code() string { return e.Err.Code() }

// tracker follows the phase of the hop in flight, for the timeout's message.
type tracker struct {
	mu    sync.Mutex
	phase string
	route Route
	start time.Time
	// pinned is the address the hop in flight connected to; net/http dials in a goroutine of
	// its own, which may outlive the request, so it is written here, under the lock.
	pinned string
}

func (t *tracker) pin(a string) {
	t.mu.Lock()
	t.pinned = a
	t.mu.Unlock()
}

func (t *tracker) takePinned() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.pinned
	t.pinned = ""
	return p
}

func (t *tracker) set(phase string) {
	t.mu.Lock()
	t.phase = phase
	t.mu.Unlock()
}

func (t *tracker) now() (string, Route) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.phase, t.route
}

// Fetch fetches req.URL, following at most MaxRedirects redirects, each checked like the
// first. Every failure is an *Error carrying a *domain.Error with a stable code.
func (f *Fetcher) Fetch(ctx context.Context, req Request) (Result, error) {
	timeout := req.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	timeout = min(timeout, MaxTimeout)
	maxBody := req.MaxBody
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	tr := &tracker{start: time.Now()}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var hops []Hop
	raw := req.URL
	for n := 0; ; n++ {
		target, err := netguard.Parse(raw)
		if err != nil {
			hops = append(hops, Hop{URL: recordable(raw), Refused: refusedNote(err)})
			return Result{}, &Error{Err: asDomain(err), Hops: hops}
		}
		hop := Hop{URL: target.URL.String()}
		if n > 0 && req.Follow != nil {
			if derr := req.Follow(hop.URL); derr != nil {
				hop.Refused = derr.Code() + ": " + derr.Message
				return Result{}, &Error{Err: derr, Hops: append(hops, hop)}
			}
		}
		resp, err := f.hop(ctx, tr, target, &hop, maxBody)
		hops = append(hops, hop)
		if err != nil {
			return Result{}, &Error{Err: f.classify(ctx, tr, err, timeout), Hops: hops}
		}
		if loc, ok := redirect(resp); ok {
			if n == MaxRedirects {
				return Result{}, &Error{Err: domain.NewError(CodeTooManyRedirects,
					fmt.Sprintf("more than %d redirects (the last to %s)", MaxRedirects, recordable(loc)), "fetch the final URL directly"), Hops: hops}
			}
			next, err := target.URL.Parse(loc)
			if err != nil {
				return Result{}, &Error{Err: domain.NewError(CodeHTTPStatus,
					fmt.Sprintf("status %d redirects to %q, which does not parse", resp.status, recordable(loc)), "fetch another URL"), Hops: hops}
			}
			raw = next.String()
			continue
		}
		if resp.status < 200 || resp.status > 299 {
			return Result{}, &Error{Err: domain.NewError(CodeHTTPStatus,
				fmt.Sprintf("the server answered %d %s", resp.status, http.StatusText(resp.status)), "check the URL; the body was not returned"), Hops: hops}
		}
		return Result{FinalURL: target.URL.String(), Status: resp.status, ContentType: resp.contentType, Body: resp.body,
			Hops: hops, Elapsed: time.Since(tr.start)}, nil
	}
}

// maxRecordedURL bounds a refused URL as a hop records it.
const maxRecordedURL = 2048

// recordable is a URL the guard refused, as its hop records it: without user info (a
// redirect's Location may carry a password, which the record must not keep), and bounded.
func recordable(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = nil
		raw = u.String()
	} else if err != nil && strings.Contains(raw, "@") {
		return "(a URL that does not parse, with user info; not recorded)"
	}
	if len(raw) > maxRecordedURL {
		raw = strings.ToValidUTF8(raw[:maxRecordedURL], "") + "…"
	}
	return raw
}

// refusedNote is a guard refusal as a hop records it.
func refusedNote(err error) string {
	var d *domain.Error
	if errors.As(err, &d) {
		if d.ID != "" {
			return d.Code() + ": " + d.ID
		}
		return d.Code()
	}
	return err.Error()
}

func asDomain(err error) *domain.Error {
	var d *domain.Error
	if errors.As(err, &d) {
		return d
	}
	return domain.NewError(CodeFetchFailed, err.Error(), "try again later, or fetch another URL")
}

type response struct {
	status      int
	location    string
	contentType string
	body        []byte
}

func redirect(r response) (string, bool) {
	switch r.status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return r.location, r.location != ""
	}
	return "", false
}

// hop makes one request: route, resolve and check, pin, connect, exchange, read.
func (f *Fetcher) hop(ctx context.Context, tr *tracker, t netguard.Target, hop *Hop, maxBody int64) (response, error) {
	route, err := chooseRoute(f.getenv, t.URL)
	if err != nil {
		return response{}, err
	}
	hop.Route = route
	tr.mu.Lock()
	tr.route = route
	tr.mu.Unlock()
	tr.set(PhaseDNS)
	addrs, err := f.resolve(ctx, t)
	for _, a := range addrs {
		hop.Addresses = append(hop.Addresses, a.String())
	}
	if err != nil {
		hop.Refused = refusedNote(err)
		return response{}, err
	}
	// The transport alone, not an http.Client: a Client parses a redirect's Location itself
	// and quotes it whole in its error, password included; Fetch parses it and records it
	// without user info.
	transport := f.transport(tr, t, addrs, route)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.URL.String(), nil)
	if err != nil {
		return response{}, err
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", acceptHeader)
	resp, err := transport.RoundTrip(req)
	hop.Pinned = tr.takePinned()
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	hop.Status = resp.StatusCode
	out := response{status: resp.StatusCode, location: resp.Header.Get("Location"), contentType: resp.Header.Get("Content-Type")}
	if _, ok := redirect(out); ok || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return out, nil
	}
	tr.set(PhaseBody)
	if resp.ContentLength > maxBody {
		return out, tooLarge(resp.ContentLength, maxBody, "declares")
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return out, err
	}
	if int64(len(body)) > maxBody {
		return out, tooLarge(int64(len(body)), maxBody, "sent more than")
	}
	out.body = body
	return out, nil
}

func tooLarge(n, limit int64, verb string) error {
	msg := fmt.Sprintf("the response body %s %d bytes, over the cap of %d", verb, n, limit)
	if verb != "declares" {
		msg = fmt.Sprintf("the response body %s the cap of %d bytes; reading stopped there", verb, limit)
	}
	return domain.NewError(CodeBodyTooLarge, msg, "fetch a smaller resource (a more specific page, or a raw file)")
}

// resolve returns the host's addresses, every one checked: a literal is itself (Parse has
// checked it), a name is resolved once and refused as a whole if any answer is refused.
func (f *Fetcher) resolve(ctx context.Context, t netguard.Target) ([]netip.Addr, error) {
	if t.Literal() {
		return []netip.Addr{t.Addr}, nil
	}
	addrs, err := f.resolver.LookupNetIP(ctx, "ip", t.Host)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return nil, domain.NewError(CodeDNSFailed, fmt.Sprintf("%s does not resolve (no such host)", t.Host), "check the host name")
		}
		return nil, domain.NewError(CodeDNSFailed, fmt.Sprintf("resolving %s failed: %v", t.Host, err), "check the host name, or try again later")
	}
	if _, err := netguard.CheckAnswers(t.Host, addrs); err != nil {
		return addrs, err // every answer is recorded, the refused ones with the rest
	}
	return addrs, nil
}

// transport is one hop's HTTP transport: its dialers ignore the address net/http passes (the
// URL's host, which would be resolved again) and connect to the checked addresses only.
func (f *Fetcher) transport(tr *tracker, t netguard.Target, addrs []netip.Addr, route Route) *http.Transport {
	connect := func(ctx context.Context) (net.Conn, error) {
		tr.set(PhaseConnect)
		var errs []error
		for _, a := range addrs {
			if r := netguard.Classify(a); r != "" { // checked already; checked again where it is used
				return nil, netguard.Refused(t.Host, a, r)
			}
			conn, err := f.dial.open(ctx, route, netip.AddrPortFrom(a, t.Port))
			if err == nil {
				tr.pin(a.String())
				return conn, nil
			}
			errs = append(errs, err)
			if ctx.Err() != nil || route.Kind != RouteDirect {
				break // a proxy's failure is the fetch's: no other address, no direct retry
			}
		}
		return nil, &dialError{route: route, err: errors.Join(errs...)}
	}
	return &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			conn, err := connect(ctx)
			if err == nil {
				tr.set(PhaseHeaders)
			}
			return conn, err
		},
		DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			conn, err := connect(ctx)
			if err != nil {
				return nil, err
			}
			tr.set(PhaseTLS)
			tc := tls.Client(conn, f.tlsConfig(t))
			if err := tc.HandshakeContext(ctx); err != nil {
				conn.Close()
				return nil, fmt.Errorf("TLS with %s: %w", t.Host, err)
			}
			tr.set(PhaseHeaders)
			return tc, nil
		},
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: maxHeaderBytes,
		ResponseHeaderTimeout:  0,
		ForceAttemptHTTP2:      false,
	}
}

// tlsConfig verifies the certificate for the original host name, which is also the SNI.
func (f *Fetcher) tlsConfig(t netguard.Target) *tls.Config {
	return &tls.Config{ServerName: t.Host, RootCAs: f.dial.roots, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
}

// dialError is a connection that could not be made over a route.
type dialError struct {
	route Route
	err   error
}

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// classify turns what went wrong into the typed error: a timeout names its route, phase and
// elapsed time; a proxy's failure says no direct connection was tried.
func (f *Fetcher) classify(ctx context.Context, tr *tracker, err error, timeout time.Duration) *domain.Error {
	var d *domain.Error
	if errors.As(err, &d) && d.Code() != CodeFetchFailed {
		return d
	}
	phase, route := tr.now()
	elapsed := time.Since(tr.start).Round(time.Millisecond)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		e := domain.NewError(CodeTimeout, fmt.Sprintf("timed out after %s (limit %s): route %s, phase %s, elapsed %s",
			elapsed, timeout, routeName(route), phase, elapsed), "raise timeout (seconds, at most 120), or fetch a smaller resource")
		e.ID = route.Kind + "/" + phase
		return e
	}
	if ctx.Err() != nil {
		return domain.NewError("cancelled", "the fetch was cancelled", "nothing to do")
	}
	if route.Kind != RouteDirect && route.Kind != "" && (phase == PhaseConnect || phase == PhaseDNS) {
		return proxyError(route, phase, err)
	}
	var de *dialError
	if errors.As(err, &de) {
		return domain.NewError(CodeFetchFailed, fmt.Sprintf("connecting over route %s failed in phase %s: %v", routeName(route), phase, de.err),
			"check the URL, or try again later")
	}
	return domain.NewError(CodeFetchFailed, fmt.Sprintf("route %s, phase %s: %v", routeName(route), phase, unwrapURL(err)),
		"check the URL, or try again later")
}

func proxyError(r Route, phase string, err error) *domain.Error {
	where := ""
	if phase != "" {
		where = " in phase " + phase
	}
	e := domain.NewError(CodeProxyFailed, fmt.Sprintf("the proxy route %s failed%s: %v; no direct connection was tried", routeName(r), where, unwrapURL(err)),
		"fix or unset the proxy variable ("+r.Source+"), or add the host to NO_PROXY to go direct on purpose")
	e.ID = r.Kind
	return e
}

func routeName(r Route) string {
	if r.Proxy == "" {
		return r.Kind
	}
	return r.Kind + " " + r.Proxy
}

// unwrapURL drops net/http's "Get \"url\": " prefix, which would repeat the URL.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
