package queries

import (
	"context"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/transcript"
	"github.com/zuno-run/zuno/events"
)

// folded is one event of a session's stream, decoded.
type folded struct {
	rec events.Recorded
	p   events.Payload
}

func newAuditWalk(q *Queries, sum WireSummer, out *SessionAudit, stream string) *auditWalk {
	w := &auditWalk{q: q, sum: sum, out: out, stream: stream, receipts: map[string]prompt.Receipt{}, blobs: map[string]string{},
		transcript: map[string]string{}, missedIDs: map[string]bool{}, missedBlobs: map[string]bool{}, tr: transcript.New(),
		requests: map[string]model.Request{}}
	w.logged = prompt.Logged{Blobs: w.transcript}
	w.auditor = prompt.NewAuditor(w.lookup, w.blob)
	return w
}

// lookup finds a base receipt by id.
func (w *auditWalk) lookup(id string) (prompt.Receipt, bool) {
	r, ok := w.receipts[id]
	if !ok && !w.complete {
		w.missedIDs[id] = true
	}
	return r, ok
}

// blob looks a digest up in the pool: the receipts' blobs, then the transcript's.
func (w *auditWalk) blob(d string) (string, bool) {
	if b, ok := w.blobs[d]; ok {
		return b, true
	}
	if !w.complete {
		w.missedBlobs[d] = true
	}
	b, ok := w.transcript[d]
	return b, ok
}

// add records what a receipt event brings to the pool.
func (w *auditWalk) add(p events.Payload) {
	r, ok := p.(events.PromptAssembled)
	if !ok {
		return
	}
	if _, dup := w.receipts[r.ReceiptID]; dup {
		w.duplicateIDs = true // the last one is the id's: one looked up before it was another
	}
	w.receipts[r.ReceiptID] = r.PromptReceipt
	for d, b := range r.Blobs {
		if _, ok := w.blobs[d]; !ok {
			w.blobs[d] = b
		}
	}
}

// walk takes one event; true when it is the session's first bad one (the walk ends).
func (w *auditWalk) walk(f folded) bool {
	fault := w.step(f.rec, f.p)
	if fault == nil {
		return false
	}
	fault.EventID, fault.Type, fault.Position, fault.Revision = f.rec.ID, f.rec.Type, f.rec.Position, f.rec.StreamRevision
	w.out.Fault = fault
	return true
}

// auditBatch is how many events the loader hands the walk at a time.
const auditBatch = 256

// walkWhileLoading reads and decodes the session's events in one goroutine while this one
// walks those already decoded, so that the walk costs what the larger of the two costs, not
// their sum, where a second CPU is free (docs/storage.md, "`zuno verify`"). It returns how
// many events it read, the stream's last revision read, and the first read or decoding
// error, as commands.Load reports it; the walk is then void. The events are not kept: a
// batch the walk is done with is handed back to the loader to fill again, so the walk
// allocates what one batch holds, not what the session holds, and the garbage collector,
// a third of the audit's CPU when every event was kept, has little to do.
//
// A receipt is checked with the receipts and blobs recorded up to it, where the reference
// takes the whole session's (a later receipt may record a blob or hold an id that an earlier
// one names). That is the same answer for every lookup it found an answer for among the
// receipts (a blob's first recording wins, and an id is one receipt's unless it is
// recorded twice); the walk records every other lookup, and answeredOtherwise says whether
// the whole session would have answered one of them otherwise. A legitimate log never
// does: its receipts name only earlier ones, and record only blobs not recorded before.
func (w *auditWalk) walkWhileLoading(ctx context.Context) (int, int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Batches go round: the loader fills a free one and sends it, the walk takes it and
	// frees it. Two in flight let both sides work at once.
	const inFlight = 3
	batches, free := make(chan []folded, inFlight), make(chan []folded, inFlight)
	for range inFlight {
		free <- make([]folded, 0, auditBatch)
	}
	var (
		loadErr error // written before batches is closed
		last    int64
	)
	go func() {
		defer close(batches)
		var batch []folded
		take := func() error {
			select {
			case batch = <-free:
				batch = batch[:0]
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		send := func() error {
			select {
			case batches <- batch:
				batch = nil
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		last, loadErr = commands.Load(ctx, w.q.log, w.q.registry, w.stream, 0, func(rec events.Recorded, p events.Payload) error {
			if batch == nil {
				if err := take(); err != nil {
					return err
				}
			}
			if batch = append(batch, folded{rec, p}); len(batch) == auditBatch {
				return send()
			}
			return nil
		})
		if loadErr == nil && len(batch) > 0 {
			loadErr = send()
		}
	}()
	n, done := 0, false
	for batch := range batches {
		n += len(batch)
		for _, f := range batch {
			w.add(f.p)
			if !done {
				done = w.walk(f)
			}
		}
		clear(batch) // what it points to is the walk's to keep or drop, not the batch's
		free <- batch
	}
	return n, last, loadErr
}

// walkKnowing reads the session's events again, up to revision last (the first walk's
// end), and walks them with every receipt of the session known from the start.
func (w *auditWalk) walkKnowing(ctx context.Context, last int64) error {
	var all []folded
	if _, err := commands.LoadUpTo(ctx, w.q.log, w.q.registry, w.stream, uint64(last), func(rec events.Recorded, p events.Payload) error {
		all = append(all, folded{rec, p})
		return nil
	}); err != nil {
		return err
	}
	for _, f := range all {
		w.add(f.p)
	}
	w.complete = true
	for _, f := range all {
		if w.walk(f) {
			return nil
		}
	}
	return nil
}

// answeredOtherwise reports whether the whole session's receipts answer a lookup the walk
// made otherwise than they did when it made it.
func (w *auditWalk) answeredOtherwise() bool {
	if w.duplicateIDs {
		return true
	}
	for id := range w.missedIDs {
		if _, ok := w.receipts[id]; ok {
			return true
		}
	}
	for d := range w.missedBlobs {
		if _, ok := w.blobs[d]; ok {
			return true
		}
	}
	return false
}
