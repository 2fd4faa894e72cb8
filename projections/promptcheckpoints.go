package projections

import (
	"context"
	"database/sql"
	"errors"

	"github.com/zuno-run/zuno/events"
)

// PromptCheckpoints is the "prompt_checkpoint" index (docs/storage.md, "`debug prompt` from a
// checkpoint"): where in a session's stream `zuno debug prompt --step N` starts reading. One
// row per receipt that records a header (kind header: its sections and tools, and the blobs
// they need that the session had not recorded) and per receipt that records a checkpoint
// (kind resume: docs/formats/receipts.md §13), with the step of the request that used it and
// the header receipt its header chain ends at. It holds positions and ids, no digest and no
// text: what a checkpoint stands for is in its receipt, in the log, and `zuno verify --wire`
// checks it there. Compactions have a row too (kind boundary): a step read from a checkpoint
// still names the compaction its conversation starts from.
type PromptCheckpoints struct{}

func (PromptCheckpoints) Name() string     { return "prompt_checkpoint" }
func (PromptCheckpoints) Tables() []string { return []string{"prompt_checkpoint"} }

// Checkpoint kinds.
const (
	CheckpointHeader = "header"
	CheckpointResume = "resume"
	// CheckpointBoundary is a compaction (its event id in receipt_id).
	CheckpointBoundary = "boundary"
)

func (PromptCheckpoints) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	switch e := p.(type) {
	case events.PromptAssembled:
		return promptCheckpoint(ctx, tx, ev, e)
	case events.TranscriptCompacted:
		// A step after a compaction names its boundary (docs/compaction.md): a reader from a
		// checkpoint finds the latest one before it here, its event id as the row's id.
		return tx.Exec(ctx, `INSERT INTO prompt_checkpoint (session_id, receipt_id, kind, revision, position, step, header_id, header_revision)
			VALUES (?, ?, ?, ?, ?, ?, NULL, NULL) ON CONFLICT (session_id, receipt_id) DO NOTHING`,
			e.SessionID, ev.ID, CheckpointBoundary, int64(ev.StreamRevision), int64(ev.Position), e.Step)
	case events.ProviderRequest:
		// The request a checkpoint was assembled for names it: its step is the one debug
		// prompt asks for (a retry is the same step).
		if e.Status != events.RequestStarted || e.Attempt > 1 || e.PromptReceiptID == "" {
			return nil
		}
		return tx.Exec(ctx, `UPDATE prompt_checkpoint SET step = ? WHERE session_id = ? AND receipt_id = ?`,
			e.Step, e.SessionID, e.PromptReceiptID)
	}
	return nil
}

func promptCheckpoint(ctx context.Context, tx *Tx, ev events.Recorded, e events.PromptAssembled) error {
	insert := func(kind string, headerID, headerRevision any) error {
		return tx.Exec(ctx, `INSERT INTO prompt_checkpoint (session_id, receipt_id, kind, revision, position, step, header_id, header_revision)
			VALUES (?, ?, ?, ?, ?, NULL, ?, ?) ON CONFLICT (session_id, receipt_id) DO NOTHING`,
			e.SessionID, e.ReceiptID, kind, int64(ev.StreamRevision), int64(ev.Position), headerID, headerRevision)
	}
	if e.HeaderBase == nil && len(e.Sections)+len(e.Tools) > 0 {
		if e.Resume == nil {
			return insert(CheckpointHeader, nil, nil)
		}
		// A checkpoint that records its own header (a turn's first step): its header is its own.
		return insert(CheckpointResume, e.ReceiptID, int64(ev.StreamRevision))
	}
	if e.Resume == nil {
		return nil
	}
	// The header a run's receipts leave out is the one its latest header receipt recorded: each
	// names the receipt before it (docs/formats/receipts.md §6.1). debug prompt checks the
	// header digest, so a wrong guess costs a read from the start, not a wrong answer.
	var id string
	err := tx.get(ctx, &id, `SELECT receipt_id FROM prompt_checkpoint
		WHERE session_id = ? AND (kind = 'header' OR header_id = receipt_id) AND revision < ? ORDER BY revision DESC LIMIT 1`,
		e.SessionID, int64(ev.StreamRevision))
	if errors.Is(err, sql.ErrNoRows) {
		return nil // no header in this session's own stream (a fork's): nothing to start from
	}
	if err != nil {
		return err
	}
	var rev int64
	if err := tx.get(ctx, &rev, `SELECT revision FROM prompt_checkpoint WHERE session_id = ? AND receipt_id = ?`, e.SessionID, id); err != nil {
		return err
	}
	return insert(CheckpointResume, id, rev)
}

// CheckpointBeforeQuery finds a session's latest checkpoint used by a step before the one
// asked for (its parameters: session id, step); CheckpointLatestQuery its latest one.
const (
	CheckpointBeforeQuery = `SELECT receipt_id, revision, step, header_id, header_revision FROM prompt_checkpoint
		WHERE session_id = ? AND kind = 'resume' AND step IS NOT NULL AND step < ? ORDER BY step DESC LIMIT 1`
	CheckpointLatestQuery = `SELECT receipt_id, revision, step, header_id, header_revision FROM prompt_checkpoint
		WHERE session_id = ? AND kind = 'resume' AND step IS NOT NULL ORDER BY step DESC LIMIT 1`
	// BoundaryBeforeQuery finds the revision of a session's latest compaction before a revision.
	BoundaryBeforeQuery = `SELECT revision FROM prompt_checkpoint
		WHERE session_id = ? AND kind = 'boundary' AND revision < ? ORDER BY revision DESC LIMIT 1`
	// HeaderReceiptsQuery lists the receipts that record a header before a revision, latest
	// first: where a header's blobs the session had already recorded are.
	HeaderReceiptsQuery = `SELECT revision FROM prompt_checkpoint
		WHERE session_id = ? AND (kind = 'header' OR header_id = receipt_id) AND revision < ? ORDER BY revision DESC`
)
