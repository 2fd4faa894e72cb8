package wire

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/zuno-run/zuno/domain/model"
)

// Mapping identifies how an adapter turns a model.Request into a body: it is recorded with
// each request so the body can be rendered again (docs/turns.md, "Wire receipts").
type Mapping struct {
	Adapter string
	Version int
	// Settings are the adapter options that change the body.
	Settings map[string]string
}

// Middleware is an SDK middleware: both SDKs declare theirs as an alias of this type.
type Middleware = func(*http.Request, func(*http.Request) (*http.Response, error)) (*http.Response, error)

// Tap returns the middleware that records the request ctx's WireCapture asks for (none when
// ctx carries no capture): the body bytes exactly as the SDK serialised them, hashed on their
// way out, and the raw response body hashed as the SDK reads it. The SDK retries nothing
// (the turn driver does), so one stream is one request.
func Tap(ctx context.Context, m Mapping) Middleware {
	c := model.WireCaptureFrom(ctx)
	return func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if c == nil {
			return next(req)
		}
		sum, n, err := bodySum(req)
		if err != nil {
			return nil, err
		}
		c.Update(func(w *model.Wire) {
			*w = model.Wire{Adapter: m.Adapter, MappingVersion: m.Version, Mapping: m.Settings, Endpoint: Public(req.URL),
				RequestSHA256: hex.EncodeToString(sum), RequestBytes: n}
		})
		resp, err := next(req)
		if resp != nil {
			c.Update(func(w *model.Wire) { w.Status = resp.StatusCode })
			resp.Body = &hashingBody{ReadCloser: resp.Body, h: sha256.New(), c: c}
		}
		return resp, err
	}
}

// errRendered stops a rendered request before it leaves the process.
var errRendered = errors.New("wire: rendered, not sent")

// Render runs send, which must build one request through the SDK with the given middleware,
// and returns the body the SDK serialised, without sending it: the same code path as a real
// request, so the same bytes.
func Render(send func(Middleware) error) ([]byte, error) {
	var body []byte
	err := send(func(req *http.Request, _ func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		b, err := readBody(req)
		if err != nil {
			return nil, err
		}
		body = b
		return nil, errRendered
	})
	if body == nil {
		if err == nil {
			err = errors.New("wire: the SDK sent no request")
		}
		return nil, err
	}
	return body, nil
}

// RenderSum is Render that returns the body's SHA-256 and size instead of its bytes: a body
// an adapter sent in two pieces (Body) is hashed from its prefix's saved state, so checking a
// long conversation's bodies one step after another costs what each step added
// (docs/storage.md, "`zuno verify`").
func RenderSum(send func(Middleware) error) ([]byte, int64, error) {
	var (
		sum  []byte
		size int64
	)
	err := send(func(req *http.Request, _ func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		s, n, err := bodySum(req)
		if err != nil {
			return nil, err
		}
		sum, size = s, n
		return nil, errRendered
	})
	if sum == nil {
		if err == nil {
			err = errors.New("wire: the SDK sent no request")
		}
		return nil, 0, err
	}
	return sum, size, nil
}

// Body is a request body whose bytes the tap reads without copying them. An adapter that
// builds a body itself sends it as one: the body holds the whole conversation, so a copy of
// it at every request is a cost (and garbage) that grows with the history.
//
// A body may come in two pieces: a prefix that the adapter keeps from one request of a
// conversation to the next and only appends to (the messages encoded so far), and the rest.
// Given the SHA-256 state after the prefix, the tap hashes only the rest: a request's digest
// still covers every byte sent, but what it costs does not grow with the conversation.
type Body struct {
	prefix, rest []byte
	prefixSum    hash.Cloner // the SHA-256 state after prefix; nil when unknown
	read         int
}

// NewBody returns a body reading b, which must not change while it is sent.
func NewBody(b []byte) *Body { return &Body{rest: b} }

// NewPrefixedBody returns a body reading prefix, then rest; neither may change while it is
// sent. prefixSum, when not nil, is the SHA-256 state after writing prefix, which the body
// never changes (it hashes a clone).
func NewPrefixedBody(prefix []byte, prefixSum hash.Cloner, rest []byte) *Body {
	return &Body{prefix: prefix, rest: rest, prefixSum: prefixSum}
}

// Len returns the number of bytes not read yet.
func (b *Body) Len() int { return len(b.prefix) + len(b.rest) - b.read }

