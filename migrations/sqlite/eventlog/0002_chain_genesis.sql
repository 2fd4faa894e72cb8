-- The hash chain (docs/storage.md, "Hash chain") begins with this migration: every event
-- appended from now on carries metadata.hash. Events already stored are not rewritten; this
-- row records the last position written before the chain, so that `zuno verify` accepts
-- them unhashed and reports any later event without a hash.
CREATE TABLE IF NOT EXISTS event_chain_genesis (
    position INTEGER NOT NULL
);
INSERT INTO event_chain_genesis (position) SELECT COALESCE(MAX(position), 0) FROM event_log;
