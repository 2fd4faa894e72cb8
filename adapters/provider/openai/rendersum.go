package openai

import (
	"bytes"
	"crypto/sha256"
	"slices"

	"github.com/zuno-run/zuno/domain/model"
)

// SumRenderer returns the SHA-256 and size of the bodies a provider would send, for an audit
// that checks one conversation's requests in order (`zuno verify --wire`, docs/storage.md,
// "`zuno verify`"). Two things make a body, beside its messages: the rest of the request's
// parameters (the model, the tool declarations, the tool choice, the output bound), encoded
// through the SDK's reflective encoder, and the fields the SDK adds to every body it is given
// (splice). Neither changes from one step of a session to the next, yet rendering them again
// was most of a step's cost. So the renderer keeps the body after the messages, as the SDK
// completed it, for the last request's parameters, and a request with the same parameters
// encodes and hashes only the messages its conversation added (the provider's thread): the
// SDK is given the same empty body with the same options every time, so what it adds does not
// change. Any other request takes the provider's own path and is kept in turn. Not safe for
// concurrent use.
type SumRenderer struct {
	p    *Provider
	last model.Request // the parameters the body's end was rendered for (no messages)
	end  []byte        // the body after its messages, with the SDK's fields; nil for none
}

// NewSumRenderer returns a renderer of p's bodies.
func NewSumRenderer(p *Provider) *SumRenderer { return &SumRenderer{p: p} }

// Sum returns the SHA-256 and size of the body Stream would send for req.
func (r *SumRenderer) Sum(req model.Request) ([]byte, int64, error) {
	t, err := r.p.validated(req)
	if err != nil {
		return nil, 0, err
	}
	if r.end == nil || !sameParameters(r.last, req) {
		return r.render(req, t)
	}
	if err := r.p.extend(t, req.Messages, chatOpen); err != nil {
		return nil, 0, err
	}
	h := sha256.New()
	if c, err := cloneSum(t); err == nil && c != nil {
		h = c
	} else {
		h.Write(t.start)
	}
	r.p.threads.put(t)
	h.Write(r.end)
	return h.Sum(nil), int64(len(t.start) + len(r.end)), nil
}

// render renders req's body through the SDK, as a sending provider does, and keeps its end.
func (r *SumRenderer) render(req model.Request, t *thread) ([]byte, int64, error) {
	r.end = nil
	body, err := r.p.body(req, t)
	if err != nil {
		return nil, 0, err
	}
	var end []byte
	body.spliced = &end
	sum, n, err := renderSum(r.p, body)
	if err == nil && body.start != nil && end != nil {
		r.last, r.end = parametersOf(req), slices.Clone(end)
	}
	return sum, n, err
}

// parametersOf is req without its messages, its tool declarations copied.
func parametersOf(req model.Request) model.Request {
	req.Messages = nil
	req.Tools = slices.Clone(req.Tools)
	for i, t := range req.Tools {
		req.Tools[i].Schema = bytes.Clone(t.Schema)
	}
	return req
}

// sameParameters reports whether b's parameters but its messages are a's, byte for byte.
func sameParameters(a, b model.Request) bool {
	if a.Model != b.Model || a.MaxTokens != b.MaxTokens || a.ToolChoice != b.ToolChoice ||
		a.PromptCacheKey != b.PromptCacheKey || len(a.Tools) != len(b.Tools) {
		return false
	}
	for i, t := range a.Tools {
		u := b.Tools[i]
		if t.Name != u.Name || t.Description != u.Description || !bytes.Equal(t.Schema, u.Schema) ||
			(t.Schema == nil) != (u.Schema == nil) {
			return false
		}
	}
	return true
}
