// Package live is a process's one live feed of the log (docs/architecture.md, "One live
// feed"): a single subscription, fanned out to every waiter in the process with a match
// function, instead of a poll loop or a subscription of its own for each. A turn waiting for
// an answer, and later reactions and live clients, wait here.
package live

import (
	"context"
	"errors"
	"sync"

	"github.com/zuno-run/zuno/events"
)

// Log is what the feed reads: the head, pages of the global order, and a live subscription.
type Log interface {
	LastPosition(ctx context.Context) (uint64, error)
	ReadAll(ctx context.Context, after uint64, limit int) ([]events.Recorded, error)
	Subscribe(ctx context.Context, after uint64, handle func(events.Recorded) error) error
}

// headerLog is a Log that can follow the envelopes of the log alone (position, id, stream,
// revision, type): the feed follows those when the store offers it, so a waiter's match sees
// the envelope, and reads the event's content itself if it needs it. With a store that does
// not, waiters see whole events; a match must not depend on the content either way.
type headerLog interface {
	SubscribeHeaders(ctx context.Context, after uint64, handle func(events.Recorded) error) error
}

// ErrStopped is returned to waiters when the feed has stopped (its context ended, or its
// subscription failed; Err says why).
var ErrStopped = errors.New("live: the feed has stopped")

// Feed follows the log from where it stood when Run started. Create it with New and start
// Run once; Wait may be called before Run has started (it waits for it).
type Feed struct {
	log     Log
	started chan struct{}
	done    chan struct{}

	mu      sync.Mutex
	pos     uint64 // the last position handed to the waiters
	waiters map[*waiter]struct{}
	err     error
}

type waiter struct {
	after uint64
	match func(events.Recorded) bool
	found chan events.Recorded // buffered 1: the dispatcher never blocks on a waiter
}

// New returns a feed over log; nothing runs until Run.
func New(log Log) *Feed {
	return &Feed{log: log, started: make(chan struct{}), done: make(chan struct{}), waiters: map[*waiter]struct{}{}}
}

// Run subscribes at the log's head and hands every event after it to the waiters, until ctx
// ends or the subscription fails. It returns why it stopped.
func (f *Feed) Run(ctx context.Context) error {
	pos, err := f.log.LastPosition(ctx)
	if err != nil {
		f.stop(err)
		return err
	}
	f.mu.Lock()
	f.pos = pos
	f.mu.Unlock()
	close(f.started)
	subscribe := f.log.Subscribe
	if h, ok := f.log.(headerLog); ok {
		subscribe = h.SubscribeHeaders
	}
	err = subscribe(ctx, pos, func(rec events.Recorded) error {
		f.dispatch(rec)
		return nil
	})
	f.stop(err)
	return err
}

func (f *Feed) stop(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = errors.Join(ErrStopped, err)
		close(f.done)
	}
}

// dispatch hands rec to every waiter it matches; each waiter gets one event and leaves.
func (f *Feed) dispatch(rec events.Recorded) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pos = rec.Position
	for w := range f.waiters {
		if rec.Position > w.after && w.match(rec) {
			w.found <- rec
			delete(f.waiters, w)
		}
	}
}

// Wait returns the first event after position after that match accepts: one already in the
// log, or the next to arrive. match runs on the feed's goroutine while it dispatches, so it
// must be quick and must not call the feed; it decides on the envelope (stream, type,
// position, id), the event's Data being absent when the store hands the feed envelopes only.
func (f *Feed) Wait(ctx context.Context, after uint64, match func(events.Recorded) bool) (events.Recorded, error) {
	select {
	case <-f.started:
	case <-f.done:
		return events.Recorded{}, f.Err()
	case <-ctx.Done():
		return events.Recorded{}, ctx.Err()
	}
	w := &waiter{after: after, match: match, found: make(chan events.Recorded, 1)}
	f.mu.Lock()
	seen := f.pos
	f.waiters[w] = struct{}{}
	f.mu.Unlock()
	defer f.leave(w)
	// What the feed handed out before w joined is read from the log itself.
	if rec, ok, err := f.scan(ctx, after, seen, match); err != nil || ok {
		return rec, err
	}
	select {
	case rec := <-w.found:
		return rec, nil
	case <-f.done:
		return events.Recorded{}, f.Err()
	case <-ctx.Done():
		return events.Recorded{}, ctx.Err()
	}
}

func (f *Feed) leave(w *waiter) {
	f.mu.Lock()
	delete(f.waiters, w)
	f.mu.Unlock()
}

const scanPage = 512

// scan looks for a match among the events after from up to and including to.
func (f *Feed) scan(ctx context.Context, from, to uint64, match func(events.Recorded) bool) (events.Recorded, bool, error) {
	for from < to {
		page, err := f.log.ReadAll(ctx, from, scanPage)
		if err != nil {
			return events.Recorded{}, false, err
		}
		if len(page) == 0 {
			break
		}
		for _, rec := range page {
			if rec.Position > to {
				return events.Recorded{}, false, nil
			}
			if match(rec) {
				return rec, true, nil
			}
			from = rec.Position
		}
	}
	return events.Recorded{}, false, nil
}

// Seen is the position of the last event the feed has handed out: at or below the log's head.
// A waiter that waits after it for an event that can only be recorded later (an interrupt of
// a turn whose lease this process takes next) misses nothing, and asking costs no query.
func (f *Feed) Seen(ctx context.Context) (uint64, error) {
	select {
	case <-f.started:
	case <-f.done:
		return 0, f.Err()
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pos, nil
}

// Head is the log's last position now: a waiter that reads the log after asking for it, and
// then waits after it, misses nothing (Wait's contract).
func (f *Feed) Head(ctx context.Context) (uint64, error) { return f.log.LastPosition(ctx) }

// Err is why the feed stopped; nil while it runs.
func (f *Feed) Err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
