-- Where `zuno debug prompt --step N` starts reading a session's stream (docs/storage.md,
-- "`debug prompt` from a checkpoint"): one row per prompt receipt that records a header
-- (kind header) or a checkpoint (kind resume, docs/formats/receipts.md §13), and per
-- compaction (kind boundary, its event id as receipt_id). Positions and ids only: what a
-- checkpoint stands for is in its receipt, in the log.
CREATE TABLE IF NOT EXISTS prompt_checkpoint (
    session_id      TEXT NOT NULL,
    -- The receipt (session.prompt.assembled.1's receiptId); a boundary's event id.
    receipt_id      TEXT NOT NULL,
    -- header, resume or boundary.
    kind            TEXT NOT NULL,
    -- The receipt event's revision in the session's stream, and its log position.
    revision        INTEGER NOT NULL,
    position        INTEGER NOT NULL,
    -- resume: the step of the provider request that used the receipt (NULL until it starts);
    -- boundary: the compaction's step.
    step            INTEGER,
    -- resume: the receipt recording the header its header chain ends at, and its revision.
    header_id       TEXT,
    header_revision INTEGER,
    PRIMARY KEY (session_id, receipt_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS prompt_checkpoint_step ON prompt_checkpoint (session_id, step);
