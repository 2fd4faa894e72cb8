package queries

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
)

// Stable codes of `zuno debug prompt --wire`.
const (
	// CodeWireMismatch: the body rendered again from the stored request does not hash to the
	// digest recorded when it was sent.
	CodeWireMismatch = "wire_mismatch"
	// CodeWireUnverifiable: the step recorded no wire exchange, or one whose mapping this
	// build cannot render.
	CodeWireUnverifiable = "wire_unverifiable"
)

// WireRenderer renders the body an adapter mapping builds for a request (the provider
// adapters' RenderWire, which is I/O-free but lives with the SDKs).
type WireRenderer func(adapter string, version int, settings map[string]string, req model.Request) ([]byte, error)

// WireCheck is one attempt's body checked: what was recorded when it was sent and what the
// stored request renders to now.
type WireCheck struct {
	RequestID      string `json:"requestId"`
	Attempt        int    `json:"attempt"`
	Adapter        string `json:"adapter"`
	MappingVersion int    `json:"mappingVersion"`
	Endpoint       string `json:"endpoint"`
	RecordedSHA256 string `json:"recordedSha256"`
	RenderedSHA256 string `json:"renderedSha256,omitempty"`
	ResponseSHA256 string `json:"responseSha256,omitempty"`
	Verified       bool   `json:"verified"`
	Problem        string `json:"problem,omitempty"`
}

// WireError reports the attempts whose body does not verify; Code is wire_mismatch when a
// rendered body differs, else wire_unverifiable.
type WireError struct {
	code   string
	Checks []WireCheck
	// Reason is set when there was nothing to check.
	Reason string
}

// Code returns the stable code.
func (e *WireError) Code() string { return e.code }

func (e *WireError) Error() string {
	if e.Reason != "" {
		return e.code + ": " + e.Reason
	}
	var bad []string
	for _, c := range e.Checks {
		if !c.Verified {
			bad = append(bad, fmt.Sprintf("request %s: %s", c.RequestID, c.Problem))
		}
	}
	fix := "the stored request or its wire record was altered after it was sent — preserve the log and investigate"
	if e.code == CodeWireUnverifiable {
		fix = "verify it with the build that recorded it"
	}
	return e.code + ": " + strings.Join(bad, "; ") + "; " + fix
}

// wireChecks renders the body of each sent attempt of a step again from its prompt receipt,
// with the adapter mapping the attempt recorded, and compares its SHA-256 with the recorded
// one (docs/turns.md, "Wire receipts"). The checks are returned with a *WireError when any
// does not verify; a receipt that does not reconstruct is a *ReceiptMismatchError.
func wireChecks(sessionID string, f foundReceipt, render WireRenderer) ([]WireCheck, error) {
	if len(f.sent) == 0 {
		return nil, &WireError{code: CodeWireUnverifiable, Reason: fmt.Sprintf(
			"step %d of session %s recorded no wire exchange (no body was sent over HTTP, or it was recorded by a build before wire receipts)", f.step, sessionID)}
	}
	req, err := prompt.Reconstruct(f.receipt)
	if err != nil {
		return nil, &ReceiptMismatchError{err.Error()}
	}
	code := ""
	var checks []WireCheck
	for _, sent := range f.sent {
		w := sent.Wire
		c := WireCheck{RequestID: sent.RequestID, Attempt: max(sent.Attempt, 1), Adapter: w.Adapter, MappingVersion: w.MappingVersion,
			Endpoint: w.Endpoint, RecordedSHA256: w.RequestSHA256, ResponseSHA256: w.ResponseSHA256}
		body, err := render(w.Adapter, w.MappingVersion, w.Mapping, req)
		switch {
		case err != nil:
			c.Problem = "cannot render the body: " + err.Error()
			code = worse(code, CodeWireUnverifiable)
		default:
			sum := sha256.Sum256(body)
			c.RenderedSHA256 = hex.EncodeToString(sum[:])
			c.Verified = c.RenderedSHA256 == w.RequestSHA256
			if !c.Verified {
				c.Problem = fmt.Sprintf("the rendered body (%d bytes, sha256 %s) differs from the body sent (%d bytes, sha256 %s)",
					len(body), c.RenderedSHA256, w.RequestBytes, w.RequestSHA256)
				code = worse(code, CodeWireMismatch)
			}
		}
		checks = append(checks, c)
	}
	if code != "" {
		return checks, &WireError{code: code, Checks: checks}
	}
	return checks, nil
}

// worse keeps a mismatch over an unverifiable attempt: an altered log is the stronger finding.
func worse(have, next string) string {
	if have == CodeWireMismatch {
		return have
	}
	return next
}
