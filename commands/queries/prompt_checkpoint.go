package queries

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// PromptOptions choose how `zuno debug prompt` checks and shows a step.
type PromptOptions struct {
	// FromStart re-derives the step from the session's first event, not from a checkpoint.
	FromStart bool
	// AllParts lists every part of the conversation; it reads from the start.
	AllParts bool
}

// PromptCheckpoint is the checkpoint a step was checked from (docs/formats/receipts.md §13):
// the receipt whose resume state stands for the conversation's first Parts parts.
type PromptCheckpoint struct {
	ReceiptID string `json:"receiptId"`
	Step      int    `json:"step"`
	Revision  uint64 `json:"revision"`
	Parts     int    `json:"parts"`
	Digest    string `json:"conversationDigest"`
}

// EarlierParts sums up the conversation parts a view does not list: their count and the
// conversation digest after them.
type EarlierParts struct {
	Parts  int    `json:"parts"`
	Digest string `json:"conversationDigest"`
}

// PromptAt is Prompt as `zuno debug prompt` shows it: checked from the session's latest
// checkpoint before the step when there is one and it holds (reading at most the steps since
// it, docs/storage.md "`debug prompt` from a checkpoint"), else from the log's start; and,
// unless opt.AllParts, listing only the parts after the receipt's base, the others summed up.
func (q *Queries) PromptAt(ctx context.Context, sessionID string, step int, sensitive bool, opt PromptOptions) (PromptView, error) {
	if sessionID == "" {
		id, err := q.latestReceiptSession(ctx)
		if err != nil {
			return PromptView{}, err
		}
		sessionID = id
	}
	reason := "asked for (--from-start)"
	if opt.AllParts {
		reason = "asked for (--all-parts)"
	}
	if !opt.FromStart && !opt.AllParts {
		v, why, err := q.promptFromCheckpoint(ctx, sessionID, step, sensitive)
		if err != nil || why == "" {
			return v, err
		}
		reason = why
	}
	f, err := q.findReceipt(ctx, sessionID, step)
	if err != nil {
		return PromptView{}, err
	}
	v, err := promptView(sessionID, f, sensitive)
	v.FromStart = reason
	if !opt.AllParts {
		condense(&v, f.shown)
	}
	return v, err
}

// PromptWithWireAt is PromptWithWire (the body needs every message, so it reads from the
// start), shown as PromptAt shows a step.
func (q *Queries) PromptWithWireAt(ctx context.Context, sessionID string, step int, sensitive bool, render WireRenderer, opt PromptOptions) (PromptView, []WireCheck, error) {
	v, checks, f, err := q.promptWithWire(ctx, sessionID, step, sensitive, render)
	if f == nil {
		return v, checks, err
	}
	v.FromStart = "--wire renders the whole body"
	if !opt.AllParts {
		condense(&v, f.shown)
	}
	return v, checks, err
}

// condense lists only the conversation parts from shown on; the others are summed up.
func condense(v *PromptView, shown int) {
	sections := min(len(v.Receipt.Sections), len(v.Receipt.Messages))
	conv := v.Receipt.Messages[sections:]
	v.Parts = len(conv)
	shown = min(max(shown, 0), len(conv))
	d, err := prompt.ConversationDigest(conv[:shown])
	if err != nil {
		return
	}
	v.Earlier = &EarlierParts{Parts: shown, Digest: d}
	v.Receipt.Messages = append(v.Receipt.Messages[:sections:sections], conv[shown:]...)
	if msgs := v.Projection.Messages; len(msgs) == sections+len(conv) {
		v.Projection.Messages = append(msgs[:sections:sections], msgs[sections+shown:]...)
	}
}

// shownFrom is where a view's list of parts starts: after the stored receipt's base (what the
// step added), or, for a receipt stored whole, at the last user message (the turn's).
func shownFrom(stored, full prompt.Receipt) int {
	if b := stored.ConversationBase; b != nil {
		return b.Parts
	}
	conv := full.Messages[min(len(full.Sections), len(full.Messages)):]
	for i := len(conv) - 1; i >= 0; i-- {
		if conv[i].Role == string(model.RoleUser) {
			return i
		}
	}
	return 0
}

// checkpointRow is a prompt_checkpoint row of kind resume.
type checkpointRow struct {
	receiptID, headerID      string
	revision, headerRevision uint64
	step                     int
}

func (q *Queries) checkpointBefore(ctx context.Context, sessionID string, step int) (checkpointRow, bool, error) {
	query, args := projections.CheckpointLatestQuery, []any{sessionID}
	if step > 0 {
		query, args = projections.CheckpointBeforeQuery, []any{sessionID, step}
	}
	t, err := q.SQL(ctx, query, 1, args...)
	if err != nil || len(t.Rows) == 0 {
		return checkpointRow{}, false, err
	}
	row := t.Rows[0]
	num := func(v any) uint64 { n, _ := strconv.ParseUint(fmt.Sprint(v), 10, 64); return n }
	return checkpointRow{receiptID: text(row[0]), revision: num(row[1]), step: int(num(row[2])), headerID: text(row[3]),
		headerRevision: num(row[4])}, true, nil
}

