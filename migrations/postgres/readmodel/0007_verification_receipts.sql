-- Verification receipts: one row per shell call that settled with one
-- (session.verification.receipt.1). The receipt itself stays in the event log, which
-- `zuno debug receipt` reads; the row finds it by id and answers forensic SQL (which checks
-- were authoritative, which were derived and why).
CREATE TABLE IF NOT EXISTS verification_receipt (
    -- rcp_ followed by 32 hex digits, derived from the session and the call.
    id           TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL,
    turn_id      TEXT,
    call_id      TEXT NOT NULL,
    event_id     TEXT NOT NULL,
    command      TEXT NOT NULL,
    interpreter  TEXT NOT NULL,
    -- pipefail, all or last.
    policy       TEXT NOT NULL,
    -- passed, failed, not_started or unknown.
    verdict      TEXT NOT NULL,
    -- NULL when the command has no exit code of its own.
    exit_code    INTEGER,
    -- every_command, last_statement, last_stage or none.
    coverage     TEXT NOT NULL,
    -- authoritative (evidence), derived or none.
    authority    TEXT NOT NULL,
    -- The limitations' construct names, a JSON array.
    constructs   TEXT NOT NULL,
    position     BIGINT NOT NULL,
    time_created TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS verification_receipt_session ON verification_receipt (session_id, position);

-- zuno db's reader role (0005) may read it too.
DO $$
DECLARE
    reader text := 'zuno_reader_' || left(md5(current_database()), 16);
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader) THEN
        EXECUTE format('GRANT SELECT ON verification_receipt TO %I', reader);
    END IF;
END
$$;
