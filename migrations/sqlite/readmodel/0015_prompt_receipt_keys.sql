-- A prompt receipt's row repeated what its event says (model, digests, estimate, context
-- window, event id, time): about 0.3 KB of every step (issue 32, docs/storage.md "Bytes per
-- step"). prompt_receipt_key keeps what the event does not say: the session and the position
-- (the key, so a session's receipts are one range of it), the receipt's id and the id of the
-- receipt holding its header. Where the event log shares this database, prompt_receipt_row
-- becomes a view reading the rest from the event at that position (adapters/readmodel,
-- shared.go); elsewhere the table stays, and the projector writes both. The keys of the rows
-- already here are copied, so the view shows them.
CREATE TABLE IF NOT EXISTS prompt_receipt_key (
    session_id TEXT NOT NULL,
    position   INTEGER NOT NULL,
    id         TEXT NOT NULL,
    header_id  TEXT NOT NULL,
    PRIMARY KEY (session_id, position)
) WITHOUT ROWID;

INSERT INTO prompt_receipt_key (session_id, position, id, header_id)
SELECT session_id, position, id, header_id FROM prompt_receipt_row;
