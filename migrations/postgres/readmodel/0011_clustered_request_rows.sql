-- A session's provider requests are read in step order (docs/turns.md) and its prompt receipts
-- in log order. Their primary keys are now the session and that order (and, for a retried
-- step's requests, the id), as in the embedded SQLite schema, where each table is stored in
-- that order and no other index is kept (issue 13, docs/storage.md "Bytes per step"); the
-- projectors write rows by these keys on both databases, so the indexes by session are the
-- keys, and no index by id is left: a query by id alone reads the table. The rows a database
-- holds are derived again from the log at the next catch-up, as a rebuild would.
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
    input_tokens            BIGINT,
    output_tokens           BIGINT,
    error_code              TEXT,
    step_limit_finalization INTEGER NOT NULL DEFAULT 0,
    duration_ms             BIGINT,
    time_created            TEXT NOT NULL,
    time_updated            TEXT NOT NULL,
    PRIMARY KEY (session_id, step, id)
);

-- One row per assembled prompt: the receipt's metadata and digests, and its header.
CREATE TABLE IF NOT EXISTS prompt_receipt_row (
    id                     TEXT NOT NULL,
    session_id             TEXT NOT NULL,
    event_id               TEXT NOT NULL,
    position               BIGINT NOT NULL,
    model                  TEXT NOT NULL,
    assembly_digest        TEXT NOT NULL,
    actual_digest          TEXT NOT NULL,
    estimated_input_tokens BIGINT NOT NULL,
    context_window         BIGINT NOT NULL,
    header_id              TEXT NOT NULL,
    time_created           TEXT NOT NULL,
    PRIMARY KEY (session_id, position)
);

CREATE VIEW prompt_receipt AS
SELECT r.id, r.session_id, r.event_id, r.position, r.model, r.assembly_digest, r.actual_digest,
    r.estimated_input_tokens, r.context_window, h.section_count, h.sections, h.tool_names, r.time_created
FROM prompt_receipt_row r JOIN prompt_receipt_header h ON h.id = r.header_id;

-- zuno db's reader role (0005) may read them.
DO $$
DECLARE
    reader text := 'zuno_reader_' || left(md5(current_database()), 16);
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader) THEN
        EXECUTE format('GRANT SELECT ON prompt_receipt, prompt_receipt_row, provider_request TO %I', reader);
    END IF;
END
$$;
