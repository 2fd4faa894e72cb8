-- The status of a session's latest turn, so zuno session list can say which sessions finished,
-- failed, were interrupted or are still open: idle before its first turn, open while a turn
-- has not finished (running, or cut short and not yet recovered), then the finish reason.
ALTER TABLE session ADD COLUMN status TEXT NOT NULL DEFAULT 'idle';
