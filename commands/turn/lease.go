package turn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/lease"
	"github.com/zuno-run/zuno/events"
)

// ErrInterrupted is the cause of a turn stopped by InterruptTurn; errLeaseLost of one whose
// lease was taken over.
var (
	ErrInterrupted = errors.New("turn: interrupted by request")
	errLeaseLost   = errors.New("turn: the lease was taken over")
)

// openTurnBinds says how an open turn binds others: by its lease when it recorded one (held,
// expired, or its holder known dead), else, for a turn an older build started, by its owner
// process (Driver.Alive). It returns the error that refuses a run of the session, or nil when
// the open turn may be settled and taken over; leased says that it holds a lease to take over.
func (r *run) openTurnBinds(ctx context.Context, turnID string, owner *events.TurnOwner) (leased bool, err error) {
	if l := r.d.Leases; l != nil {
		cur, err := l.Current(ctx, turnID)
		if err != nil {
			return false, err
		}
		if cur.TurnID == turnID && cur.Holder != "" {
			// --recover may settle only what is provably gone: a holder on this host whose
			// process still runs is refused even then (docs/turns.md, "The restart rule").
			gone := l.Dead != nil && l.Dead(cur.Holder)
			asserted := r.req.ForceRecover && !r.onThisHost(lease.HolderHost(cur.Holder))
			if cur.Live(r.d.Clock.Now()) && !gone && !asserted {
				return true, r.busy(fmt.Sprintf("turn %s of session %s is running in %s (its lease runs until %s unless renewed)%s",
					turnID, r.req.SessionID, cur.Holder, cur.ExpiresAt.Format(time.RFC3339), r.notRecoverable(lease.HolderHost(cur.Holder))))
			}
			return !cur.Released, nil
		}
	}
	if o := owner; o != nil && r.d.Alive != nil && r.d.Alive(*o) && !(r.req.ForceRecover && !r.onThisHost(o.Host)) {
		return false, r.busy(fmt.Sprintf("turn %s of session %s is still running (process %d on %s)%s", turnID, r.req.SessionID, o.PID, o.Host, r.notRecoverable(o.Host)))
	}
	return false, nil
}

// onThisHost reports whether host is this process's: there, whether a process runs can be
// checked, so nobody's word (--recover) is taken for it.
func (r *run) onThisHost(host string) bool {
	return r.d.Owner != nil && host == r.d.Owner.Host
}

// notRecoverable explains a refusal of --recover: the process is alive on this host.
func (r *run) notRecoverable(host string) string {
	if !r.req.ForceRecover || !r.onThisHost(host) {
		return ""
	}
	return "; --recover settles only a turn whose process is gone, and that process runs on this host: stop it first"
}

// takeOver takes the expired lease of an open turn this run settles, so the log says who took
// it from whom (tookOver) and a holder that was only slow finds its lease lost and stops; the
// returned release gives it back once the turn is settled. A lease taken by another process in
// between is session_busy.
func (r *run) takeOver(ctx context.Context, turnID string, leased bool) (func(), error) {
	l := r.d.Leases
	if l == nil || !leased {
		return func() {}, nil
	}
	held := &commands.Held{}
	if err := l.Take(ctx, r.req.SessionID, turnID, r.req.Meta.CommandID, true, held); err != nil {
		return nil, err
	}
	return func() { _ = l.Release(context.WithoutCancel(ctx), r.req.SessionID, turnID, r.req.Meta.CommandID, held) }, nil
}

func (r *run) busy(what string) error {
	e := domain.NewError(CodeSessionBusy, what,
		"wait for it to finish or stop it (zuno session interrupt); if that process is gone, its lease expires, or continue with --recover")
	e.ID = r.req.SessionID
	return e
}

// hold takes the lease of this turn and keeps it while ctx lives: renewed at a third of its
// length, and watched for an interrupt. The returned context ends, with its cause, when the
// turn is interrupted or its lease is lost; release gives the lease back.
func (r *run) hold(ctx context.Context) (context.Context, func(), error) {
	l := r.d.Leases
	if l == nil {
		return ctx, func() {}, nil
	}
	// An interrupt can only name this turn once its lease is taken: one after what the feed
	// has seen now is all the watch has to look for, without reading the lease stream again or
	// asking the store for its head.
	var head uint64
	if r.d.Feed != nil {
		var err error
		if head, err = r.d.Feed.Seen(ctx); err != nil {
			return ctx, nil, err
		}
	}
	// A turn this command opens has no lease stream yet: its lease is taken without a read.
	held := &commands.Held{}
	if r.req.Resume == nil {
		held = commands.NewLease()
	}
	if err := l.Take(ctx, r.req.SessionID, r.turnID, r.req.Meta.CommandID, r.req.ForceRecover, held); err != nil {
		var de *domain.Error
		if errors.As(err, &de) && de.Code() == lease.CodeLeaseHeld {
			return ctx, nil, r.busy(de.Message)
		}
		return ctx, nil, err
	}
	live, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{}, 2)
	go func() { defer func() { done <- struct{}{} }(); r.renew(live, cancel, held) }()
	go func() { defer func() { done <- struct{}{} }(); r.watchInterrupt(live, head, cancel) }()
	release := func() {
		cancel(nil)
		<-done // renew has stopped writing held
		<-done
		// The record lands even when the run was cancelled.
		_ = l.Release(context.WithoutCancel(ctx), r.req.SessionID, r.turnID, r.req.Meta.CommandID, held)
	}
	return live, release, nil
}

// renew extends the lease until ctx ends; a lease taken over ends the turn.
func (r *run) renew(ctx context.Context, cancel context.CancelCauseFunc, held *commands.Held) {
	l := r.d.Leases
	every := l.TTL / 3
	for n := 1; ; n++ {
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		err := l.Renew(ctx, r.req.SessionID, r.turnID, r.req.Meta.CommandID, n, held)
		var de *domain.Error
		if errors.As(err, &de) && de.Code() == lease.CodeLeaseLost {
			cancel(errLeaseLost)
			return
		}
		// Another failure (the store briefly unavailable) is tried again at the next tick;
		// the lease lasts three ticks.
	}
}

// watchInterrupt ends the turn when an InterruptTurn for it lands in the lease stream after
// head (the log's head before the lease was taken).
func (r *run) watchInterrupt(ctx context.Context, head uint64, cancel context.CancelCauseFunc) {
	feed := r.d.Feed
	if feed == nil {
		return
	}
	stream := commands.LeaseStream(r.turnID)
	// The turn's own lease stream: an interrupt there names this turn.
	_, err := feed.Wait(ctx, head, func(rec events.Recorded) bool {
		return rec.Stream == stream && rec.Type == events.TypeTurnInterruptRequested
	})
	if err == nil {
		cancel(ErrInterrupted)
	}
}
