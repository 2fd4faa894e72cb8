-- Superseded by 0003, which takes a table lock instead of the advisory lock.
-- zuno_append writes a batch of appends in one statement, so an append costs one round trip
-- (its transaction commits when the statement ends). It holds the append advisory lock until
-- commit, so positions are commit-ordered (no reader can pass a position that commits later).
-- {{AppendLock}} is migrations.AppendLock, put in by the migration runner (migrations.Expand).
--
-- requests: [{"stream": s, "expect": "any"|"no_stream"|"exists"|"exact", "revision": n,
--             "events": [{"id": uuid, "type": t, "data": "<json text>", "metadata": "<json text>"}]}]
-- Each request is decided on its own, in order, seeing the ones before it:
--   known  some of its event ids are stored: nothing written; the caller compares them
--          (an exact retry returns the original result, anything else is a conflict);
--   wrong  the expected revision does not hold: nothing written; actual is the stream's
--          last revision (-1: no stream);
--   ok     written at first_position..last_position, the stream now at next_revision.
-- The revision rule is events.ExpectedRevision.Allows; the two must agree.
CREATE OR REPLACE FUNCTION zuno_append(requests json)
RETURNS TABLE (idx int, outcome text, actual bigint, first_position bigint, last_position bigint, next_revision bigint)
LANGUAGE plpgsql AS $$
DECLARE
    req json;
    last_pos bigint;
    cur bigint;
    n int;
    wrote boolean := false;
    allowed boolean;
    ids uuid[];
BEGIN
    PERFORM pg_advisory_xact_lock({{AppendLock}});
    SELECT COALESCE(MAX(position), 0) INTO last_pos FROM event_log;
    idx := -1;
    FOR req IN SELECT value FROM json_array_elements(requests) LOOP
        idx := idx + 1;
        actual := NULL; first_position := NULL; last_position := NULL; next_revision := NULL;
        -- = ANY(array) probes the unique index; IN (SELECT … FROM json…) was planned as a
        -- sequential scan of the whole log.
        SELECT array_agg((e->>'id')::uuid) INTO ids FROM json_array_elements(req->'events') e;
        IF EXISTS (SELECT 1 FROM event_log WHERE event_id = ANY(ids)) THEN
            outcome := 'known';
            RETURN NEXT;
            CONTINUE;
        END IF;
        SELECT COALESCE(MAX(stream_revision), -1) INTO cur FROM event_log WHERE stream = req->>'stream';
        allowed := CASE req->>'expect'
                       WHEN 'any' THEN true
                       WHEN 'no_stream' THEN cur < 0
                       WHEN 'exists' THEN cur >= 0
                       WHEN 'exact' THEN cur = (req->>'revision')::bigint
                       ELSE false
                   END;
        IF NOT allowed THEN
            outcome := 'wrong';
            actual := cur;
            RETURN NEXT;
            CONTINUE;
        END IF;
        INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata)
        SELECT last_pos + e.ord, (e.value->>'id')::uuid, req->>'stream', cur + e.ord,
               e.value->>'type', (e.value->>'data')::json, (e.value->>'metadata')::json
        FROM json_array_elements(req->'events') WITH ORDINALITY AS e(value, ord);
        n := json_array_length(req->'events');
        outcome := 'ok';
        first_position := last_pos + 1;
        last_pos := last_pos + n;
        last_position := last_pos;
        next_revision := cur + n;
        wrote := true;
        RETURN NEXT;
    END LOOP;
    IF wrote THEN
        PERFORM pg_notify('zuno_events', last_pos::text);
    END IF;
END
$$;
