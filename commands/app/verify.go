package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/verify"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/anchoring"
	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/projections"
)

// Anchors reads and writes anchor files: the stream heads kept outside the database, signed
// when a key is configured, each numbered in a chain (docs/storage.md, "Anchors").
type Anchors interface {
	// Read returns the file; ok is false when there is none.
	Read(path string) (f AnchorFile, ok bool, err error)
	// Seal is the anchor of heads, the counter-th of its chain after previous, with its
	// digest: fixed before anything is written, so the log can record it first.
	Seal(heads []events.StreamHead, chain string, counter uint64, previous string, now time.Time) AnchorFile
	// Write records a sealed anchor in the file.
	Write(path string, f AnchorFile) error
	// Signs says whether a private key is configured (Write signs); Keyed whether any key is
	// (a public key alone checks and never writes).
	Signs() bool
	Keyed() bool
}

// AnchorFile is an anchor as the application sees it.
type AnchorFile struct {
	Chain     string
	Counter   uint64
	Previous  string
	Digest    string
	CreatedAt time.Time
	Heads     []events.StreamHead
}

// VerifyRequest is what `zuno verify` checks: one session's streams, one stream, or (both
// empty) the whole log and the read models; and, with Anchor, the heads an anchor recorded.
type VerifyRequest struct {
	Session, Stream string
	// Anchor is the anchor file as the user named it; AnchorResolved is the same file
	// absolute, its links resolved, for the workspace check (CheckAnchor).
	Anchor, AnchorResolved string
	// InitAnchor starts a new anchor chain where no anchor file is (recorded in the log).
	InitAnchor bool
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
	// Counter is the anchor's place in its chain: the one written, else the one compared.
	Counter uint64 `json:"counter"`
	Chain   string `json:"chain,omitempty"`
	// CheckOnly: only a public key is configured, so the anchor was checked and not written.
	CheckOnly bool `json:"checkOnly,omitempty"`
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
	case errors.As(err, &failed), anchorRefused(err):
		return verify.ResultFailed
	case errors.As(err, &usage), domain.CodeOf(err) == sandbox.CodeLogInWorkspace, ctx.Err() != nil:
		return ""
	}
	return verify.ResultError
}

// anchorRefused: the anchor file does not hold against the log or its key (deleted, older,
// replaced, ahead of the log, unsigned or wrongly signed): a failed verification, as an
// altered event is, not an error of the run.
func anchorRefused(err error) bool {
	switch domain.CodeOf(err) {
	case anchoring.CodeAnchorMissing, anchoring.CodeAnchorStale, anchoring.CodeAnchorReplaced, anchoring.CodeAnchorAhead,
		"anchor_unsigned", "anchor_signature_invalid":
		return true
	}
	return false
}

func (c *Commands) verify(ctx context.Context, r VerifyRequest) (VerifyReport, error) {
	opts := verify.Options{Progress: r.Progress, Streams: verifyStreams(r)}
	var anchor *anchorCheck
	if r.Anchor != "" {
		var err error
		if anchor, err = c.checkAnchor(ctx, r); err != nil {
			return VerifyReport{}, err
		}
		opts.Anchored = anchor.file.Heads
	}
	rep, err := verify.Chain(ctx, c.ports.Log, opts)
	var malformed *events.MalformedEventError
	switch {
	case errors.As(err, &malformed):
		// The walk cannot read past an event whose metadata does not decode: the report
		// names it, as it names any other fault.
		rep.Faults = append(rep.Faults, events.MalformedFault(malformed))
	case err != nil:
		return VerifyReport{}, err
	}
	if err := requireEvents(r, rep); err != nil {
		return VerifyReport{}, err
	}
	out := VerifyReport{Report: rep, Drift: []projections.Drift{}}
	if len(opts.Streams) == 0 && malformed == nil {
		out.Drift, err = c.ports.Drift(ctx)
		switch {
		case errors.As(err, &malformed):
			// The replay stops at an event whose data does not decode: a fault of the log,
			// reported, rather than an error that prints no report.
			out.Faults = append(out.Faults, events.MalformedFault(malformed))
		case err != nil:
			return VerifyReport{}, err
		}
	}
	out.normalise()
	if r.Anchor != "" {
		if out.Anchor, err = c.renewAnchor(ctx, r, anchor, out, opts.Streams); err != nil {
			return out, err
		}
	}
	if !out.OK {
		return out, &verify.FailedError{Faults: len(out.Faults), Drift: len(out.Drift)}
	}
	return out, nil
}

