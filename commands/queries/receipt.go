package queries

import (
	"context"
	"errors"
	"fmt"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// CodeNotFound is the code of a query whose subject does not exist.
const CodeNotFound = "not_found"

// NotFoundError says what was not found and how to find what is there.
type NotFoundError struct{ Message string }

func (e *NotFoundError) Error() string { return e.Message }

// Code returns the stable code.
func (e *NotFoundError) Code() string { return CodeNotFound }

// ReceiptMismatchError is a receipt whose stored bytes no longer match its digests. The view is
// still returned with it: that receipt is the one someone must inspect.
type ReceiptMismatchError struct{ Detail string }

func (e *ReceiptMismatchError) Error() string {
	return prompt.CodeReceiptMismatch + ": the stored prompt does not match its recorded digests: " + e.Detail +
		"; the event log was altered after it was written — preserve it and investigate"
}

// Code returns the stable code.
func (e *ReceiptMismatchError) Code() string { return prompt.CodeReceiptMismatch }

// PromptView is zuno debug prompt's answer: which request and receipt, whether every stored
// byte re-hashed to its digest, and the receipt itself (content redacted unless asked).
type PromptView struct {
	SessionID string `json:"sessionId"`
	Step      int    `json:"step,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	ReceiptID string `json:"receiptId"`
	EventID   string `json:"eventId"`
	Verified  bool   `json:"verified"`
	// Purpose is "compaction" for a request that summarised the transcript.
	Purpose string `json:"purpose,omitempty"`
	// Boundary is the compaction whose window this request's conversation is in: the
	// conversation opens with its summary message, then the messages after its boundary
	// (docs/compaction.md). Nil before the session's first compaction.
	Boundary *Boundary `json:"boundary,omitempty"`
	// Checkpoint is the checkpoint the step was checked from (PromptAt); FromStart says why it
	// was read from the session's start instead.
	Checkpoint *PromptCheckpoint `json:"checkpoint,omitempty"`
	FromStart  string            `json:"fromStart,omitempty"`
	// Earlier sums up the conversation parts the receipt's list leaves out, and Parts counts
	// them all (PromptAt, unless every part is asked for).
	Earlier *EarlierParts `json:"earlier,omitempty"`
	Parts   int           `json:"conversationParts,omitempty"`
	prompt.DebugView
}

// Prompt follows provider request → promptReceiptID → receipt in a session's stream (the
// latest session with a receipt when sessionID is ""; the latest request when step is 0),
// expands it, and verifies it. A mismatch returns the view and a *ReceiptMismatchError.
func (q *Queries) Prompt(ctx context.Context, sessionID string, step int, sensitive bool) (PromptView, error) {
	if sessionID == "" {
		id, err := q.latestReceiptSession(ctx)
		if err != nil {
			return PromptView{}, err
		}
		sessionID = id
	}
	f, err := q.findReceipt(ctx, sessionID, step)
	if err != nil {
		return PromptView{}, err
	}
	return promptView(sessionID, f, sensitive)
}

// PromptWithWire is Prompt, then PromptWire for the same step when its receipt verifies,
// reading the session once (debug prompt --wire).
func (q *Queries) PromptWithWire(ctx context.Context, sessionID string, step int, sensitive bool, render WireRenderer) (PromptView, []WireCheck, error) {
	v, checks, _, err := q.promptWithWire(ctx, sessionID, step, sensitive, render)
	return v, checks, err
}

// promptWithWire is PromptWithWire with the receipt it found (nil when none was).
func (q *Queries) promptWithWire(ctx context.Context, sessionID string, step int, sensitive bool, render WireRenderer) (PromptView, []WireCheck, *foundReceipt, error) {
	if sessionID == "" {
		id, err := q.latestReceiptSession(ctx)
		if err != nil {
			return PromptView{}, nil, nil, err
		}
		sessionID = id
	}
	f, err := q.findReceipt(ctx, sessionID, step)
	if err != nil {
		return PromptView{}, nil, nil, err
	}
	v, err := promptView(sessionID, f, sensitive)
	if err != nil {
		return v, nil, &f, err
	}
	checks, err := wireChecks(sessionID, f, render)
	return v, checks, &f, err
}

func promptView(sessionID string, f foundReceipt, sensitive bool) (PromptView, error) {
	view, err := prompt.VerifiedDebugView(f.receipt, sensitive)
	if err == nil && f.resumeErr != nil {
		// A checkpoint that is not the transcript's is the log's to answer for.
		err = f.resumeErr
		view.Verification = err.Error()
	}
	v := PromptView{SessionID: sessionID, Step: f.step, RequestID: f.requestID, ReceiptID: f.receiptID, EventID: f.eventID,
		Purpose: f.purpose, Boundary: f.boundary, DebugView: view}
	v.Verified = v.Verification == ""
	var mismatch *prompt.ReceiptError
	if errors.As(err, &mismatch) {
		return v, &ReceiptMismatchError{mismatch.Detail()}
	} else if !v.Verified {
		return v, &ReceiptMismatchError{v.Verification}
	}
	return v, nil
}

// Boundary is a compaction as debug prompt and replay show it.
type Boundary struct {
	Window          int    `json:"window"`
	Through         int    `json:"through"`
	Step            int    `json:"step"`
	RequestID       string `json:"requestId"`
	PromptReceiptID string `json:"promptReceiptID"`
	SummarySHA256   string `json:"summarySha256"`
	EventID         string `json:"eventId"`
}

func (q *Queries) latestReceiptSession(ctx context.Context) (string, error) {
	t, err := q.SQL(ctx, projections.LatestReceiptSessionQuery, 1)
	if err != nil {
		return "", err
	}
	if len(t.Rows) == 0 {
		return "", &NotFoundError{"no prompt receipt is recorded yet; run a turn with zuno run first"}
	}
	return fmt.Sprint(t.Rows[0][0]), nil
}

type foundReceipt struct {
	step                 int
	requestID, receiptID string
	eventID              string
	receipt              prompt.Receipt
	sent                 []events.ProviderRequest
	purpose              string
	boundary             *Boundary
	// shown is where a condensed view's parts start (shownFrom); resumeErr is the receipt's
	// checkpoint not being the transcript's (prompt.CheckResumeLogged).
	shown     int
	resumeErr error
}

// receiptLog is what a session's stream holds for receipt lookups.
type receiptLog struct {
	requests map[int]events.ProviderRequest
	// sent are the step's attempts that recorded a wire exchange, in log order.
	sent     map[int][]events.ProviderRequest
	receipts map[string]events.PromptAssembled
	eventIDs map[string]string
	latest   int
	exists   bool
	// tr is the session's transcript: a receipt leaves out the messages it holds
	// (prompt.LoggedMessages). trErr is the first event it could not fold; the receipts are
	// still shown, and one that needs the transcript is reported as not expanding.
	tr    *transcript.State
	trErr error
	// views are the transcript's messages as each receipt was assembled from them, and
	// windows the compaction window each was in: a compaction replaces the conversation, so a
	// receipt before it is expanded with the messages of its own window (docs/compaction.md).
	views   map[string][]model.Message
	windows map[string]int
	// boundaries are the session's compactions by the window they opened.
	boundaries map[int]*Boundary
}

func (l *receiptLog) fold(rec events.Recorded, p events.Payload) error {
	l.exists = true
	if l.trErr == nil {
		l.trErr = l.tr.Evolve(p)
	}
	switch e := p.(type) {
	case events.ProviderRequest:
		if e.Status == events.RequestStarted {
			l.requests[e.Step] = e
			l.latest = max(l.latest, e.Step)
		} else if e.Wire != nil {
			l.sent[e.Step] = append(l.sent[e.Step], e)
		}
	case events.PromptAssembled:
		l.receipts[e.ReceiptID] = e
		l.eventIDs[e.ReceiptID] = rec.ID
		// Every result of the transcript so far is in (a request starts only then) and the
		// messages are only ever appended to or replaced, so this view stays as it is.
		l.views[e.ReceiptID], l.windows[e.ReceiptID] = l.tr.Messages, l.tr.Window
	case events.TranscriptCompacted:
		l.boundaries[e.Window] = &Boundary{Window: e.Window, Through: e.Through, Step: e.Step, RequestID: e.RequestID,
			PromptReceiptID: e.PromptReceiptID, SummarySHA256: e.SummarySHA256, EventID: rec.ID}
	}
	return nil
}

// errStepRead ends the read of a session once the step asked for is over.
var errStepRead = errors.New("the step's events are read")

// findReceipt finds the receipt of a session's step. A receipt records only the blobs its
// session had not recorded before, is stored relative to an earlier one and leaves out the
// messages of its transcript, so it is expanded through its base chain with the transcript's
// messages and every blob of the session as the pool.
func (q *Queries) findReceipt(ctx context.Context, sessionID string, step int) (foundReceipt, error) {
	l := receiptLog{requests: map[int]events.ProviderRequest{}, sent: map[int][]events.ProviderRequest{}, receipts: map[string]events.PromptAssembled{}, eventIDs: map[string]string{},
		tr: transcript.New(), views: map[string][]model.Message{}, windows: map[string]int{}, boundaries: map[int]*Boundary{}}
	fold, stream := l.fold, commands.SessionStream(sessionID)
	if step > 0 {
		// Nothing after step N bears on its receipt: reading stops when the session's own step
		// N+1 starts (not in a fork's history, whose steps are the source's), so step 10 of a
		// long session costs what its first 10 steps hold (docs/storage.md, "`zuno verify`").
		fold = func(rec events.Recorded, p events.Payload) error {
			if r, ok := p.(events.ProviderRequest); ok && rec.Stream == stream && r.Status == events.RequestStarted && r.Step > step {
				return errStepRead
			}
			return l.fold(rec, p)
		}
	}
	if _, err := commands.Load(ctx, q.log, q.registry, stream, 0, fold); err != nil && !errors.Is(err, errStepRead) {
		return foundReceipt{}, err
	}
	if !l.exists {
		return foundReceipt{}, sessionNotFound(sessionID)
	}
	if step == 0 {
		step = l.latest
	}
	req, ok := l.requests[step]
	if !ok {
		if l.latest == 0 {
			return foundReceipt{}, &NotFoundError{fmt.Sprintf("session %s has no provider request yet", sessionID)}
		}
		return foundReceipt{}, &NotFoundError{fmt.Sprintf("session %s has no provider step %d; its steps are 1..%d", sessionID, step, l.latest)}
	}
	r, ok := l.receipts[req.PromptReceiptID]
	if !ok {
		return foundReceipt{}, &ReceiptMismatchError{fmt.Sprintf("provider request %s names receipt %s, which is not in the log", req.RequestID, req.PromptReceiptID)}
	}
	blobs := map[string]string{}
	for _, other := range l.receipts {
		for d, b := range other.Blobs {
			if _, ok := blobs[d]; !ok {
				blobs[d] = b
			}
		}
	}
	var logged prompt.Logged
	if l.trErr == nil {
		var err error
		if logged, err = prompt.LoggedMessages(l.views[r.ReceiptID]); err != nil {
			return foundReceipt{}, err
		}
		for d, b := range logged.Blobs {
			if _, ok := blobs[d]; !ok {
				blobs[d] = b
			}
		}
	}
	lookup := func(id string) (prompt.Receipt, bool) {
		x, ok := l.receipts[id]
		return x.PromptReceipt, ok
	}
	pool := func(d string) (string, bool) { b, ok := blobs[d]; return b, ok }
	receipt, err := prompt.ExpandLogged(r.PromptReceipt, lookup, pool, logged.Parts)
	if err != nil {
		return foundReceipt{}, &ReceiptMismatchError{err.Error()}
	}
	return foundReceipt{step: step, requestID: req.RequestID, receiptID: r.ReceiptID, eventID: l.eventIDs[r.ReceiptID],
		receipt: receipt, sent: l.sent[step], purpose: req.Purpose, boundary: l.boundaries[l.windows[r.ReceiptID]],
		shown: shownFrom(r.PromptReceipt, receipt), resumeErr: prompt.CheckResumeLogged(receipt, logged.Parts)}, nil
}
