package react

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zuno-run/zuno/commands/live"
	"github.com/zuno-run/zuno/events"
)

// Log is the global order of the log the runner reads.
type Log interface {
	ReadAll(ctx context.Context, after uint64, limit int) ([]events.Recorded, error)
}

// Checkpoints keep how far each reaction has read: the position of the last event whose
// commands it issued.
type Checkpoints interface {
	Load(ctx context.Context, reaction string) (uint64, error)
	Save(ctx context.Context, reaction string, position uint64) error
}

// Runner feeds the log to its reactions and issues their commands, and, every Every, sweeps
// for expired leases. Run one per process that should react (zuno worker); several on one
// store issue the same commands, which the command ids make one.
type Runner struct {
	Log         Log
	Registry    *events.Registry
	Checkpoints Checkpoints
	// Feed wakes the runner when the log grows; nil polls every Every.
	Feed      *live.Feed
	Reactions []Reaction
	// Sweep returns the commands the state of the store calls for now (expired leases); nil
	// sweeps nothing.
	Sweep func(ctx context.Context) ([]Command, error)
	// Dispatch issues a command. It returns nil when the command is done or has nothing to
	// do (Skipped), and an error when it should be tried again later.
	Dispatch func(ctx context.Context, c Command) error
	// Every is how often the runner sweeps (and polls without a Feed); Batch how many events
	// it reads at once.
	Every time.Duration
	Batch int
	// Report, when set, is told each command issued and each failure.
	Report func(c Command, err error)
}

// Run reacts until ctx ends.
func (r *Runner) Run(ctx context.Context) error {
	cps, err := r.load(ctx)
	if err != nil {
		return err
	}
	nextSweep := time.Time{}
	backoff := time.Duration(0)
	for {
		if !time.Now().Before(nextSweep) {
			r.sweep(ctx)
			nextSweep = time.Now().Add(r.every())
		}
		n, err := r.step(ctx, cps)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		switch {
		case err != nil:
			// The trigger stays where it failed, and is tried again after a pause that grows
			// (to Every): never at once, which would retry as fast as the store answers.
			r.report(Command{}, err)
			backoff = min(max(2*backoff, time.Second), r.every())
			pause(ctx, backoff)
		case n == 0:
			backoff = 0
			r.idle(ctx, cps, time.Until(nextSweep))
		default:
			backoff = 0
		}
	}
}

// pause waits d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// CatchUp reacts to every event up to the log's head and returns; the tests' and a one-shot
// worker's entry.
func (r *Runner) CatchUp(ctx context.Context) error {
	cps, err := r.load(ctx)
	if err != nil {
		return err
	}
	for {
		n, err := r.step(ctx, cps)
		if err != nil || n == 0 {
			return err
		}
	}
}

func (r *Runner) load(ctx context.Context) (map[string]uint64, error) {
	cps := map[string]uint64{}
	for _, re := range r.Reactions {
		p, err := r.Checkpoints.Load(ctx, re.Name)
		if err != nil {
			return nil, fmt.Errorf("react: load the checkpoint of %s: %w", re.Name, err)
		}
		cps[re.Name] = p
	}
	return cps, nil
}

// step reads one batch after the lowest checkpoint, issues the commands of each reaction
// whose checkpoint lies before the event, and saves the checkpoints of the reactions that
// issued all of theirs. It returns how many events it read.
func (r *Runner) step(ctx context.Context, cps map[string]uint64) (int, error) {
	from := lowest(cps)
	recs, err := r.Log.ReadAll(ctx, from, r.batch())
	if err != nil || len(recs) == 0 {
		return 0, err
	}
	for _, re := range r.Reactions {
		if err := r.feed(ctx, re, cps, recs); err != nil {
			return len(recs), err
		}
	}
	return len(recs), nil
}

// feed gives one reaction the batch's events past its checkpoint; the checkpoint moves to the
// last event whose commands were all issued.
func (r *Runner) feed(ctx context.Context, re Reaction, cps map[string]uint64, recs []events.Recorded) error {
	done := cps[re.Name]
	var failed error
	for _, rec := range recs {
		if rec.Position <= done || !wants(re, rec.Type) {
			continue
		}
		if failed = r.react(ctx, re, rec); failed != nil {
			break
		}
		done = rec.Position
	}
	if failed == nil {
		done = max(done, recs[len(recs)-1].Position)
	}
	if done != cps[re.Name] {
		if err := r.Checkpoints.Save(ctx, re.Name, done); err != nil {
			return err
		}
		cps[re.Name] = done
	}
	return failed
}

func (r *Runner) react(ctx context.Context, re Reaction, rec events.Recorded) error {
	p, err := r.Registry.Decode(rec)
	if err != nil {
		return fmt.Errorf("react: %s: decode event %d: %w", re.Name, rec.Position, err)
	}
	for _, c := range re.On(rec, p) {
		err := r.Dispatch(ctx, c)
		r.report(c, err)
		if err != nil && !errors.Is(err, Skipped) {
			return err
		}
	}
	return nil
}

func (r *Runner) sweep(ctx context.Context) {
	if r.Sweep == nil {
		return
	}
	cmds, err := r.Sweep(ctx)
	if err != nil {
		r.report(Command{}, err)
		return
	}
	for _, c := range cmds {
		r.report(c, r.Dispatch(ctx, c)) // a failed one is found again at the next sweep
	}
}

// idle waits for the log to grow past the lowest checkpoint, at most wait.
func (r *Runner) idle(ctx context.Context, cps map[string]uint64, wait time.Duration) {
	wait = min(max(wait, 10*time.Millisecond), r.every())
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if r.Feed != nil {
		_, _ = r.Feed.Wait(ctx, lowest(cps), func(events.Recorded) bool { return true })
		return
	}
	<-ctx.Done()
}

func (r *Runner) report(c Command, err error) {
	if r.Report != nil && (err != nil || c.ID != "") {
		r.Report(c, err)
	}
}

func (r *Runner) every() time.Duration {
	if r.Every <= 0 {
		return 5 * time.Second
	}
	return r.Every
}

func (r *Runner) batch() int {
	if r.Batch <= 0 {
		return 500
	}
	return r.Batch
}

func lowest(cps map[string]uint64) uint64 {
	first, low := true, uint64(0)
	for _, p := range cps {
		if first || p < low {
			low, first = p, false
		}
	}
	return low
}

func wants(re Reaction, typ string) bool {
	for _, t := range re.Types {
		if t == typ {
			return true
		}
	}
	return false
}

// Skipped marks a dispatch error that means the command had nothing to do (the turn was not
// waiting, someone else holds it): the trigger is done with.
var Skipped = errors.New("react: nothing to do")
