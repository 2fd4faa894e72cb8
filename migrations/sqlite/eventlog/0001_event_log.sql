-- The event log. position is the global order: assigned by the single writer under SQLite's
-- write lock as max+1, so it is gap-free and commit-ordered. event_id is unique so idempotency
-- survives restarts without a cache.
CREATE TABLE IF NOT EXISTS event_log (
    position        INTEGER PRIMARY KEY,
    event_id        TEXT    NOT NULL UNIQUE,
    stream          TEXT    NOT NULL,
    stream_revision INTEGER NOT NULL,
    type            TEXT    NOT NULL,
    data            TEXT    NOT NULL,
    metadata        TEXT    NOT NULL,
    UNIQUE (stream, stream_revision)
);