func text(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	return fmt.Sprint(v)
}

// receiptAt reads the receipt event at a revision of the session's stream.
func (q *Queries) receiptAt(ctx context.Context, stream string, revision uint64) (events.PromptAssembled, bool, error) {
	var out events.PromptAssembled
	found := false
	_, err := commands.Load(ctx, q.log, q.registry, stream, revision, func(rec events.Recorded, p events.Payload) error {
		out, found = p.(events.PromptAssembled)
		return errStepRead
	})
	if err != nil && !errors.Is(err, errStepRead) {
		return out, false, err
	}
	return out, found, nil
}

// checkpointLog is what the events from a checkpoint on hold for the step asked for.
type checkpointLog struct {
	stream   string
	cp       events.PromptAssembled
	seen     bool
	step     int
	tr       *transcript.State
	reason   string
	after    map[string]prompt.Receipt
	eventIDs map[string]string
	views    map[string][]model.Message
	requests map[int]events.ProviderRequest
	latest   int
}

func (l *checkpointLog) fold(rec events.Recorded, p events.Payload) error {
	if !l.seen {
		cp, ok := p.(events.PromptAssembled)
		if !ok || cp.ReceiptID != l.cp.ReceiptID || cp.Resume == nil {
			l.reason = "the checkpoint's event is not its receipt"
			return errStepRead
		}
		l.cp, l.seen = cp, true
		// The transcript's first Parts messages are the checkpoint's: only their count matters
		// here, the messages after them are read from the events.
		l.tr.Messages = make([]model.Message, cp.Resume.Parts)
		return nil
	}
	switch e := p.(type) {
	case events.ProviderRequest:
		if e.Status == events.RequestStarted && l.step > 0 && e.Step > l.step {
			return errStepRead
		}
	case events.TranscriptCompacted, events.SessionForked:
		l.reason = "the transcript was compacted after the checkpoint"
		return errStepRead
	}
	if err := l.tr.Evolve(p); err != nil {
		l.reason = "an event after the checkpoint does not fold: " + err.Error()
		return errStepRead
	}
	switch e := p.(type) {
	case events.ProviderRequest:
		if e.Status == events.RequestStarted {
			l.requests[e.Step] = e
			l.latest = max(l.latest, e.Step)
		}
	case events.PromptAssembled:
		l.after[e.ReceiptID] = e.PromptReceipt
		l.eventIDs[e.ReceiptID] = rec.ID
		l.views[e.ReceiptID] = l.tr.Messages
	}
	return nil
}

// promptFromCheckpoint checks the step from the session's latest checkpoint before it. A
// reason ("" when it did) says why it could not: the caller then reads from the start.
func (q *Queries) promptFromCheckpoint(ctx context.Context, sessionID string, step int, sensitive bool) (PromptView, string, error) {
	row, ok, err := q.checkpointBefore(ctx, sessionID, step)
	if err != nil || !ok {
		return PromptView{}, "no checkpoint before the step", err
	}
	stream := commands.SessionStream(sessionID)
	l := &checkpointLog{stream: stream, step: step, tr: transcript.New(), after: map[string]prompt.Receipt{}, eventIDs: map[string]string{},
		views: map[string][]model.Message{}, requests: map[int]events.ProviderRequest{}}
	l.cp.ReceiptID = row.receiptID
	if _, err := commands.Load(ctx, q.log, q.registry, stream, row.revision, l.fold); err != nil && !errors.Is(err, errStepRead) {
		return PromptView{}, "", err
	}
	if l.reason != "" || !l.seen {
		return PromptView{}, l.reason + "; checkpoint " + row.receiptID, nil
	}
	if step == 0 {
		if l.latest <= row.step {
			return q.promptFromCheckpoint(ctx, sessionID, row.step, sensitive)
		}
		step = l.latest
	}
	req, ok := l.requests[step]
	if !ok {
		return PromptView{}, fmt.Sprintf("step %d is not after checkpoint %s", step, row.receiptID), nil
	}
	r, ok := l.after[req.PromptReceiptID]
	if !ok {
		return PromptView{}, "the step's receipt is not after the checkpoint", nil
	}
	// A receipt id recorded again after the checkpoint is the later receipt's to a reader from
	// the start (the last one wins): the checkpoint, or its header, would not be what it reads.
	if _, again := l.after[row.receiptID]; again {
		return PromptView{}, "the checkpoint's receipt id is recorded again after it", nil
	}
	if _, again := l.after[row.headerID]; again {
		return PromptView{}, "the checkpoint's header receipt id is recorded again after it", nil
	}
	header, why, err := q.checkpointHeader(ctx, stream, row)
	if err != nil || why != "" {
		return PromptView{}, why, err
	}
	logged, err := prompt.LoggedMessages(l.views[req.PromptReceiptID][l.cp.Resume.Parts:])
	if err != nil {
		return PromptView{}, "the transcript's messages do not encode", nil
	}
	res, why := prompt.FromCheckpoint(req.PromptReceiptID, r, prompt.Checkpointed{ID: l.cp.ReceiptID, Receipt: l.cp.PromptReceipt,
		HeaderID: row.headerID, Header: header, After: l.after, Logged: logged})
	if why != "" {
		return PromptView{}, why + " (from checkpoint " + row.receiptID + ")", nil
	}
	boundary, err := q.boundaryBefore(ctx, sessionID, stream, row.revision)
	if err != nil {
		return PromptView{}, "", err
	}
	v := PromptView{SessionID: sessionID, Step: step, RequestID: req.RequestID, ReceiptID: req.PromptReceiptID, Boundary: boundary,
		EventID: l.eventIDs[req.PromptReceiptID], Verified: true, Purpose: req.Purpose, DebugView: resumedView(res, sensitive),
		Checkpoint: &PromptCheckpoint{ReceiptID: l.cp.ReceiptID, Step: row.step, Revision: row.revision, Parts: l.cp.Resume.Parts,
			Digest: l.cp.ConversationDigest},
		Earlier: &EarlierParts{Parts: res.Shown, Digest: res.ShownDigest}, Parts: res.Parts}
	return v, "", nil
}

