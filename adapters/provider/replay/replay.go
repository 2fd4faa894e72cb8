// Package replay serves recorded HTTP responses from a local httptest server, so the
// provider adapters, the turn and the CLI are tested against the wire format itself, through
// the real SDKs, without a paid API.
//
// A recording is a raw HTTP/1.1 response as it appears on the wire: status line, headers,
// blank line, body. Event-stream bodies are written event by event with a flush between
// them, so the client really consumes a stream rather than one buffered body. An event that
// is exactly "!drop" cuts the connection there, without the stream's end, as a server or
// proxy that dies mid-response does.
package replay

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// Request is what the client sent.
type Request struct {
	Method, Path string
	Header       http.Header
	Body         []byte
}

// Server answers "METHOD /path" with the recording named in its routes.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	requests []Request
}

// New starts a server; routes maps "POST /v1/messages" to a recording file. An unrouted
// request fails the test.
func New(t testing.TB, routes map[string]string) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		s.mu.Unlock()
		file, ok := routes[r.Method+" "+r.URL.Path]
		if !ok {
			t.Errorf("replay: no recording for %s %s", r.Method, r.URL.Path)
			http.Error(w, "no recording", http.StatusTeapot)
			return
		}
		if err := serve(w, file); err != nil {
			t.Errorf("replay: %s: %v", file, err)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Sequence answers the requests to one endpoint with recordings in order, as a provider
// answers a turn's successive requests (or its retries); past the last it answers 599. It
// keeps every request. Not a Server, so the CLI's script harness can serve it too.
type Sequence struct {
	mu       sync.Mutex
	files    []string
	requests []Request
}

// NewSequence serves files in order.
func NewSequence(files ...string) *Sequence { return &Sequence{files: files} }

// Requests returns the requests received so far.
func (s *Sequence) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Sequence) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	s.mu.Unlock()
	if n >= len(s.files) {
		http.Error(w, "replay: no recording left", 599)
		return
	}
	if err := serve(w, s.files[n]); err != nil {
		http.Error(w, "replay: "+err.Error(), 599)
	}
}

func serve(w http.ResponseWriter, file string) error {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	for k, vs := range res.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(res.StatusCode)
	if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		_, err = w.Write(body)
		return err
	}
	flusher, _ := w.(http.Flusher)
	for len(body) > 0 {
		event, rest, found := bytes.Cut(body, []byte("\n\n"))
		if string(event) == "!drop" {
			panic(http.ErrAbortHandler) // net/http closes the connection mid-body
		}
		if found {
			event = append(event, "\n\n"...)
		}
		if _, err := w.Write(event); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		body = rest
	}
	return nil
}
