-- The task context of each root session (docs/task-context.md): one row per task, written by
-- the task context's events (stream task-context-<rootSessionId>). task_context.started.1
-- creates the row (and, for a replace, marks the replaced task's row replaced);
-- task_context.updated.1 sets every column from the task it carries. The current task of a
-- session is its row with status active or completed (at most one).
CREATE TABLE IF NOT EXISTS task_context (
    -- The root session whose task context this is.
    session_id         TEXT NOT NULL,
    -- The host's task id (task-1, task-2, ...), one per start or replace.
    task_id            TEXT NOT NULL,
    -- The task context's revision after the task's last change.
    revision           INTEGER NOT NULL,
    -- What the user asked for.
    objective          TEXT NOT NULL,
    -- delivery or inspection.
    task_kind          TEXT NOT NULL,
    -- active, completed, or replaced (a later replace started another task).
    status             TEXT NOT NULL,
    -- The durable user messages that authorise it (JSON array of {messageId, summary}).
    sources            TEXT NOT NULL,
    -- What is understood as authorised (JSON array of strings); it grants no permission.
    authorized_actions TEXT NOT NULL,
    -- What must not be done (JSON array of strings).
    constraints        TEXT NOT NULL,
    -- user, agent or parent; NULL when not set.
    decision_owner     TEXT,
    -- The delivery and safety checks (JSON array of {id, kind, title, status, evidence}).
    checks             TEXT NOT NULL,
    time_created       TEXT NOT NULL,
    time_updated       TEXT NOT NULL,
    PRIMARY KEY (session_id, task_id)
);

-- zuno db's reader role (0005) may read it.
DO $$
DECLARE
    reader text := 'zuno_reader_' || left(md5(current_database()), 16);
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader) THEN
        EXECUTE format('GRANT SELECT ON task_context TO %I', reader);
    END IF;
END
$$;
