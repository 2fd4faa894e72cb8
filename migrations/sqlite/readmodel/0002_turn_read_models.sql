-- Read models of the agent turn: the transcript as parts, prompt receipts, provider requests,
-- and delegated jobs. Derived from the event log like the rest; JSON columns are TEXT, read
-- with json_extract.

-- One row per transcript part: a user message ("user:<messageId>"), an assistant text
-- ("text:<requestId>") or a tool call ("<callId>"). data is JSON with at least "type", and
-- "tool" for tool parts. position and ordinal are the log position of the event that created
-- the part and the part's index within that event: ORDER BY position, ordinal is transcript
-- order.
CREATE TABLE IF NOT EXISTS part (
    id           TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    turn_id      TEXT,
    request_id   TEXT,
    type         TEXT NOT NULL,
    data         TEXT NOT NULL,
    position     INTEGER NOT NULL,
    ordinal      INTEGER NOT NULL,
    time_created TEXT NOT NULL,
    time_updated TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
);
CREATE INDEX IF NOT EXISTS part_session_type ON part (session_id, type);
CREATE INDEX IF NOT EXISTS part_session_order ON part (session_id, position, ordinal);

-- One row per assembled prompt: the receipt's metadata and digests. Section contents stay in
-- the event log (session.prompt.assembled.1, its blobs).
CREATE TABLE IF NOT EXISTS prompt_receipt (
    id                     TEXT PRIMARY KEY,
    session_id             TEXT NOT NULL,
    event_id               TEXT NOT NULL,
    position               INTEGER NOT NULL,
    model                  TEXT NOT NULL,
    assembly_digest        TEXT NOT NULL,
    actual_digest          TEXT NOT NULL,
    estimated_input_tokens INTEGER NOT NULL,
    context_window         INTEGER NOT NULL,
    section_count          INTEGER NOT NULL,
    sections               TEXT NOT NULL,
    tool_names             TEXT NOT NULL,
    time_created           TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS prompt_receipt_session ON prompt_receipt (session_id, position);

-- One row per provider request, at its latest status (started, completed, failed).
CREATE TABLE IF NOT EXISTS provider_request (
    id                      TEXT PRIMARY KEY,
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
    time_updated            TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS provider_request_session ON provider_request (session_id, step);

-- Delegated jobs of a parent session. No events produce jobs yet; the table exists so the
-- forensic SQL that reads it runs (and finds none).
CREATE TABLE IF NOT EXISTS agent_job (
    id                TEXT PRIMARY KEY,
    parent_session_id TEXT NOT NULL,
    session_id        TEXT,
    agent             TEXT NOT NULL,
    status            TEXT NOT NULL,
    report_delivery   TEXT,
    report_input_id   TEXT,
    result            TEXT,
    logical_key       TEXT,
    time_created      TEXT NOT NULL,
    time_updated      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS agent_job_parent ON agent_job (parent_session_id, time_created, id);
