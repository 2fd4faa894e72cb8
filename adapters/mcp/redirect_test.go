package mcp_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	zmcp "github.com/zuno-run/zuno/adapters/mcp"
)

// A remote server's headers hold the user's credential for that endpoint. An answer that
// redirects elsewhere (an open redirect on the host, a compromised endpoint) must not carry
// them on: Go's client drops Authorization on a redirect to another host, and Zuno's header
// transport, which runs on every hop, must not put it back.
func TestHeadersNotSentAcrossARedirect(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+"|"+r.Header.Get("X-Api-Key"))
		mu.Unlock()
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer other.Close()
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer endpoint.Close()
	rec := &recorder{}
	rt := runtime(t, rec, zmcp.Server{Name: "docs", Configured: "docs", Transport: zmcp.TransportHTTP, URL: endpoint.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer SECRET", "X-Api-Key": "SECRET2"}, Enabled: true, Timeout: 5 * time.Second})
	connect(t, rt)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the premise: the redirect was not followed")
	}
	for _, s := range seen {
		if s != "|" {
			t.Fatalf("the other host received the endpoint's headers: %q", seen)
		}
	}
}
