-- The event log. position is assigned as max+1 while the appending transaction holds an
-- advisory lock that is released only after commit, so a reader can never see position N+1
-- before N is visible (no skipped events under concurrent writers).
CREATE TABLE IF NOT EXISTS event_log (
    position        BIGINT PRIMARY KEY,
    event_id        UUID   NOT NULL UNIQUE,
    stream          TEXT   NOT NULL,
    stream_revision BIGINT NOT NULL,
    type            TEXT   NOT NULL,
    data            JSON   NOT NULL, -- JSON, not JSONB: the exact bytes appended are kept
    metadata        JSON   NOT NULL,
    UNIQUE (stream, stream_revision)
);
