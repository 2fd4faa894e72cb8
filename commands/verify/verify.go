// Package verify walks the event log's hash chains (events.ChainWalker) over a whole log or a
// few streams, for `zuno verify` (docs/storage.md, "Hash chain"). Reading is here; what a
// fault is lives in events; the read models' drift check lives in projections.
package verify

import (
	"context"
	"fmt"
	"sort"

	"github.com/zuno-run/zuno/events"
)

// Log is what verifying needs of an event store.
type Log interface {
	ReadAll(ctx context.Context, after uint64, limit int) ([]events.Recorded, error)
	ReadStream(ctx context.Context, stream string, from uint64, limit int) ([]events.Recorded, error)
	LastPosition(ctx context.Context) (uint64, error)
	// ChainGenesis is the last position written before the chain began.
	ChainGenesis(ctx context.Context) (uint64, error)
}

// Options say what to walk and what to compare it with.
type Options struct {
	// Streams limits the walk to these streams; empty walks the whole log in position order.
	Streams []string
	// Anchored heads are compared with the events at their revisions; only those of the
	// streams walked count.
	Anchored []events.StreamHead
	// Progress, when set, is called after each page with the events read so far and the
	// total expected (0 when unknown).
	Progress func(done, total uint64)
}

// Report is the chain's verdict.
type Report struct {
	Events  uint64              `json:"events"`
	Streams int                 `json:"streams"`
	Genesis uint64              `json:"genesis"`
	Faults  []events.ChainFault `json:"faults"`
	Heads   []events.StreamHead `json:"-"`
}

// page is how many events one read returns.
const page = 2048

// Chain walks the chains and returns the first fault of each faulty stream.
func Chain(ctx context.Context, log Log, opts Options) (Report, error) {
	genesis, err := log.ChainGenesis(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("read the chain's genesis: %w", err)
	}
	w := events.NewChainWalker(genesis, inScope(opts.Anchored, opts.Streams))
	if len(opts.Streams) == 0 {
		err = walkAll(ctx, log, w, opts.Progress)
	} else {
		err = walkStreams(ctx, log, w, opts.Streams, opts.Progress)
	}
	if err != nil {
		return Report{}, err
	}
	return Report{Events: w.Events(), Streams: w.Streams(), Genesis: genesis, Faults: w.Faults(), Heads: w.Heads()}, nil
}

func walkAll(ctx context.Context, log Log, w *events.ChainWalker, progress func(uint64, uint64)) error {
	total, err := log.LastPosition(ctx)
	if err != nil {
		return err
	}
	var after uint64
	for {
		batch, err := log.ReadAll(ctx, after, page)
		if err != nil {
			return fmt.Errorf("read the log after position %d: %w", after, err)
		}
		for _, r := range batch {
			w.Add(r)
		}
		if progress != nil && len(batch) > 0 {
			progress(w.Events(), total)
		}
		if len(batch) < page {
			return nil
		}
		after = batch[len(batch)-1].Position
	}
}

func walkStreams(ctx context.Context, log Log, w *events.ChainWalker, streams []string, progress func(uint64, uint64)) error {
	for _, stream := range streams {
		var from uint64
		for {
			batch, err := log.ReadStream(ctx, stream, from, page)
			if err != nil {
				return fmt.Errorf("read %s from revision %d: %w", stream, from, err)
			}
			for _, r := range batch {
				w.Add(r)
			}
			if progress != nil && len(batch) > 0 {
				progress(w.Events(), 0)
			}
			if len(batch) < page {
				break
			}
			from = batch[len(batch)-1].StreamRevision + 1
		}
	}
	return nil
}

// inScope keeps the anchored heads of the streams walked (all when streams is empty).
func inScope(anchored []events.StreamHead, streams []string) []events.StreamHead {
	if len(streams) == 0 {
		return anchored
	}
	want := make(map[string]bool, len(streams))
	for _, s := range streams {
		want[s] = true
	}
	var out []events.StreamHead
	for _, h := range anchored {
		if want[h.Stream] {
			out = append(out, h)
		}
	}
	return out
}

// CodeVerifyFailed is the error `zuno verify` ends with when anything does not verify: a chain
// fault, read-model drift or an anchor mismatch (exit status 1).
const CodeVerifyFailed = "verify_failed"

// FailedError says how much did not verify; the report itself was printed.
type FailedError struct {
	Faults, Drift int
}

func (e *FailedError) Error() string {
	return fmt.Sprintf("%s: %d stream(s) with a chain fault and %d read-model row(s) of drift; the log or read models were changed outside zuno: see the report above, restore from a backup, and rebuild the read models with `zuno projections rebuild`",
		CodeVerifyFailed, e.Faults, e.Drift)
}

// Code returns the stable code.
func (e *FailedError) Code() string { return CodeVerifyFailed }

// MergeHeads is what a new anchor records: the heads just verified, and, when only some
// streams were walked, the previous anchor's heads of the others, sorted by stream.
func MergeHeads(previous, verified []events.StreamHead, walked []string) []events.StreamHead {
	byStream := map[string]events.StreamHead{}
	if len(walked) > 0 {
		for _, h := range previous {
			byStream[h.Stream] = h
		}
	}
	for _, h := range verified {
		byStream[h.Stream] = h
	}
	out := make([]events.StreamHead, 0, len(byStream))
	for _, h := range byStream {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Stream < out[j].Stream })
	return out
}
