package mcp

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// An HTTP server's JSON answer is bounded as a stdio frame is: past MaxMessageBytes the read
// fails instead of growing; an event stream is left to the SDK's per-event bound.
func TestHTTPAnswerBounded(t *testing.T) {
	big := strings.Repeat("x", MaxMessageBytes+1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "no header", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", r.URL.Query().Get("type"))
		_, _ = io.WriteString(w, big)
	}))
	defer srv.Close()
	c := &http.Client{Transport: headers{set: map[string]string{"Authorization": "Bearer k"}, origin: origin(srv.URL)}}
	for _, tc := range []struct {
		typ  string
		fail bool
	}{{"application/json", true}, {"application/json; charset=utf-8", true}, {"text/event-stream", false}} {
		resp, err := c.Get(srv.URL + "?type=" + url.QueryEscape(tc.typ))
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if tc.fail && (err == nil || n != MaxMessageBytes) {
			t.Errorf("%s: read %d bytes, err %v; want a failure at %d", tc.typ, n, err, MaxMessageBytes)
		}
		if !tc.fail && (err != nil || n != int64(len(big))) {
			t.Errorf("%s: read %d bytes, err %v", tc.typ, n, err)
		}
	}
}
