package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/faces/httpapi"
)

const goodToken = "good-token-0123456789abcdef"

// The attack table (issue 28): each row is a hostile request through real HTTP on loopback
// and the answer the server must give.
func TestAttacks(t *testing.T) {
	var logged bytes.Buffer
	var logMu sync.Mutex
	f := newFixture(t, options{tokens: map[string]string{"ops": goodToken}, cfg: func(c *httpapi.Config) {
		c.MaxBody = 4 << 10
		c.ReadHeaderTimeout, c.ReadTimeout = 300*time.Millisecond, 600*time.Millisecond
		c.Log = lockedWriter{&logged, &logMu}
	}})
	if _, err := f.app.Commands.CreateSession(context.Background(), meta("c-s"), app.NewSession{SessionID: "ses_a", Title: "a", Agent: "build"}); err != nil {
		t.Fatal(err)
	}
	const wrongToken = "wrong-token-0123456789abcdef"
	for _, c := range []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		code                     string
	}{
		{"no token: a read", "GET", "/api/sessions", "", []string{"Authorization", ""}, 401, "unauthorized"},
		{"no token: a write", "POST", "/api/sessions", `{"commandId":"x","prompt":"hi"}`, []string{"Authorization", ""}, 401, "unauthorized"},
		{"no token: the document", "GET", "/openapi.json", "", []string{"Authorization", ""}, 401, "unauthorized"},
		{"no token: a route that does not exist", "GET", "/api/secret", "", []string{"Authorization", ""}, 401, "unauthorized"},
		{"no token: an event stream", "GET", "/api/events", "", []string{"Authorization", ""}, 401, "unauthorized"},
		{"wrong token", "GET", "/api/sessions", "", []string{"Authorization", "Bearer " + wrongToken}, 401, "unauthorized"},
		{"the token's prefix", "GET", "/api/sessions", "", []string{"Authorization", "Bearer " + goodToken[:10]}, 401, "unauthorized"},
		{"the token with more", "GET", "/api/sessions", "", []string{"Authorization", "Bearer " + goodToken + "x"}, 401, "unauthorized"},
		{"the token as Basic", "GET", "/api/sessions", "", []string{"Authorization", "Basic " + goodToken}, 401, "unauthorized"},
		{"the token in the query", "GET", "/api/sessions?access_token=" + goodToken, "", []string{"Authorization", ""}, 401, "unauthorized"},
		{"oversized body", "POST", "/api/sessions", `{"commandId":"big","prompt":"` + strings.Repeat("a", 8<<10) + `"}`, nil, 413, "body_too_large"},
		{"oversized reply", "POST", "/api/sessions/ses_a/asks/ask_x/reply", `{"reply":"` + strings.Repeat("o", 8<<10) + `"}`, nil, 413, "body_too_large"},
		{"path: ../ out of the API (cleaned, redirected, not found)", "GET", "/api/sessions/../../etc/passwd", "", nil, 404, "route_not_found"},
		{"path: %2e%2e as a session", "GET", "/api/sessions/%2e%2e", "", nil, 400, "bad_id"},
		{"path: encoded slashes", "GET", "/api/sessions/..%2F..%2Fetc%2Fpasswd", "", nil, 400, "bad_id"},
		{"path: encoded backslashes", "GET", "/api/sessions/ses%5c..%5cx", "", nil, 400, "bad_id"},
		{"path: NUL", "GET", "/api/sessions/ses_a%00", "", nil, 400, "bad_id"},
		{"path: a receipt id that climbs", "GET", "/api/receipts/%2e%2e%2f%2e%2e%2fzuno.db", "", nil, 400, "bad_id"},
		{"path: an ask id that climbs", "POST", "/api/sessions/ses_a/asks/..%2fask/reply", `{"reply":"once"}`, nil, 400, "bad_id"},
		{"path: an event stream of ..", "GET", "/api/sessions/%2E%2E/events", "", nil, 400, "bad_id"},
		{"path: an id too long", "GET", "/api/sessions/" + strings.Repeat("s", 300), "", nil, 400, "bad_id"},
		{"verify: a session id that climbs", "POST", "/api/verify", `{"session":"../x"}`, nil, 400, "bad_id"},
		{"CSRF: Origin of another site", "POST", "/api/sessions", `{"commandId":"csrf1","prompt":"hi"}`, []string{"Origin", "https://evil.example"}, 403, "cross_origin"},
		{"CSRF: Origin null", "POST", "/api/sessions", `{"commandId":"csrf2","prompt":"hi"}`, []string{"Origin", "null"}, 403, "cross_origin"},
		{"CSRF: Sec-Fetch-Site cross-site", "POST", "/api/sessions/ses_a/abort", "", []string{"Sec-Fetch-Site", "cross-site"}, 403, "cross_origin"},
		{"CSRF: Sec-Fetch-Site same-site", "POST", "/api/verify", "", []string{"Sec-Fetch-Site", "same-site"}, 403, "cross_origin"},
		{"CSRF: a reply from another origin", "POST", "/api/sessions/ses_a/asks/ask_x/reply", `{"reply":"always"}`, []string{"Origin", "http://127.0.0.1.evil.example"}, 403, "cross_origin"},
		{"a reply to an ask never asked", "POST", "/api/sessions/ses_a/asks/ask_never/reply", `{"reply":"once"}`, nil, 404, "ask_not_pending"},
		{"malformed JSON", "POST", "/api/sessions", `{"commandId":`, nil, 400, "bad_request"},
		{"two JSON values", "POST", "/api/sessions", `{"commandId":"a","prompt":"b"}{}`, nil, 400, "bad_request"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := f.do(c.method, c.path, c.body, c.headers...)
			if r.status != c.status || r.code() != c.code {
				t.Fatalf("%d %s, want %d %s", r.status, r.body, c.status, c.code)
			}
			if r.header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatalf("CORS header %q", r.header.Get("Access-Control-Allow-Origin"))
			}
		})
	}

	t.Run("a read from another origin gets no CORS header, and a preflight none", func(t *testing.T) {
		for _, m := range []string{"GET", "OPTIONS"} {
			r := f.do(m, "/api/sessions", "", "Origin", "https://evil.example", "Access-Control-Request-Method", "POST")
			if r.header.Get("Access-Control-Allow-Origin") != "" || r.header.Get("Access-Control-Allow-Methods") != "" {
				t.Fatalf("%s: CORS headers %v", m, r.header)
			}
		}
	})
	t.Run("a write from the same origin passes the check", func(t *testing.T) {
		r := f.do("POST", "/api/verify", "", "Origin", f.base, "Sec-Fetch-Site", "same-origin")
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("slowloris: headers sent too slowly are cut off at ReadHeaderTimeout", func(t *testing.T) {
		c := f.rawConn()
		start := time.Now()
		io.WriteString(c, "GET /api/sessions HTTP/1.1\r\nHost: x\r\n")
		for range 20 {
			if _, err := io.WriteString(c, "X-Slow: 1\r\n"); err != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		closedWithin(t, c, start, 3*time.Second)
	})
	t.Run("slow body: a body sent too slowly is cut off at ReadTimeout", func(t *testing.T) {
		c := f.rawConn()
		start := time.Now()
		io.WriteString(c, "POST /api/verify HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+goodToken+"\r\nContent-Length: 100\r\n\r\n{")
		for range 20 {
			if _, err := io.WriteString(c, " "); err != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		closedWithin(t, c, start, 3*time.Second)
	})
	t.Run("neither token is in the server's log", func(t *testing.T) {
		logMu.Lock()
		defer logMu.Unlock()
		if logged.Len() == 0 || strings.Contains(logged.String(), goodToken) || strings.Contains(logged.String(), wrongToken) ||
			strings.Contains(logged.String(), goodToken[:10]) {
			t.Fatalf("log:\n%s", logged.String())
		}
	})
}

// closedWithin fails unless the server ends the connection (a 408 or a close) within limit.
func closedWithin(t *testing.T, c net.Conn, start time.Time, limit time.Duration) {
	t.Helper()
	c.SetReadDeadline(start.Add(limit))
	status, err := bufio.NewReader(c).ReadString('\n')
	t.Logf("after %v: %q %v", time.Since(start).Round(time.Millisecond), status, err)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the connection is still open after %v", limit)
	}
	if status != "" && !strings.Contains(status, "408") && !strings.Contains(status, "400") {
		t.Fatalf("the slow request got %q", status)
	}
}

type lockedWriter struct {
	b  *bytes.Buffer
	mu *sync.Mutex
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// A server that other machines can reach needs a token: without one it does not listen.
func TestBindNeedsATokenBeyondLoopback(t *testing.T) {
	tokens := &httpapi.Tokens{}
	with := &httpapi.Tokens{}
	if err := with.Add("ops", goodToken); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		addr   string
		tokens *httpapi.Tokens
		ok     bool
	}{
		{"127.0.0.1:0", tokens, true},
		{"127.0.0.2:0", tokens, true},
		{"[::1]:0", tokens, true},
		{"localhost:0", tokens, true},
		{"0.0.0.0:0", tokens, false},
		{":0", tokens, false},
		{"[::]:0", tokens, false},
		{"192.0.2.1:0", tokens, false},
		{"example.com:0", tokens, false},
		{"127.0.0.1", tokens, false}, // no port: not an address
		{"0.0.0.0:0", with, true},
	} {
		err := httpapi.CheckBind(c.addr, c.tokens)
		if (err == nil) != c.ok {
			t.Errorf("%s with %d tokens: %v", c.addr, c.tokens.Len(), err)
		}
		if err != nil && app.CodeOf(err) != httpapi.CodeBindRefused {
			t.Errorf("%s: code %q", c.addr, app.CodeOf(err))
		}
	}
	s := httpapi.New(nil, httpapi.Config{Addr: "0.0.0.0:0"})
	if l, err := s.Listen(); err == nil {
		l.Close()
		t.Fatal("listened on 0.0.0.0 without a token")
	}
}
