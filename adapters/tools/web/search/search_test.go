package search_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/tools/web/search"
)

const (
	secretKey   = "sk-live-7f3a9c2e1b"
	secretQuery = "internal codename aurora-halberd"
)

// searx is a real HTTP server speaking SearxNG's JSON API; status forces an answer.
type searx struct {
	*httptest.Server
	mu     sync.Mutex
	status int
	delay  time.Duration
	gotQ   []string
	gotKey []string
}

func newSearx(t *testing.T) *searx {
	s := &searx{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.gotQ = append(s.gotQ, r.URL.Query().Get("q")+"|"+r.URL.Query().Get("format"))
		s.gotKey = append(s.gotKey, r.Header.Get("Authorization"))
		status, delay := s.status, s.delay
		s.mu.Unlock()
		if delay > 0 {
			time.Sleep(delay)
		}
		if status != 0 {
			w.WriteHeader(status)
			fmt.Fprintf(w, "<html>echo of %s</html>", r.URL.String()) // not JSON, and full of secrets
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"query": r.URL.Query().Get("q"), "results": []map[string]string{
			{"title": "One", "url": "https://one.example/", "content": "first", "engine": "x"},
			{"title": "Two", "url": "https://two.example/", "content": "second"},
			{"title": "Three", "url": "https://three.example/"},
		}})
	}))
	t.Cleanup(s.Close)
	return s
}

// TestSearxNG: the query and format=json go as parameters, the key as a bearer token, and the
// results come back bounded by the limit.
func TestSearxNG(t *testing.T) {
	s := newSearx(t)
	p, err := search.Open(search.Config{URL: s.URL + "/search", APIKey: "{env:ZUNO_SEARCH_KEY}"}, func(k string) string {
		if k == "ZUNO_SEARCH_KEY" {
			return secretKey
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	hits, err := p.Search(context.Background(), search.Query{Text: "go netip", Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0] != (search.Hit{Title: "One", URL: "https://one.example/", Snippet: "first"}) {
		t.Fatalf("hits %+v", hits)
	}
	if s.gotQ[0] != "go netip|json" || s.gotKey[0] != "Bearer "+secretKey {
		t.Fatalf("server saw %v %v", s.gotQ, s.gotKey)
	}
}

// TestDiagnosticsCarryNoSecrets: whatever fails, the error and the log line name the
// provider, scheme, host, path, status and class, and never the key, the auth header or the
// query (seeds 000) — though the server echoes the whole URL back in its body.
func TestDiagnosticsCarryNoSecrets(t *testing.T) {
	s := newSearx(t)
	var logs bytes.Buffer
	rows := []struct {
		status int
		delay  time.Duration
		class  string
		url    string
	}{
		{http.StatusUnauthorized, 0, search.ClassAuth, s.URL + "/search"},
		{http.StatusForbidden, 0, search.ClassAuth, s.URL + "/search"},
		{http.StatusTooManyRequests, 0, search.ClassRateLimit, s.URL + "/search"},
		{http.StatusInternalServerError, 0, search.ClassStatus, s.URL + "/search?token=" + secretKey},
		{0, 300 * time.Millisecond, search.ClassTimeout, s.URL + "/search"},
		{0, 0, search.ClassTransport, "http://127.0.0.1:1/search"},
		{http.StatusOK, 0, search.ClassDecode, s.URL + "/search"},
	}
	for _, r := range rows {
		t.Run(r.class+fmt.Sprint(r.status), func(t *testing.T) {
			s.mu.Lock()
			s.status, s.delay = r.status, r.delay
			s.mu.Unlock()
			p, err := search.NewSearxNG(r.url, secretKey)
			if err != nil {
				t.Fatal(err)
			}
			p.Log = slog.New(slog.NewTextHandler(&logs, nil))
			ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
			defer cancel()
			_, err = p.Search(ctx, search.Query{Text: secretQuery})
			var se *search.Error
			if !errors.As(err, &se) || se.Class != r.class || se.Status != r.status {
				t.Fatalf("err %#v, want class %s status %d", err, r.class, r.status)
			}
			if se.Provider != "searxng" || se.Scheme != "http" || se.Path != "/search" || se.Host == "" {
				t.Fatalf("diagnostic %+v", se.Diagnostic)
			}
			for _, text := range []string{err.Error(), fmt.Sprintf("%+v", se), logs.String()} {
				for _, secret := range []string{secretKey, "Bearer", "aurora", "codename", "token="} {
					if strings.Contains(text, secret) {
						t.Fatalf("%q leaks %q", text, secret)
					}
				}
			}
		})
	}
	if !strings.Contains(logs.String(), "class=auth") || !strings.Contains(logs.String(), "path=/search") {
		t.Fatalf("log %s", logs.String())
	}
}

// TestConfig: the provider is chosen and checked when the configuration is read.
func TestConfig(t *testing.T) {
	env := func(string) string { return "" }
	for _, c := range []search.Config{{Provider: "google"}, {URL: "ftp://x/"}, {URL: "https://u:p@x/"}, {URL: "https://x/", APIKey: "{env:HOME}"},
		{Provider: "scripted", File: "/nonexistent"}} {
		if _, err := search.Open(c, env); err == nil {
			t.Errorf("%+v opened", c)
		}
	}
	file := filepath.Join(t.TempDir(), "hits.json")
	os.WriteFile(file, []byte(`{"q": [{"title": "A", "url": "https://a.example/"}, {"title": "B", "url": "https://b.example/"}]}`), 0o644)
	p, err := search.Open(search.Config{Provider: "scripted", File: file}, env)
	if err != nil || p.Network() {
		t.Fatal(err)
	}
	hits, _ := p.Search(context.Background(), search.Query{Text: "q", Limit: 1})
	if len(hits) != 1 || hits[0].Title != "A" {
		t.Fatalf("hits %+v", hits)
	}
}