func (b *Body) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && b.Len() > 0 {
		piece, at := b.rest, b.read-len(b.prefix)
		if b.read < len(b.prefix) {
			piece, at = b.prefix, b.read
		}
		k := copy(p[n:], piece[at:])
		n += k
		b.read += k
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// WriteTo writes the unread bytes to w without a buffer between them.
func (b *Body) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for b.Len() > 0 {
		piece, at := b.rest, b.read-len(b.prefix)
		if b.read < len(b.prefix) {
			piece, at = b.prefix, b.read
		}
		n, err := w.Write(piece[at:])
		total += int64(n)
		b.read += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// Close does nothing: the bytes are the caller's.
func (*Body) Close() error { return nil }

// sum returns the SHA-256 of the whole body and its size, resuming from the prefix's state
// when it is known.
func (b *Body) sum() ([]byte, int64) {
	var h hash.Hash
	if b.prefixSum != nil {
		if c, err := b.prefixSum.Clone(); err == nil {
			h = c
		}
	}
	if h == nil {
		h = sha256.New()
		h.Write(b.prefix)
	}
	h.Write(b.rest)
	return h.Sum(nil), int64(len(b.prefix) + len(b.rest))
}

// bytes returns the whole body: its bytes themselves when it is in one piece, else a copy
// joining the two.
func (b *Body) bytes() []byte {
	if len(b.prefix) == 0 {
		return b.rest
	}
	return append(append(make([]byte, 0, len(b.prefix)+len(b.rest)), b.prefix...), b.rest...)
}

// bodySum returns the SHA-256 of the request's body and its size, leaving the body to be sent.
func bodySum(req *http.Request) ([]byte, int64, error) {
	if b, ok := req.Body.(*Body); ok && b.read == 0 { // unread: it is hashed where it is
		sum, n := b.sum()
		return sum, n, nil
	}
	body, err := readBody(req)
	if err != nil {
		return nil, 0, err
	}
	sum := sha256.Sum256(body)
	return sum[:], int64(len(body)), nil
}

// readBody returns the request's body and leaves a fresh reader in its place.
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return []byte{}, nil
	}
	if b, ok := req.Body.(*Body); ok && b.read == 0 { // unread: it stays as it is
		return b.bytes(), nil
	}
	// Read into a buffer of the body's size when it is known: a conversation's body grows
	// with every step, and growing the buffer while reading copies it several times.
	buf := bytes.NewBuffer(make([]byte, 0, max(req.ContentLength, 0)+bytes.MinRead))
	_, err := buf.ReadFrom(req.Body)
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	b := buf.Bytes()
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return b, nil
}

// Public is the endpoint as it may be recorded: scheme, host and path; a user, password,
// query or fragment can carry a credential and is dropped.
func Public(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
}

// Close reads what the SDK left unread of a response (the bytes after the stream's last
// event), so the digest covers the whole body; maxDrain and drainWait bound it, so a server
// that keeps the stream open after its last event delays the turn by at most drainWait. The
// digest then covers the bytes read up to then.
const (
	maxDrain    = 1 << 20
	drainWait   = time.Second
	drainBuffer = 512
)

// hashingBody digests a response body as it is read; Close reads what is left, then records
// the digest and size.
type hashingBody struct {
	io.ReadCloser
	h    hash.Hash
	n    int64
	c    *model.WireCapture
	once sync.Once
}

func (b *hashingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.h.Write(p[:n])
	b.n += int64(n)
	if err == io.EOF {
		b.record()
	}
	return n, err
}

func (b *hashingBody) Close() error {
	// Closing the body from the timer ends a read that is waiting on the peer.
	stop := time.AfterFunc(drainWait, func() { _ = b.ReadCloser.Close() })
	// Usually nothing is left: a small buffer spares every request io.Copy's 32 KB one.
	n, _ := io.CopyBuffer(b.h, io.LimitReader(b.ReadCloser, maxDrain), make([]byte, drainBuffer))
	stop.Stop()
	b.n += n
	b.record()
	return b.ReadCloser.Close()
}

func (b *hashingBody) record() {
	b.once.Do(func() {
		sum := hex.EncodeToString(b.h.Sum(nil))
		b.c.Update(func(w *model.Wire) { w.ResponseSHA256, w.ResponseBytes = sum, b.n })
	})
}
