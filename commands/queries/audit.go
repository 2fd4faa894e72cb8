package queries

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

// Codes of an audit fault that are not a receipt mismatch's own (docs/storage.md,
// "`zuno verify`").
const (
	// CodeEventUndecodable: the session's stream holds an event its fold refuses.
	CodeEventUndecodable = "event_undecodable"
	// CodeForkSource: a fork's history is no longer the one it was taken from.
	CodeForkSource = "fork_source"
	// CodeReceiptMissing: a provider request names a receipt the log does not hold.
	CodeReceiptMissing = "receipt_missing"
)

// WireSummer returns the SHA-256 and size of the body an adapter mapping builds for a request
// (the provider adapters' WireSums).
type WireSummer func(adapter string, version int, settings map[string]string, req model.Request) ([]byte, int64, error)

// SessionAudit is what `zuno verify --wire` found in one session: how many prompt receipts
// and wire records it checked, and the first event that did not verify.
type SessionAudit struct {
	SessionID string      `json:"sessionId"`
	Receipts  int         `json:"receipts"`
	Wire      int         `json:"wire"`
	Fault     *AuditFault `json:"fault,omitempty"`
}

// AuditFault is the first event of a session that did not verify, and why.
type AuditFault struct {
	EventID  string `json:"eventId,omitempty"`
	Type     string `json:"type,omitempty"`
	Position uint64 `json:"position,omitempty"`
	Revision uint64 `json:"revision,omitempty"`
	// Code is the first mismatch's code (docs/formats/receipts.md §10), wire_mismatch,
	// wire_unverifiable, receipt_missing, fork_source or event_undecodable.
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// AuditSessions audits each session in turn (AuditSession); with no ids, every session the
// read models list, pruned ones included.
func (q *Queries) AuditSessions(ctx context.Context, ids []string, sum WireSummer) ([]SessionAudit, error) {
	listed := len(ids) == 0
	if listed {
		t, err := q.AllSessions(ctx, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		for _, row := range t.Rows {
			ids = append(ids, fmt.Sprint(row[0]))
		}
	}
	var out []SessionAudit
	for _, id := range ids {
		a, err := q.AuditSession(ctx, id, sum)
		if listed && domain.CodeOf(err) == domain.CodeSessionNotFound {
			continue // a session pruned from the log is listed, but has nothing left to check
		}
		if err != nil {
			return out, err
		}
		out = append(out, a)
	}
	return out, nil
}

// AuditSession checks every prompt receipt of a session (docs/formats/receipts.md) and every
// wire record of its provider requests (what `zuno debug prompt --wire` checks for one step)
// in one walk over its events: the transcript, the receipts' expanded state (prompt.Auditor)
// and each conversation's encoded body are carried from one step to the next, so the walk
// costs what the session holds, not its square. The first event that does not verify ends the
// walk and is returned as the Fault; the receipts of a fork's history are the source
// session's, checked there.
func (q *Queries) AuditSession(ctx context.Context, sessionID string, sum WireSummer) (SessionAudit, error) {
	out := SessionAudit{SessionID: sessionID}
	stream := commands.SessionStream(sessionID)
	w := newAuditWalk(q, sum, &out, stream)
	n, last, err := w.walkWhileLoading(ctx)
	if err == nil && n > 0 && w.answeredOtherwise() {
		// A lookup the whole session answers otherwise: walk again, every receipt known.
		out = SessionAudit{SessionID: sessionID}
		err = newAuditWalk(q, sum, &out, stream).walkKnowing(ctx, last)
	}
	if err != nil {
		out = SessionAudit{SessionID: sessionID} // nothing is checked in a session that does not load
		if ctx.Err() != nil {
			return out, err
		}
		code := CodeEventUndecodable
		var fork *commands.ForkSourceError
		if errors.As(err, &fork) {
			code = CodeForkSource
		}
		out.Fault = &AuditFault{Code: code, Detail: err.Error()}
		return out, nil
	}
	if n == 0 {
		return out, sessionNotFound(sessionID)
	}
	return out, nil
}

// auditWalk is AuditSession's running state.
type auditWalk struct {
	q      *Queries
	sum    WireSummer
	out    *SessionAudit
	stream string
	// Every receipt, its fork history's included, is a base a receipt may name, and the
	// blobs they record are one pool, the first recorded winning, before the transcript's
	// (docs/formats/receipts.md §3).
	receipts   map[string]prompt.Receipt
	blobs      map[string]string // the receipts'
	transcript map[string]string // the transcript's messages', encoded
	// complete is true when receipts and blobs hold the whole session's; until then the walk
	// records what it looked up and did not find there (see walkWhileLoading).
	complete     bool
	missedIDs    map[string]bool
	missedBlobs  map[string]bool
	duplicateIDs bool
	auditor      *prompt.Auditor
	tr           *transcript.State
	trErr        error
	// logged are the transcript's messages as parts, encoded once each; epoch changes when
	// the parts already encoded may no longer be the transcript's (a compaction, or a result
	// recorded after a receipt: the slot was empty when the receipt was appended).
	logged prompt.Logged
	epoch  int
	window int
	stale  bool
	// requests holds the request the latest receipt proves, by receipt id, for its wire records.
	requests map[string]model.Request
}

func (w *auditWalk) step(rec events.Recorded, p events.Payload) *AuditFault {
	if w.trErr == nil {
		w.trErr = w.tr.Evolve(p)
	}
	if rec.Stream != w.stream {
		return nil // the fork's history: its receipts are checked in their own session
	}
	switch e := p.(type) {
	case events.PromptAssembled:
		return w.receipt(e)
	case events.ProviderRequest:
		if e.Status == events.RequestStarted {
			if _, ok := w.requests[e.PromptReceiptID]; !ok && e.PromptReceiptID != "" {
				return &AuditFault{Code: CodeReceiptMissing, Detail: fmt.Sprintf(
					"provider request %s names receipt %s, which is not the latest receipt verified before it", e.RequestID, e.PromptReceiptID)}
			}
			return nil
		}
		if e.Wire != nil {
			return w.wire(e)
		}
	}
	return nil
}

func (w *auditWalk) receipt(e events.PromptAssembled) *AuditFault {
	if fault := w.encodeLogged(); fault != nil {
		return fault
	}
	var logged prompt.Logged
	if w.trErr == nil {
		logged = w.logged
	}
	req, err := w.auditor.Check(e.ReceiptID, e.PromptReceipt, logged, w.epoch)
	if err != nil {
		code := prompt.CodeReceiptMismatch
		var mismatch *prompt.ReceiptError
		if errors.As(err, &mismatch) && len(mismatch.Mismatches) > 0 {
			code = mismatch.Mismatches[0].Code
		}
		return &AuditFault{Code: code, Detail: fmt.Sprintf("receipt %s: %v", e.ReceiptID, err)}
	}
	w.out.Receipts++
	clear(w.requests) // only the latest receipt's request is kept: the next step has its own
	w.requests[e.ReceiptID] = req
	return nil
}

// encodeLogged brings logged up to the transcript's messages, encoding only the new ones.
func (w *auditWalk) encodeLogged() *AuditFault {
	if w.trErr != nil {
		return nil
	}
	msgs := w.tr.Messages
	if w.stale || w.tr.Window != w.window || len(msgs) < len(w.logged.Parts) {
		w.logged, w.window, w.epoch = prompt.Logged{Blobs: w.transcript}, w.tr.Window, w.epoch+1
	}
	// Their blobs join the transcript's pool.
	if err := w.logged.AppendMessages(msgs[len(w.logged.Parts):]); err != nil {
		return &AuditFault{Code: CodeEventUndecodable, Detail: "the transcript's messages do not encode: " + err.Error()}
	}
	// A result slot still empty now is filled later, in place: the parts encoded so far would
	// no longer be the transcript's.
	w.stale = w.tr.Pending()
	return nil
}

// wire renders an attempt's body again from the request its receipt proves and compares its
// digest with the one recorded when it was sent.
func (w *auditWalk) wire(e events.ProviderRequest) *AuditFault {
	req, ok := w.requests[e.PromptReceiptID]
	if !ok {
		return &AuditFault{Code: CodeWireUnverifiable, Detail: fmt.Sprintf(
			"request %s (attempt %d) recorded a wire exchange for receipt %s, which is not the latest receipt verified before it",
			e.RequestID, max(e.Attempt, 1), e.PromptReceiptID)}
	}
	x := e.Wire
	sum, n, err := w.sum(x.Adapter, x.MappingVersion, x.Mapping, req)
	if err != nil {
		return &AuditFault{Code: CodeWireUnverifiable, Detail: fmt.Sprintf("request %s (attempt %d): cannot render the body: %v; verify it with the build that recorded it",
			e.RequestID, max(e.Attempt, 1), err)}
	}
	if got := hex.EncodeToString(sum); got != x.RequestSHA256 {
		return &AuditFault{Code: CodeWireMismatch, Detail: fmt.Sprintf(
			"request %s (attempt %d): the rendered body (%d bytes, sha256 %s) differs from the body sent (%d bytes, sha256 %s); the stored request or its wire record was altered after it was sent — preserve the log and investigate",
			e.RequestID, max(e.Attempt, 1), n, got, x.RequestBytes, x.RequestSHA256)}
	}
	w.out.Wire++
	return nil
}
