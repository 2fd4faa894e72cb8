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
		body, err := readBody(req)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(body)
		c.Update(func(w *model.Wire) {
			*w = model.Wire{Adapter: m.Adapter, MappingVersion: m.Version, Mapping: m.Settings, Endpoint: Public(req.URL),
				RequestSHA256: hex.EncodeToString(sum[:]), RequestBytes: int64(len(body))}
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

// Body is a request body whose bytes the tap reads without copying them. An adapter that
// builds a body itself sends it as one: the body holds the whole conversation, so a copy of
// it at every request is a cost (and garbage) that grows with the history.
type Body struct {
	*bytes.Reader
	b []byte
}

// NewBody returns a body reading b, which must not change while it is sent.
func NewBody(b []byte) *Body { return &Body{Reader: bytes.NewReader(b), b: b} }

// Close does nothing: the bytes are the caller's.
func (*Body) Close() error { return nil }

// readBody returns the request's body and leaves a fresh reader in its place.
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return []byte{}, nil
	}
	if b, ok := req.Body.(*Body); ok && b.Len() == len(b.b) { // unread: it stays as it is
		return b.b, nil
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
	maxDrain  = 1 << 20
	drainWait = time.Second
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
	n, _ := io.Copy(b.h, io.LimitReader(b.ReadCloser, maxDrain))
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
