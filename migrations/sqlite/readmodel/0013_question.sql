-- Durable questions (docs/questions.md): one row per request the question, question_async
-- and plan_exit tools published, as it is after its last event (stream jobs-<sessionId>, the
-- session's inbox). question.published.1 creates it (status pending, revision 1);
-- question.answered.1 merges the answered items into answers and sets status partial or
-- answered; question.deferred.1 sets deferred (a deferral answers nothing and closes nothing:
-- the status stays); question.voided.1 sets status voided and void_reason. Every event sets
-- revision and time_updated.
CREATE TABLE IF NOT EXISTS question (
    -- The request id (qst_…), derived from the session and the asking call.
    request_id   TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL,
    -- question (a clarification) or plan_exit (a closed approval request).
    kind         TEXT NOT NULL,
    -- wait (the Plan agent's question waits for the first response) or receipt (published, returned at once).
    mode         TEXT NOT NULL,
    -- The asking tool: question, question_async or plan_exit; the call, its turn and the agent.
    tool         TEXT NOT NULL,
    call_id      TEXT NOT NULL,
    turn_id      TEXT,
    agent        TEXT,
    title        TEXT,
    -- The items as published (JSON array of {id, question, options, custom}).
    items        TEXT NOT NULL,
    -- The answered items (JSON object: item id → {itemId, selected, text}); {} while none.
    answers      TEXT NOT NULL,
    -- pending, partial, answered or voided.
    status       TEXT NOT NULL,
    -- The request's revision: 1 when published, one more per answer, deferral or void.
    revision     INTEGER NOT NULL,
    -- The last deferral's reason (timeout or later); NULL when never deferred.
    deferred     TEXT,
    -- The stored deferral deadline of a waiting question and the countdown's start (RFC 3339); NULL otherwise.
    defer_at     TEXT,
    countdown_at TEXT,
    -- Why the request was voided (plan_changed, identity_changed, turn_interrupted); NULL otherwise.
    void_reason  TEXT,
    -- plan_exit's binding (JSON: planId, planRevision, agent, model, turnId); NULL for a question.
    plan_exit    TEXT,
    time_created TEXT NOT NULL,
    time_updated TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS question_session ON question (session_id, time_created, request_id);
