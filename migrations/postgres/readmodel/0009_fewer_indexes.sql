-- Indexes no query needs cost bytes at every step (issue 13, docs/storage.md "Bytes per
-- step"). A session's parts and permission decisions are found through their primary keys,
-- which begin with session_id, so (session_id, type), (session_id, position, ordinal) and
-- (session_id, position) only spared sorting one session's rows; (source, session_id) served
-- no query of Zuno's.
DROP INDEX IF EXISTS part_session_type;
DROP INDEX IF EXISTS part_session_order;
DROP INDEX IF EXISTS permission_decision_session;
DROP INDEX IF EXISTS permission_decision_source;

-- An answer finds its ask by id (projections.Permissions). Only a call that asked has one, so
-- the index leaves out the others: most calls are decided by a rule and never ask.
DROP INDEX IF EXISTS permission_decision_ask;
CREATE INDEX IF NOT EXISTS permission_decision_ask ON permission_decision (session_id, ask_id) WHERE ask_id IS NOT NULL;
