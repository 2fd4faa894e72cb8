package httpapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// The parsers of what a client sends: Last-Event-ID, ids in paths, Origin and Sec-Fetch-Site,
// a bearer token, and a JSON body. None panics; each accepts only what it documents and
// refuses the rest with a typed error.
func FuzzRequestParsers(f *testing.F) {
	for _, s := range []string{"", "0", "42", "18446744073709551616", "-1", "1e3", " 1", "..", "%2e%2e", "a/b",
		"ses_\x00", "https://evil.example", "null", "127.0.0.1:7421", `{"commandId":"a","prompt":"b"}`, `{"x":1}`,
		`{"sessionId":"ses_1","mode":"archive"}`, `{"commandId":"a","prompt":"b","steer":true}`} {
		f.Add(s, s, s)
	}
	tokens := &Tokens{}
	if err := tokens.Add("ops", "ops-token-0123456789"); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, header, id, body string) {
		r := httptest.NewRequest("POST", "/api/sessions/x/abort", strings.NewReader(body))
		r.Header.Set("Last-Event-ID", header)
		after, err := resumeAfter(r)
		if n, perr := strconv.ParseUint(header, 10, 64); header != "" && (perr == nil) != (err == nil) || err == nil && header != "" && n != after {
			t.Fatalf("Last-Event-ID %q: %d, %v", header, after, err)
		}
		checkTyped(t, err)

		r.SetPathValue("sessionId", id)
		err = checkIDs(r, "/api/sessions/{sessionId}/abort")
		if (err == nil) != idPattern.MatchString(id) || err == nil && (strings.Contains(id, "..") || strings.ContainsAny(id, "/\\\x00%")) {
			t.Fatalf("id %q: %v", id, err)
		}
		checkTyped(t, err)

		r.Header.Set("Origin", header)
		r.Header.Set("Sec-Fetch-Site", id)
		checkTyped(t, sameOrigin(r))

		if name, ok := tokens.Match(header); ok != (header == "ops-token-0123456789") || ok && name != "ops" {
			t.Fatalf("token %q matched %q %v", header, name, ok)
		}

		r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 64)
		var req abortRequest
		checkTyped(t, decodeOptional(r, &req))
		// The bodies of the other writes go through the same strict decoder.
		for _, into := range []any{&pruneRequest{}, &messageRequest{}, &newSessionRequest{}, &replyRequest{}} {
			r := httptest.NewRequest("POST", "/api/session/prune", strings.NewReader(body))
			r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 64)
			checkTyped(t, decode(r, into))
		}
	})
}

func checkTyped(t *testing.T, err error) {
	t.Helper()
	var e *Error
	if err != nil && (!errors.As(err, &e) || e.Code() == "" || e.Fix == "") {
		t.Fatalf("untyped error: %v", err)
	}
}
