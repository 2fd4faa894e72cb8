-- Delegated jobs and the parent inbox (docs/readmodels.md): agent_job, written by the job
-- ledger's events (stream jobs-<parentSessionId>), and inbox, the nextStep reports a parent
-- receives. 0002 created agent_job before any event produced jobs, with the child session in
-- session_id and no contract, error or delivery flag; no projector ever wrote it, so it is
-- created again with its columns and both projectors derive their rows from the log at the
-- next catch-up, as a rebuild would.
DROP TABLE IF EXISTS agent_job;
DELETE FROM projection_checkpoint WHERE projector IN ('agent_job', 'inbox');

-- One row per job a parent session delegated with the task tool, as it is after the job's
-- last event. job.admitted.1 creates it (status queued, the contract, the task call); every
-- job event sets the job's state columns from the state it carries (JobState) and
-- time_updated; job.settled.1 sets result and error; job.reconciled.1 sets error and result
-- (the reconciliation's report as the host makes it: the reconciled status, finalText and
-- error, with the work context and usage of the settlement's report, which a quiet job's log
-- does not record); job.report.admitted.1 sets result to the report it delivers (the
-- settlement's own, or a reconciliation's replacement). ORDER BY time_created, id is
-- admission order.
CREATE TABLE IF NOT EXISTS agent_job (
    -- The job id (job_…).
    id                TEXT PRIMARY KEY,
    -- The session whose task call asked for the job.
    parent_session_id TEXT NOT NULL,
    -- The child session that runs the job: a new one, or an earlier child continued by task_id. Its stream begins with its first turn, so a queued job's child has no session row yet.
    child_session_id  TEXT NOT NULL,
    -- The child's agent (the contract's agent).
    agent             TEXT NOT NULL,
    -- queued, running, completed, failed, cancelled or uncertain.
    status            TEXT NOT NULL,
    -- 1 for a background task, 0 for a foreground one (an attached, quiet job).
    background        INTEGER NOT NULL,
    -- nextStep (the report goes to the parent's inbox) or quiet (read with the job tool).
    report_delivery   TEXT NOT NULL,
    -- The parent's inbox row (inbox.input_id) of the job's nextStep report, once admitted; NULL before, and for quiet jobs.
    report_input_id   TEXT,
    -- The job's TaskReportMetadata (JSON, text on both databases) once settled or reconciled; NULL before.
    result            TEXT,
    -- Why the job failed, was cancelled or is uncertain; NULL for a completed or unsettled job.
    error             TEXT,
    -- The stable key of agent + contract under which a parent's duplicate task is refused.
    logical_key       TEXT NOT NULL,
    -- The DelegationContract as admitted (JSON).
    contract          TEXT NOT NULL,
    -- The parent's turn whose task call asked for the job.
    parent_turn_id    TEXT NOT NULL,
    -- The task call (its id in the parent's transcript, part.id).
    tool_call_id      TEXT NOT NULL,
    time_created      TEXT NOT NULL,
    time_updated      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS agent_job_parent ON agent_job (parent_session_id, time_created, id);

-- One row per report a parent session received in its inbox: job.report.admitted.1 creates it
-- queued; the parent's user message that carries it (session.user_message.appended.1 with this
-- inputId), or job.report.consumed.1, whichever comes first, makes it consumed. A replacement
-- report is a row of its own naming the one it replaces, which stays as it was. The seeds'
-- delivery lanes between the two (steering, promoted) are no event of the log, so no status here.
CREATE TABLE IF NOT EXISTS inbox (
    -- The input's id, named by the job's report_input_id.
    input_id      TEXT NOT NULL,
    -- The parent session whose inbox it is.
    session_id    TEXT NOT NULL,
    -- The job whose report it is (agent_job.id).
    job_id        TEXT NOT NULL,
    -- queued until the parent's transcript holds the report, then consumed.
    status        TEXT NOT NULL,
    -- The TaskReportMetadata the input delivers (JSON).
    report        TEXT NOT NULL,
    -- The input of the report this one replaces (a reconciliation's); NULL otherwise.
    replaces      TEXT,
    -- The parent's user message that carries the report as its taskReport, once consumed.
    message_id    TEXT,
    time_created  TEXT NOT NULL,
    -- When the report was consumed; NULL while queued.
    time_consumed TEXT,
    PRIMARY KEY (session_id, input_id)
);

-- zuno db's reader role (0005) may read both: agent_job again, since dropping it dropped the
-- grant.
DO $$
DECLARE
    reader text := 'zuno_reader_' || left(md5(current_database()), 16);
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader) THEN
        EXECUTE format('GRANT SELECT ON agent_job, inbox TO %I', reader);
    END IF;
END
$$;
