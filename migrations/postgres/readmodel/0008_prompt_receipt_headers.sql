-- A prompt receipt's sections and tool names are the same at almost every step of a run: as
-- columns of every receipt's row they were 4 KB of each step's 16 KB on disk (issue 13,
-- docs/storage.md "Bytes per step"). They are kept once per header, in prompt_receipt_header,
-- which each receipt's row in prompt_receipt_row names; prompt_receipt is the view joining the
-- two, with the columns and values it always had, so forensic SQL runs unchanged.

-- One row per distinct header: its id is the id of the receipt that recorded it whole.
CREATE TABLE IF NOT EXISTS prompt_receipt_header (
    id            TEXT PRIMARY KEY,
    section_count INTEGER NOT NULL,
    sections      TEXT NOT NULL,
    tool_names    TEXT NOT NULL
);

-- One row per assembled prompt: the receipt's metadata and digests, and its header.
CREATE TABLE IF NOT EXISTS prompt_receipt_row (
    id                     TEXT PRIMARY KEY,
    session_id             TEXT NOT NULL,
    event_id               TEXT NOT NULL,
    position               BIGINT NOT NULL,
    model                  TEXT NOT NULL,
    assembly_digest        TEXT NOT NULL,
    actual_digest          TEXT NOT NULL,
    estimated_input_tokens BIGINT NOT NULL,
    context_window         BIGINT NOT NULL,
    header_id              TEXT NOT NULL,
    time_created           TEXT NOT NULL
);

-- The rows a database already holds are not converted: which receipts share a header is in the
-- log (headerBase), not in the old rows, so the projector derives them again from the log at
-- the next catch-up, as a rebuild would, and the read model equals a rebuilt one.
DROP TABLE prompt_receipt;
DELETE FROM projection_checkpoint WHERE projector = 'prompt_receipt';
CREATE INDEX IF NOT EXISTS prompt_receipt_session ON prompt_receipt_row (session_id, position);

CREATE VIEW prompt_receipt AS
SELECT r.id, r.session_id, r.event_id, r.position, r.model, r.assembly_digest, r.actual_digest,
    r.estimated_input_tokens, r.context_window, h.section_count, h.sections, h.tool_names, r.time_created
FROM prompt_receipt_row r JOIN prompt_receipt_header h ON h.id = r.header_id;

-- zuno db's reader role (0005) may read them too.
DO $$
DECLARE
    reader text := 'zuno_reader_' || left(md5(current_database()), 16);
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader) THEN
        EXECUTE format('GRANT SELECT ON prompt_receipt, prompt_receipt_row, prompt_receipt_header TO %I', reader);
    END IF;
END
$$;
