-- A tool part's data no longer repeats the call's permission decision (its permission_decision
-- row, joined on (session_id, call_id) = (session_id, id), holds it) nor its request id (the
-- part's request_id column): they were a fifth of every tool part (issue 13, docs/storage.md
-- "Bytes per step"). The rows a database holds are derived again from the log at the next
-- catch-up, as a rebuild would, so the read model equals a rebuilt one.
DELETE FROM part;
DELETE FROM projection_checkpoint WHERE projector = 'part';
