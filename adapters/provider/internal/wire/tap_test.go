package wire

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/domain/model"
)

// The endpoint is recorded; every place a credential can ride in a URL is not.
func TestPublicDropsCredentials(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1/chat/completions"},
		{"https://user:sk-secret@gw.example/v1/messages", "https://gw.example/v1/messages"},
		{"https://sk-secret@gw.example/v1/messages", "https://gw.example/v1/messages"},
		{"https://gw.example/v1/chat/completions?key=sk-secret&api-version=1", "https://gw.example/v1/chat/completions"},
		{"https://gw.example/v1/chat/completions#sk-secret", "https://gw.example/v1/chat/completions"},
		{"http://127.0.0.1:8080/v1/chat/completions", "http://127.0.0.1:8080/v1/chat/completions"},
		{"https://gw.example/tenant%2Fa/v1/messages", "https://gw.example/tenant%2Fa/v1/messages"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := Public(u); got != tt.want || strings.Contains(got, "secret") {
			t.Errorf("Public(%s) = %s, want %s", tt.raw, got, tt.want)
		}
	}
}

// Tap records the body as the next handler receives it (a plain reader, or a Body whose bytes
// it hashes in place), the response body however it is read (to the end, partly then closed,
// or not at all), and nothing of the headers.
func TestTapRecordsBothBodies(t *testing.T) {
	for _, own := range []bool{false, true} {
		t.Run(fmt.Sprintf("Body=%v", own), func(t *testing.T) { tapRecordsBothBodies(t, own) })
	}
}

func tapRecordsBothBodies(t *testing.T, own bool) {
	const reply = "data: {\"a\":1}\n\ndata: [DONE]\n\ntrailing bytes the SDK never reads"
	tests := []struct {
		name string
		read func(io.ReadCloser)
	}{
		{"read to the end", func(b io.ReadCloser) { _, _ = io.ReadAll(b); b.Close() }},
		{"read partly, then closed", func(b io.ReadCloser) { _, _ = b.Read(make([]byte, 5)); b.Close() }},
		{"closed unread", func(b io.ReadCloser) { b.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got, _ = io.ReadAll(r.Body)
				_, _ = io.WriteString(w, reply)
			}))
			defer srv.Close()
			ctx, c := model.CaptureWire(context.Background())
			body := []byte(`{"model":"m","messages":[{"role":"user","content":"<é>"}]}`)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions?key=sk-secret", bytes.NewReader(body))
			if own {
				req.Body, req.ContentLength = NewBody(body), int64(len(body))
			}
			req.Header.Set("Authorization", "Bearer sk-secret")
			tap := Tap(ctx, Mapping{Adapter: "openai.chat", Version: 3, Settings: map[string]string{"dialect": "compatible"}})
			resp, err := tap(req, http.DefaultClient.Do)
			if err != nil {
				t.Fatal(err)
			}
			tt.read(resp.Body)
			w, sent := c.Wire()
			want := model.Wire{Adapter: "openai.chat", MappingVersion: 3, Mapping: map[string]string{"dialect": "compatible"},
				Endpoint: srv.URL + "/v1/chat/completions", RequestSHA256: digest([]byte(body)), RequestBytes: int64(len(body)),
				ResponseSHA256: digest([]byte(reply)), ResponseBytes: int64(len(reply)), Status: 200}
			if !sent || !bytes.Equal(got, body) || w.Adapter != want.Adapter || w.MappingVersion != want.MappingVersion ||
				w.Mapping["dialect"] != "compatible" || w.Endpoint != want.Endpoint || w.RequestSHA256 != want.RequestSHA256 ||
				w.RequestBytes != want.RequestBytes || w.ResponseSHA256 != want.ResponseSHA256 || w.ResponseBytes != want.ResponseBytes || w.Status != 200 {
				t.Fatalf("captured %+v\nwant     %+v", w, want)
			}
		})
	}
}

// A server that keeps the response open after its last event delays Close by at most
// drainWait; the digest covers what arrived.
func TestTapCloseDoesNotWaitOnAStuckServer(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
		w.(http.Flusher).Flush()
		<-release
	}))
	defer srv.Close()
	defer close(release)
	ctx, c := model.CaptureWire(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
	resp, err := Tap(ctx, Mapping{Adapter: "a"})(req, http.DefaultClient.Do)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 14)
	_, _ = io.ReadFull(resp.Body, buf)
	begun := time.Now()
	resp.Body.Close()
	if d := time.Since(begun); d > drainWait+time.Second {
		t.Fatalf("Close waited %v", d)
	}
	if w, _ := c.Wire(); w.ResponseSHA256 != digest([]byte("data: [DONE]\n\n")) {
		t.Fatalf("response digest %s over %d bytes", w.ResponseSHA256, w.ResponseBytes)
	}
}