// verifyStreams are the streams a request names: a session's are its session, work, answer,
// background-task and MCP streams; none is the whole log. (The lease streams of its turns are
// walked with the whole log: they say who drove a turn, not what it did.)
func verifyStreams(r VerifyRequest) []string {
	switch {
	case r.Session != "":
		return []string{commands.SessionStream(r.Session), commands.WorkStream(r.Session), commands.WorkSnapshotStream(r.Session),
			commands.InboxStream(r.Session), commands.BackgroundStream(r.Session), commands.MCPStream(r.Session)}
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

// anchorCheck is an anchor file and the log's record of anchoring, found consistent.
type anchorCheck struct {
	file   AnchorFile
	exists bool
	log    anchoring.State
}

// checkAnchor reads the anchor file and holds it to the log's own record of anchoring: a
// file deleted, replaced by an older copy or by another, or a log that lost its latest
// anchorings, is refused before anything is walked.
func (c *Commands) checkAnchor(ctx context.Context, r VerifyRequest) (*anchorCheck, error) {
	f, ok, err := c.ports.Anchors.Read(r.Anchor)
	if err != nil {
		return nil, err
	}
	if err := c.CheckAnchor(ctx, r.AnchorResolved); err != nil {
		return nil, err
	}
	var s anchoring.State
	if _, err := commands.Load(ctx, c.ports.Log, c.ports.Driver.Registry, commands.AnchorStream, 0,
		func(_ events.Recorded, p events.Payload) error { return s.Evolve(p) }); err != nil {
		return nil, err
	}
	file := anchoring.File{Exists: ok, Path: r.Anchor, Chain: f.Chain, Counter: f.Counter, Digest: f.Digest}
	if err := anchoring.Check(s, file, r.InitAnchor, c.ports.Anchors.Keyed()); err != nil {
		return nil, err
	}
	return &anchorCheck{file: f, exists: ok, log: s}, nil
}

// renewAnchor records the verified heads (with the previous anchor's heads of the streams not
// walked) as the next anchor of the chain when everything verified, and leaves the file as it
// was otherwise, or when only a public key is configured. The log records the anchor before
// the file is written: a crash in between leaves the file one anchor behind the log, which
// the next run reports as anchor_stale rather than trusting.
func (c *Commands) renewAnchor(ctx context.Context, r VerifyRequest, a *anchorCheck, out VerifyReport, walked []string) (*AnchorReport, error) {
	anchors := c.ports.Anchors
	rep := &AnchorReport{Path: r.Anchor, Compared: a.exists, Signed: anchors.Signs(), Streams: len(out.Heads), Counter: a.file.Counter, Chain: a.file.Chain}
	if !out.OK {
		return rep, nil
	}
	if anchors.Keyed() && !anchors.Signs() {
		rep.CheckOnly = true
		return rep, nil
	}
	heads := verify.MergeHeads(a.file.Heads, out.Heads, walked)
	chain, counter, previous := anchoring.Next(a.log, anchoring.File{Exists: a.exists, Chain: a.file.Chain, Digest: a.file.Digest},
		r.InitAnchor, NewID("anc_"))
	next := anchors.Seal(heads, chain, counter, previous, time.Now())
	record := anchoring.Record{LogAnchored: events.LogAnchored{Chain: chain, Counter: counter, Digest: next.Digest, Previous: previous,
		Init: r.InitAnchor, Streams: len(heads), Signed: anchors.Signs()}}
	meta := commands.Meta{CommandID: "anchor/" + next.Digest, Actor: "user"}
	if _, err := c.send(ctx, &commands.RecordAnchor{Meta: meta, Record: record}); err != nil {
		return rep, fmt.Errorf("record the anchor in the log: %w", err)
	}
	if err := anchors.Write(r.Anchor, next); err != nil {
		return rep, fmt.Errorf("write the anchor %s (the log already records it as anchor %d: restore it from this run's output or start again with --init): %w", r.Anchor, counter, err)
	}
	rep.Written, rep.Streams, rep.Counter, rep.Chain = true, len(heads), counter, chain
	return rep, nil
}
