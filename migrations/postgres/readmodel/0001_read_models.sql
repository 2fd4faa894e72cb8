-- Read models: tables and columns that forensic SQL queries by name, so they keep their names.
-- All are derived from the event log and can be dropped and rebuilt at any time.
CREATE TABLE IF NOT EXISTS projection_checkpoint (
    projector  TEXT PRIMARY KEY,
    position   BIGINT NOT NULL,
    updated_at TEXT NOT NULL
);

-- Keyed by position, the log's order: rows are appended at the end of the table.
CREATE TABLE IF NOT EXISTS event (
    id           TEXT NOT NULL,
    position     BIGINT PRIMARY KEY,
    aggregate_id TEXT NOT NULL,
    stream       TEXT NOT NULL,
    revision     INTEGER NOT NULL,
    type         TEXT NOT NULL,
    data         JSONB NOT NULL,
    metadata     JSONB NOT NULL,
    time         TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS event_id ON event (id);
CREATE INDEX IF NOT EXISTS event_aggregate ON event (aggregate_id, type);

CREATE TABLE IF NOT EXISTS session (
    id                TEXT PRIMARY KEY,
    title             TEXT NOT NULL,
    agent             TEXT NOT NULL,
    parent_session_id TEXT,
    directory         TEXT,
    message_count     INTEGER NOT NULL DEFAULT 0,
    time_created      TEXT NOT NULL,
    time_updated      TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS work_plan (
    session_id     TEXT NOT NULL,
    plan_id        TEXT NOT NULL,
    revision       INTEGER NOT NULL,
    title          TEXT NOT NULL,
    status         TEXT NOT NULL,
    depth          INTEGER NOT NULL,
    parent_plan_id TEXT,
    steps          JSONB NOT NULL,
    time_created   TEXT NOT NULL,
    time_updated   TEXT NOT NULL,
    PRIMARY KEY (session_id, plan_id)
);

CREATE TABLE IF NOT EXISTS work_item (
    id           TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    title        TEXT NOT NULL,
    status       TEXT NOT NULL,
    owner        TEXT,
    dependencies JSONB NOT NULL,
    plan_step_id TEXT,
    time_created TEXT NOT NULL,
    time_updated TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
);

-- SQLite's json_extract(json, path) for forensic SQL written for SQLite, so that the same query
-- runs unchanged on both. Paths are '$', '$.a.b' and '$.a[0].b'. Scalars come back as text
-- (SQLite returns typed values), objects and arrays as JSON text.
CREATE OR REPLACE FUNCTION json_extract(doc jsonb, path text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN path = '$' THEN doc #>> '{}'
        ELSE doc #>> regexp_split_to_array(
            regexp_replace(regexp_replace(path, '^\$\.?', ''), '\[(\d+)\]', '.\1', 'g'), '\.')
    END
$$;
CREATE OR REPLACE FUNCTION json_extract(doc json, path text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT json_extract(doc::jsonb, path) $$;
CREATE OR REPLACE FUNCTION json_extract(doc text, path text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT json_extract(doc::jsonb, path) $$;
