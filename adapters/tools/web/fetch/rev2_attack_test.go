package fetch_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/web/fetch"
	"github.com/zuno-run/zuno/adapters/tools/web/netguard"
	"github.com/zuno-run/zuno/adapters/tools/web/webtest"
)

// TestReviewGuardSpellings: spellings of refused hosts the review tried (docs/web.md,
// "Attacks"); each must be refused before anything is sent.
func TestReviewGuardSpellings(t *testing.T) {
	rows := []struct{ url, code string }{
		{"http://[::ffff:7f00:1]/", netguard.CodeAddressRefused},
		{"http://[::1]/", netguard.CodeAddressRefused},
		{"http://[0:0:0:0:0:ffff:127.0.0.1]/", netguard.CodeAddressRefused},
		{"http://[::ffff:169.254.169.254]/", netguard.CodeAddressRefused},
		{"http://[::127.0.0.1]/", netguard.CodeAddressRefused},
		{"http://[64:ff9b::7f00:1]/", netguard.CodeAddressRefused},
		{"http://[64:ff9b::a9fe:a9fe]/", netguard.CodeAddressRefused},
		{"http://[fe80::1%25eth0]/", netguard.CodeAddressRefused},
		{"http://[2606:4700::1%25eth0]/", netguard.CodeAddressRefused},
		{"http://[::]/", netguard.CodeAddressRefused},
		{"http://localhost./", netguard.CodeAddressRefused},
		{"http://LOCALHOST/", netguard.CodeAddressRefused},
		{"http://a.localhost./", netguard.CodeAddressRefused},
		{"http://127.0.0.1./", netguard.CodeAddressRefused},
		{"HTTP://127.0.0.1/", netguard.CodeAddressRefused},
		{"http:/127.0.0.1/", netguard.CodeURLInvalid},
		{"http:127.0.0.1/", netguard.CodeURLInvalid},
		{"http://public.test%40127.0.0.1/", netguard.CodeURLInvalid},
		{"http://public.test%2540@127.0.0.1/", netguard.CodeURLCredentials},
		{"http://%31%32%37.0.0.1/", netguard.CodeURLInvalid},
		{"http://127.1/", netguard.CodeAddressRefused},
		{"http://0/", netguard.CodeAddressRefused},
		{"http://0x7f000001/", netguard.CodeAddressRefused},
		{"http://017700000001/", netguard.CodeAddressRefused},
		{"http://ｌｏｃａｌｈｏｓｔ/", netguard.CodeAddressRefused},
		{"http://127。0。0。1/", netguard.CodeAddressRefused},
		{"http://１２７.０.０.１/", netguard.CodeAddressRefused},
		{"http://127.0.0.1:80@public.test/", netguard.CodeURLCredentials},
		{"http://localhost%00/", netguard.CodeURLInvalid},
		{"http://[::ffff:127.0.0.1]:80/", netguard.CodeAddressRefused},
		{"gopher://public.test/", netguard.CodeURLScheme},
		{"//127.0.0.1/", netguard.CodeURLScheme},
	}
	w := newWorld(t, webtest.Static(table), page("x"), nil)
	for _, r := range rows {
		t.Run(r.url, func(t *testing.T) {
			before := w.origin.hits.Load()
			_, err := w.f.Fetch(context.Background(), fetch.Request{URL: r.url})
			if codeOf(err) != r.code {
				t.Fatalf("code %q, want %q: %v", codeOf(err), r.code, err)
			}
			if w.origin.hits.Load() != before {
				t.Fatal("the origin was reached")
			}
		})
	}
}

// TestReviewRedirectSpellings: redirects to other schemes and scheme-relative private hosts.
func TestReviewRedirectSpellings(t *testing.T) {
	var to string
	w := newWorld(t, webtest.Static(table), func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/go" {
			rw.Header().Set("Location", to)
			rw.WriteHeader(http.StatusTemporaryRedirect)
			return
		}
		page("landed")(rw, r)
	}, nil)
	rows := []struct{ to, code string }{
		{"file:///etc/passwd", netguard.CodeURLScheme},
		{"gopher://public.test/", netguard.CodeURLScheme},
		{"//127.0.0.1/", netguard.CodeAddressRefused},
		{"//[::1]/", netguard.CodeAddressRefused},
		{"http://u:SECRET@public.test/", netguard.CodeURLCredentials},
		{"/%2F%2F127.0.0.1/", ""},
	}
	for _, r := range rows {
		t.Run(r.to, func(t *testing.T) {
			to = r.to
			_, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("public.test", "/go")})
			if codeOf(err) != r.code {
				t.Fatalf("code %q, want %q: %v", codeOf(err), r.code, err)
			}
			if err != nil && strings.Contains(err.Error(), "SECRET") {
				t.Fatalf("the Location's password reached the error: %v", err)
			}
		})
	}
}

