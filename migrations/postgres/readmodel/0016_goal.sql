-- The Goal of a root session (docs/goals.md), written by the goal.* events of its work stream
-- (work-<rootSessionId>). Each event carries the whole Goal and its resulting revision, so a
-- row is written from the event alone.

-- One row per Goal of a root session, as it is after its last event: goal.created.1 creates
-- it; goal.updated.1, goal.input_requested.1, goal.input_answered.1, goal.resumed.1 and
-- goal.completed.1 set its columns; goal.progress_observed.1 sets the owner and the last
-- progress observation and leaves the revision. A completed Goal stays; the next one of the
-- session is a row of its own (goal-2, ...).
CREATE TABLE IF NOT EXISTS goal (
    -- The root session whose Goal it is.
    session_id           TEXT NOT NULL,
    -- The Goal's id within the session (goal-1, goal-2, ...).
    goal_id              TEXT NOT NULL,
    -- The goal revision goal_get reports (goal_update's expected_revision).
    revision             INTEGER NOT NULL,
    objective            TEXT NOT NULL,
    -- active, paused or complete.
    status               TEXT NOT NULL,
    -- The turn (cycle) that owns the Goal and continues it on its own; NULL when none does.
    owner_turn_id        TEXT,
    -- The acceptance criteria (JSON array of {id, text, needsEvidence, evidence}); evidence is the receipt id that met a criterion at completion.
    criteria             TEXT NOT NULL,
    -- The open input request (goal_request_input) while the Goal waits for an answer; NULL otherwise.
    waiting_request_id   TEXT,
    waiting_question     TEXT,
    -- The auto-continuation's last observation: the work state's fingerprint, how many consecutive observations had it, and what the driver did (continue, no_progress, waiting_background); NULL before any.
    progress_fingerprint TEXT,
    progress_repeats     INTEGER,
    progress_outcome     TEXT,
    -- The job ledger revision the completion barrier read; NULL until completed.
    jobs_revision        INTEGER,
    time_created         TEXT NOT NULL,
    time_updated         TEXT NOT NULL,
    -- When the completion barrier admitted the completion; NULL before.
    time_completed       TEXT,
    PRIMARY KEY (session_id, goal_id)
);

-- zuno db's reader role (0005) may read it.
DO $$
DECLARE
    reader text := 'zuno_reader_' || left(md5(current_database()), 16);
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader) THEN
        EXECUTE format('GRANT SELECT ON goal TO %I', reader);
    END IF;
END
$$;
