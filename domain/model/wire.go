package model

import (
	"context"
	"sync"
)

// Wire is one request as it went over the wire (docs/turns.md, "Wire receipts"): which
// adapter built the body and with which mapping, where it went, and the SHA-256 of the body
// the SDK sent and of the raw response it read. The body itself is not kept: it is rendered
// again from the prompt receipt's request with the recorded mapping, and must hash the same.
type Wire struct {
	// Adapter names the mapping from a Request to a body: openai.chat, openai.responses or
	// anthropic.messages.
	Adapter string
	// MappingVersion is the adapter's WireMappingVersion when the body was built; a build
	// whose mapping differs renders other bytes, so it refuses another version.
	MappingVersion int
	// Mapping holds the adapter's settings that shape the body (the dialect, whether tool
	// choice is sent, the default output limit), as words.
	Mapping map[string]string
	// Endpoint is the URL the body was sent to: scheme, host and path, never a user, a
	// password or a query (which can carry a key).
	Endpoint       string
	RequestSHA256  string
	RequestBytes   int64
	ResponseSHA256 string
	ResponseBytes  int64
	// Status is the HTTP status of the response, 0 when none arrived.
	Status int
}

// WireCapture collects the Wire of the request a Stream sends under its context. A stream
// sends one request; the adapter fills the capture as the body goes out and the response is
// read.
type WireCapture struct {
	mu   sync.Mutex
	wire Wire
	sent bool
}

type wireKey struct{}

// CaptureWire returns a context whose Stream records its wire exchange in the returned
// capture. A provider that is not an HTTP adapter (scripted) leaves it empty.
func CaptureWire(ctx context.Context) (context.Context, *WireCapture) {
	c := &WireCapture{}
	return context.WithValue(ctx, wireKey{}, c), c
}

// WireCaptureFrom returns the capture ctx carries, nil if none.
func WireCaptureFrom(ctx context.Context) *WireCapture {
	c, _ := ctx.Value(wireKey{}).(*WireCapture)
	return c
}

// Update changes the capture under its lock.
func (c *WireCapture) Update(f func(*Wire)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sent = true
	f(&c.wire)
}

// Wire returns what was captured, and false when no request went out.
func (c *WireCapture) Wire() (Wire, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.wire
	w.Mapping = cloneMap(w.Mapping)
	return w, c.sent
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