// TestReviewRedirectPasswordInErrors: a Location's password must not reach the error the
// model reads, whether the redirect is one too many or does not parse.
func TestReviewRedirectPasswordInErrors(t *testing.T) {
	w := newWorld(t, webtest.Static(table), func(rw http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/r/%d", &n)
		switch {
		case r.URL.Path == "/bad":
			rw.Header().Set("Location", "http://u:SECRET@[::1")
			rw.WriteHeader(http.StatusFound)
		case n == 1:
			rw.Header().Set("Location", "http://u:SECRET@public.test/")
			rw.WriteHeader(http.StatusFound)
		case n > 1:
			http.Redirect(rw, r, fmt.Sprintf("/r/%d", n-1), http.StatusFound)
		default:
			page("end")(rw, r)
		}
	}, nil)
	for _, path := range []string{"/r/6", "/bad"} {
		_, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("public.test", path)})
		if err == nil {
			t.Fatalf("%s: no error", path)
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: the Location's password reached the error: %v", path, err)
		}
	}
}

// TestReviewGzipBomb: a small compressed body that decompresses past the cap is refused at
// the cap, not inflated whole.
func TestReviewGzipBomb(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zero := make([]byte, 1<<20)
	for range 64 {
		zw.Write(zero)
	}
	zw.Close()
	bomb := buf.Bytes()
	w := newWorld(t, webtest.Static(table), func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain")
		rw.Header().Set("Content-Encoding", "gzip")
		rw.Write(bomb)
	}, nil)
	_, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("public.test", "/"), MaxBody: 1 << 20})
	if codeOf(err) != fetch.CodeBodyTooLarge {
		t.Fatalf("gzip bomb: %v", err)
	}
}

// TestReviewEndlessAndHugeHeaders: a never-ending chunked body stops at the cap; headers over
// the limit fail the fetch.
func TestReviewEndlessAndHugeHeaders(t *testing.T) {
	w := newWorld(t, webtest.Static(table), func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/headers" {
			for i := range 200 {
				rw.Header().Set(fmt.Sprintf("X-Big-%d", i), strings.Repeat("h", 1000))
			}
			page("x")(rw, r)
			return
		}
		chunk := strings.Repeat("z", 4096)
		for r.Context().Err() == nil {
			if _, err := fmt.Fprint(rw, chunk); err != nil {
				return
			}
			rw.(http.Flusher).Flush()
		}
	}, nil)
	if _, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("public.test", "/endless"), MaxBody: 1 << 20}); codeOf(err) != fetch.CodeBodyTooLarge {
		t.Fatalf("endless: %v", err)
	}
	if _, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("public.test", "/headers")}); codeOf(err) != fetch.CodeFetchFailed {
		t.Fatalf("huge headers: %v", err)
	}
}

// TestReviewProxyLowercaseAndNoProxyWildcard: a lowercase http_proxy is honoured (never a
// silent direct route), and a NO_PROXY wildcard sends the host direct, still guarded.
func TestReviewProxyLowercaseAndNoProxyWildcard(t *testing.T) {
	for _, np := range []string{"*", ".test", "*.test", "public.test"} {
		w := newWorld(t, webtest.Static(table), page("x"), env(map[string]string{"http_proxy": "http://127.0.0.1:1", "NO_PROXY": np}))
		if _, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("private.test", "/")}); codeOf(err) != netguard.CodeAddressRefused {
			t.Fatalf("NO_PROXY=%s private: %v", np, err)
		}
	}
	w := newWorld(t, webtest.Static(table), page("x"), env(map[string]string{"http_proxy": "http://127.0.0.1:1"}))
	if _, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("public.test", "/")}); codeOf(err) != fetch.CodeProxyFailed {
		t.Fatalf("lowercase http_proxy: %v", err)
	}
	if w.origin.hits.Load() != 0 {
		t.Fatal("went direct")
	}
}

// TestReviewProxyPasswordNotQuoted: a proxy variable that does not parse must not have its
// password quoted in the error the model reads and the log records.
func TestReviewProxyPasswordNotQuoted(t *testing.T) {
	for _, v := range []string{"http://user:SECRET@proxy.test:99999", "http://user:SECRET@proxy.test:8080/%zz", "ftp://user:SECRET@proxy.test:21", "http://user:SECRET@[::1"} {
		w := newWorld(t, webtest.Static(table), page("x"), env(map[string]string{"HTTP_PROXY": v}))
		_, err := w.f.Fetch(context.Background(), fetch.Request{URL: w.url("public.test", "/")})
		if codeOf(err) != fetch.CodeProxyFailed {
			t.Errorf("%s: %v", v, err)
		}
		if err != nil && strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%s: the proxy's password is in the error: %v", v, err)
		}
		var fe *fetch.Error
		if errors.As(err, &fe) && strings.Contains(fmt.Sprint(fe.Hops), "SECRET") {
			t.Errorf("%s: the proxy's password is in the hops: %v", v, fe.Hops)
		}
	}
}