// checkpointHeader is the receipt recording the checkpoint's header, with the blobs of its
// sections and tools that earlier header receipts recorded (a run records only blobs its
// session did not hold).
func (q *Queries) checkpointHeader(ctx context.Context, stream string, row checkpointRow) (prompt.Receipt, string, error) {
	e, ok, err := q.receiptAt(ctx, stream, row.headerRevision)
	if err != nil || !ok || e.ReceiptID != row.headerID {
		return prompt.Receipt{}, "the checkpoint's header receipt is not at its revision", err
	}
	h := e.PromptReceipt
	need := map[string]bool{}
	for _, s := range h.Sections {
		need[s.SHA256] = true
	}
	for _, p := range h.Tools {
		need[p.SHA256] = true
	}
	blobs := map[string]string{}
	take := func(from map[string]string) {
		for d := range need {
			if b, ok := from[d]; ok {
				blobs[d] = b
				delete(need, d)
			}
		}
	}
	take(h.Blobs)
	if len(need) > 0 {
		t, err := q.SQL(ctx, projections.HeaderReceiptsQuery, 1<<20, e.SessionID, int64(row.headerRevision))
		if err != nil {
			return prompt.Receipt{}, "", err
		}
		for _, r := range t.Rows {
			rev, _ := strconv.ParseUint(text(r[0]), 10, 64)
			if len(need) == 0 {
				break
			}
			older, ok, err := q.receiptAt(ctx, stream, rev)
			if err != nil {
				return prompt.Receipt{}, "", err
			}
			if ok {
				take(older.Blobs)
			}
		}
	}
	if len(need) > 0 {
		return prompt.Receipt{}, "a blob of the checkpoint's header is not in the header receipts", nil
	}
	h.Blobs = blobs
	return h, "", nil
}

// resumedView is the debug view of a receipt checked from a checkpoint.
func resumedView(res prompt.Resumed, sensitive bool) prompt.DebugView {
	v := prompt.DebugView{Sensitive: sensitive, Projection: res.Request}
	for _, s := range res.Receipt.Sections {
		v.Sections = append(v.Sections, prompt.Section{PromptSection: s, Content: res.Receipt.Blobs[s.SHA256]})
	}
	v.Receipt = res.Receipt
	v.Receipt.Blobs = nil
	if !sensitive {
		v = v.Redact()
	}
	return v
}

// boundaryBefore is the session's latest compaction before a revision (none after a
// checkpoint is read from it), nil before the first.
func (q *Queries) boundaryBefore(ctx context.Context, sessionID, stream string, revision uint64) (*Boundary, error) {
	t, err := q.SQL(ctx, projections.BoundaryBeforeQuery, 1, sessionID, int64(revision))
	if err != nil || len(t.Rows) == 0 {
		return nil, err
	}
	rev, _ := strconv.ParseUint(text(t.Rows[0][0]), 10, 64)
	var out *Boundary
	_, err = commands.Load(ctx, q.log, q.registry, stream, rev, func(rec events.Recorded, p events.Payload) error {
		if e, ok := p.(events.TranscriptCompacted); ok {
			out = &Boundary{Window: e.Window, Through: e.Through, Step: e.Step, RequestID: e.RequestID,
				PromptReceiptID: e.PromptReceiptID, SummarySHA256: e.SummarySHA256, EventID: rec.ID}
		}
		return errStepRead
	})
	if err != nil && !errors.Is(err, errStepRead) {
		return nil, err
	}
	return out, nil
}
