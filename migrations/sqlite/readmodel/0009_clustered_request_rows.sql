-- A session's provider requests are read in step order (docs/turns.md) and its prompt receipts
-- in log order, so each table kept an index on (session_id, step) or (session_id, position)
-- beside the one on its id: two more copies of the session id, the order and the row's id for
-- every step (issue 13, docs/storage.md "Bytes per step"). Each table is now stored in that
-- order (WITHOUT ROWID, its primary key the session, the order and, for a retried step's
-- requests, the id), so the rows of one session are one range of the table itself. No index
-- by id is left: the projectors write and find rows by their keys (a receipt's header base is
-- the session's receipt before it), and a query by id alone reads the table. The rows a
-- database holds are derived again from the log at the next catch-up, as a rebuild would.
DROP VIEW prompt_receipt;
DROP TABLE prompt_receipt_row;
DROP TABLE provider_request;
DELETE FROM projection_checkpoint WHERE projector IN ('prompt_receipt', 'provider_request');
DELETE FROM prompt_receipt_header;

-- One row per provider request, at its latest status (started, completed, failed).
CREATE TABLE IF NOT EXISTS provider_request (
    id                      TEXT NOT NULL,
    session_id              TEXT NOT NULL,
    turn_id                 TEXT NOT NULL,
    step                    INTEGER NOT NULL,
    status                  TEXT NOT NULL,
    prompt_receipt_id       TEXT,
    provider                TEXT NOT NULL,
    model                   TEXT NOT NULL,
    finish_reason           TEXT,
    input_tokens            INTEGER,
    output_tokens           INTEGER,
    error_code              TEXT,
    step_limit_finalization INTEGER NOT NULL DEFAULT 0,
    duration_ms             INTEGER,
    time_created            TEXT NOT NULL,
    time_updated            TEXT NOT NULL,
    PRIMARY KEY (session_id, step, id)
) WITHOUT ROWID;

-- One row per assembled prompt: the receipt's metadata and digests, and its header.
CREATE TABLE IF NOT EXISTS prompt_receipt_row (
    id                     TEXT NOT NULL,
    session_id             TEXT NOT NULL,
    event_id               TEXT NOT NULL,
    position               INTEGER NOT NULL,
    model                  TEXT NOT NULL,
    assembly_digest        TEXT NOT NULL,
    actual_digest          TEXT NOT NULL,
    estimated_input_tokens INTEGER NOT NULL,
    context_window         INTEGER NOT NULL,
    header_id              TEXT NOT NULL,
    time_created           TEXT NOT NULL,
    PRIMARY KEY (session_id, position)
) WITHOUT ROWID;

CREATE VIEW prompt_receipt AS
SELECT r.id, r.session_id, r.event_id, r.position, r.model, r.assembly_digest, r.actual_digest,
    r.estimated_input_tokens, r.context_window, h.section_count, h.sections, h.tool_names, r.time_created
FROM prompt_receipt_row r JOIN prompt_receipt_header h ON h.id = r.header_id;
