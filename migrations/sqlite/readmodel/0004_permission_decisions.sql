-- The permission gate's decision on each tool call it judged: who allowed or refused the call,
-- under which rule and layer, and the answer to its ask. How a call was confined is on its part
-- row (json_extract(data, '$.sandbox.resolutionKind')); join on (session_id, call_id) = (session_id, id).

-- One row per judged call. A call's ask creates the row with action 'ask' while the turn waits;
-- the call's started or blocked event, which carries the decision, fills the rest (a call
-- decided without an ask gets its row then). An answer that arrived after its turn was gone
-- sets reply, source and time_answered and leaves action 'ask' and time_decided NULL: the
-- answer is recorded, the call never ran. position is the log position of the event that
-- created the row: ORDER BY position is the order the calls were judged in.
CREATE TABLE IF NOT EXISTS permission_decision (
    session_id     TEXT NOT NULL,
    call_id        TEXT NOT NULL,
    turn_id        TEXT NOT NULL,
    request_id     TEXT NOT NULL,
    tool           TEXT NOT NULL,
    -- The permission key evaluated: edit for write and apply_patch, external_directory for a path outside the workspace.
    permission_key TEXT NOT NULL,
    -- What the key was evaluated on: a path, a command, "dir/*".
    resource       TEXT,
    -- What the matched rule (or the default) said: allow, deny or ask. NULL until decided.
    rule_action    TEXT,
    -- The outcome: allow or deny; ask while the call waits for an answer (or never got one it could use).
    action         TEXT NOT NULL,
    -- The matched rule as written ("shell: git push*"); NULL when no rule matched.
    rule           TEXT,
    -- The configuration layer the rule came from.
    layer          TEXT,
    -- Who decided: rule, mode, risk, standing, user or no_terminal. NULL while pending.
    source         TEXT,
    -- The answer that admitted or refused the call: once, always or reject; once for a standing approval.
    reply          TEXT,
    -- The ask the call waited on, or (standing) the ask whose always answer approved it.
    ask_id         TEXT,
    -- The pattern an always answer to the ask approves for the rest of the session.
    always_pattern TEXT,
    -- The permission mode: standard, strict or allow_all.
    mode           TEXT NOT NULL,
    -- The denial as the model and the user read it.
    message        TEXT,
    time_created   TEXT NOT NULL,
    time_answered  TEXT,
    time_decided   TEXT,
    position       INTEGER NOT NULL,
    PRIMARY KEY (session_id, call_id)
);
CREATE INDEX IF NOT EXISTS permission_decision_session ON permission_decision (session_id, position);
CREATE INDEX IF NOT EXISTS permission_decision_source ON permission_decision (source, session_id);
-- An answer finds its ask by id.
CREATE INDEX IF NOT EXISTS permission_decision_ask ON permission_decision (session_id, ask_id);
