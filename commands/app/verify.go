package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/verify"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// Anchors reads and writes anchor files: the stream heads kept outside the database, signed
// when a key is configured (docs/storage.md, "`zuno verify`", Anchors).
type Anchors interface {
	// Read returns the heads the file recorded; ok is false when there is no file yet.
	Read(path string) (heads []events.StreamHead, ok bool, err error)
	// Write records heads in the file.
	Write(path string, heads []events.StreamHead, now time.Time) error
	// Signed says whether Write signs.
	Signed() bool
}

// VerifyRequest is what `zuno verify` checks: one session's streams, one stream, or (both
// empty) the whole log and the read models; and, with Anchor, the heads an anchor recorded.
type VerifyRequest struct {
	Session, Stream string
	// Anchor is the anchor file as the user named it; AnchorResolved is the same file
	// absolute, its links resolved, for the workspace check (CheckAnchor).
	Anchor, AnchorResolved string
	// Progress, when set, is told how far a long walk has come.
	Progress func(done, total uint64)
}

// VerifyReport is the verdict: the chains, the read models' drift and the anchor.
type VerifyReport struct {
	OK bool `json:"ok"`
	verify.Report
	Drift  []projections.Drift `json:"drift"`
	Anchor *AnchorReport       `json:"anchor,omitempty"`
}

// AnchorReport says what became of the anchor file.
type AnchorReport struct {
	Path string `json:"path"`
	// Compared is false when no anchor existed and this run wrote the first.
	Compared bool `json:"compared"`
	Written  bool `json:"written"`
	Signed   bool `json:"signed"`
	Streams  int  `json:"streams"`
}

// Verify walks the hash chains of what r names, compares the read models with a replay of the
// log when it names nothing, and checks the anchor, writing it anew only when everything
// verified (docs/storage.md, "Hash chain" and "`zuno verify`"). A report that does not verify comes with
// verify.FailedError; a session or stream without events is a usage error. Each run is counted
// (Ports.VerifyRuns), whichever face asked for it.
func (c *Commands) Verify(ctx context.Context, r VerifyRequest) (VerifyReport, error) {
	started := time.Now()
	out, err := c.verify(ctx, r)
	if result := verifyResult(ctx, err); result != "" {
		c.ports.VerifyRuns.Observe(verifyScope(r), result, time.Since(started))
	}
	return out, err
}

// verifyScope is the scope label of a run: all, session or stream.
func verifyScope(r VerifyRequest) string {
	switch {
	case r.Session != "":
		return "session"
	case r.Stream != "":
		return "stream"
	}
	return "all"
}

// verifyResult is the result label of a run; "" for a run that is not counted: a request
// refused before anything was verified (it named nothing to verify, or an anchor in a
// workspace), or one its caller interrupted, which say nothing of the log.
func verifyResult(ctx context.Context, err error) string {
	var failed *verify.FailedError
	var usage *UsageError
	switch {
	case err == nil:
		return verify.ResultVerified
	case errors.As(err, &failed):
		return verify.ResultFailed
	case errors.As(err, &usage), domain.CodeOf(err) == sandbox.CodeLogInWorkspace, ctx.Err() != nil:
		return ""
	}
	return verify.ResultError
}

func (c *Commands) verify(ctx context.Context, r VerifyRequest) (VerifyReport, error) {
	opts := verify.Options{Progress: r.Progress, Streams: verifyStreams(r)}
	var previous []events.StreamHead
	compared := false
	if r.Anchor != "" {
		heads, ok, err := c.ports.Anchors.Read(r.Anchor)
		if err != nil {
			return VerifyReport{}, err
		}
		previous, compared, opts.Anchored = heads, ok, heads
		if err := c.CheckAnchor(ctx, r.AnchorResolved); err != nil {
			return VerifyReport{}, err
		}
	}
	rep, err := verify.Chain(ctx, c.ports.Log, opts)
	if err != nil {
		return VerifyReport{}, err
	}
	if err := requireEvents(r, rep); err != nil {
		return VerifyReport{}, err
	}
	out := VerifyReport{Report: rep, Drift: []projections.Drift{}}
	if len(opts.Streams) == 0 {
		if out.Drift, err = c.ports.Drift(ctx); err != nil {
			return VerifyReport{}, err
		}
	}
	out.normalise()
	if r.Anchor != "" {
		if out.Anchor, err = c.renewAnchor(r.Anchor, previous, compared, out, opts.Streams); err != nil {
			return out, err
		}
	}
	if !out.OK {
		return out, &verify.FailedError{Faults: len(rep.Faults), Drift: len(out.Drift)}
	}
	return out, nil
}

// verifyStreams are the streams a request names: a session's are its session, work, answer
// and background-task streams; none is the whole log. (The lease streams of its turns are
// walked with the whole log: they say who drove a turn, not what it did.)
func verifyStreams(r VerifyRequest) []string {
	switch {
	case r.Session != "":
		return []string{commands.SessionStream(r.Session), commands.WorkStream(r.Session), commands.WorkSnapshotStream(r.Session),
			commands.InboxStream(r.Session), commands.BackgroundStream(r.Session)}
	case r.Stream != "":
		return []string{r.Stream}
	}
	return nil
}

// requireEvents refuses a session or stream with nothing to verify: a typo would otherwise
// verify an empty chain and say "verified".
func requireEvents(r VerifyRequest, rep verify.Report) error {
	if rep.Events > 0 || len(rep.Faults) > 0 {
		return nil
	}
	switch {
	case r.Stream != "":
		return &UsageError{fmt.Sprintf("stream %q has no events; list streams with `zuno events read`", r.Stream)}
	case r.Session != "":
		return &UsageError{fmt.Sprintf("session %q has no events; list sessions with `zuno session list`", r.Session)}
	}
	return nil
}

// normalise makes the lists empty rather than absent and sets the verdict.
func (out *VerifyReport) normalise() {
	if out.Faults == nil {
		out.Faults = []events.ChainFault{}
	}
	if out.Drift == nil {
		out.Drift = []projections.Drift{}
	}
	out.OK = len(out.Faults) == 0 && len(out.Drift) == 0
}

// renewAnchor records the verified heads (with the previous anchor's heads of the streams not
// walked) when everything verified, and leaves the file as it was otherwise.
func (c *Commands) renewAnchor(path string, previous []events.StreamHead, compared bool, out VerifyReport, walked []string) (*AnchorReport, error) {
	a := &AnchorReport{Path: path, Compared: compared, Signed: c.ports.Anchors.Signed(), Streams: len(out.Heads)}
	if !out.OK {
		return a, nil
	}
	heads := verify.MergeHeads(previous, out.Heads, walked)
	if err := c.ports.Anchors.Write(path, heads, time.Now()); err != nil {
		return a, fmt.Errorf("write the anchor %s: %w", path, err)
	}
	a.Written, a.Streams = true, len(heads)
	return a, nil
}