// Without a capture in the context the middleware passes the request through untouched.
func TestTapWithoutCapture(t *testing.T) {
	called := false
	req, _ := http.NewRequest(http.MethodPost, "http://x/v1", strings.NewReader("{}"))
	_, _ = Tap(context.Background(), Mapping{})(req, func(r *http.Request) (*http.Response, error) {
		called = r == req
		return nil, errors.New("stop")
	})
	if !called {
		t.Fatal("the request was not passed on as it was")
	}
}

// Render returns the body and never calls the next handler: nothing leaves the process.
func TestRenderSendsNothing(t *testing.T) {
	body, err := Render(func(mw Middleware) error {
		req, _ := http.NewRequest(http.MethodPost, "http://x/v1", strings.NewReader(`{"a":1}`))
		_, err := mw(req, func(*http.Request) (*http.Response, error) {
			t.Fatal("the rendered request was sent")
			return nil, nil
		})
		return err
	})
	if err != nil || string(body) != `{"a":1}` {
		t.Fatalf("Render = %q, %v", body, err)
	}
	if _, err := Render(func(Middleware) error { return nil }); err == nil {
		t.Fatal("a send that built no request rendered something")
	}
}

func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// A body in two pieces reads, writes and hashes as its bytes joined, however it is read; the
// SHA-256 state given for its prefix is resumed, not changed, and a body without one hashes
// the prefix itself.
func TestPrefixedBody(t *testing.T) {
	prefix, rest := []byte(`{"messages":[{"role":"user","content":"go"}`), []byte(`],"model":"m"}`)
	whole := string(prefix) + string(rest)
	state := sha256.New().(hash.Cloner)
	state.Write(prefix)
	for _, sum := range []hash.Cloner{state, nil} {
		for _, chunk := range []int{1, 7, len(prefix), 4096} {
			b := NewPrefixedBody(prefix, sum, rest)
			if b.Len() != len(whole) {
				t.Fatalf("Len = %d, want %d", b.Len(), len(whole))
			}
			got, n := b.sum()
			if hex.EncodeToString(got) != digest([]byte(whole)) || n != int64(len(whole)) {
				t.Fatalf("sum over %d bytes differs from the joined bytes' (prefix state %v)", n, sum != nil)
			}
			var read []byte
			buf := make([]byte, chunk)
			for {
				k, err := b.Read(buf)
				read = append(read, buf[:k]...)
				if err == io.EOF {
					break
				}
				if err != nil || k == 0 {
					t.Fatalf("Read = %d, %v", k, err)
				}
			}
			if string(read) != whole || b.Len() != 0 {
				t.Fatalf("read %q in chunks of %d", read, chunk)
			}
		}
		var w bytes.Buffer
		if n, err := NewPrefixedBody(prefix, sum, rest).WriteTo(&w); err != nil || n != int64(len(whole)) || w.String() != whole {
			t.Fatalf("WriteTo = %d, %v: %q", n, err, w.String())
		}
		if got := NewPrefixedBody(prefix, sum, rest).bytes(); string(got) != whole {
			t.Fatalf("bytes = %q", got)
		}
	}
	// The state given is the prefix's still: a second body resumes from it too.
	again, _ := NewPrefixedBody(prefix, state, rest).sum()
	if hex.EncodeToString(again) != digest([]byte(whole)) {
		t.Fatal("hashing a body changed the prefix's state")
	}
}

// The tap records a prefixed body's digest and size as those of the bytes the server reads.
func TestTapHashesAPrefixedBody(t *testing.T) {
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got, _ = io.ReadAll(r.Body) }))
	defer srv.Close()
	prefix, rest := bytes.Repeat([]byte("p"), 70_000), []byte("the rest")
	state := sha256.New().(hash.Cloner)
	state.Write(prefix)
	ctx, c := model.CaptureWire(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	req.Body, req.ContentLength = NewPrefixedBody(prefix, state, rest), int64(len(prefix)+len(rest))
	resp, err := Tap(ctx, Mapping{Adapter: "a"})(req, http.DefaultClient.Do)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if w, _ := c.Wire(); w.RequestSHA256 != digest(got) || w.RequestBytes != int64(len(got)) || len(got) != len(prefix)+len(rest) {
		t.Fatalf("recorded %s over %d bytes; the server read %d bytes hashing to %s", w.RequestSHA256, w.RequestBytes, len(got), digest(got))
	}
}
