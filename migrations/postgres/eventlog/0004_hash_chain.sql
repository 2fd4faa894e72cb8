-- The hash chain (docs/storage.md, "Hash chain"). Every event appended from now on carries
-- metadata.hash = events.Link(prev, revision, digest): Go computes each event's body digest
-- (id, stream, type, data, metadata) and passes it as "digest"; the revision and the
-- predecessor are decided here, under the append lock, so the link is computed here, in the
-- same text form as events.Link. The hash is added as the metadata's last member, which is
-- where Go's encoding of events.Metadata puts it.
--
-- Events already stored are not rewritten: event_chain_genesis records the last position
-- written before the chain, so that `zuno verify` accepts them unhashed.
LOCK TABLE event_log_append_lock IN EXCLUSIVE MODE;
CREATE TABLE IF NOT EXISTS event_chain_genesis (
    position BIGINT NOT NULL
);
INSERT INTO event_chain_genesis (position) SELECT COALESCE(MAX(position), 0) FROM event_log;

CREATE OR REPLACE FUNCTION zuno_append(requests json)
RETURNS TABLE (idx int, outcome text, actual bigint, first_position bigint, last_position bigint, next_revision bigint)
LANGUAGE plpgsql AS $$
DECLARE
    req json;
    ev json;
    ord bigint;
    last_pos bigint;
    cur bigint;
    prev text;
    links text[];
    n int;
    wrote boolean := false;
    allowed boolean;
    ids uuid[];
BEGIN
    LOCK TABLE event_log_append_lock IN EXCLUSIVE MODE;
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
        cur := -1; prev := '';
        SELECT h.stream_revision, COALESCE(h.metadata->>'hash', '') INTO cur, prev
        FROM event_log h WHERE h.stream = req->>'stream' ORDER BY h.stream_revision DESC LIMIT 1;
        IF NOT FOUND THEN
            cur := -1; prev := '';
        END IF;
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
        -- The links depend on each other, so they are computed one by one; the rows are then
        -- written by one INSERT, as before the chain.
        links := ARRAY[]::text[];
        FOR ev, ord IN SELECT e.value, e.ord FROM json_array_elements(req->'events') WITH ORDINALITY AS e(value, ord) LOOP
            IF ev->>'digest' IS NULL THEN
                -- A build from before the chain: stored as sent, and reported by zuno verify as
                -- unchained; the next hashed event starts afresh.
                prev := '';
            ELSE
                prev := encode(sha256(convert_to('zuno.chain.1' || E'\n' || prev || E'\n' ||
                            (cur + ord)::text || E'\n' || (ev->>'digest'), 'UTF8')), 'hex');
            END IF;
            links := links || prev;
        END LOOP;
        INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata)
        SELECT last_pos + e.ord, (e.value->>'id')::uuid, req->>'stream', cur + e.ord,
               e.value->>'type', (e.value->>'data')::json,
               (CASE WHEN links[e.ord] = '' THEN e.value->>'metadata'
                     ELSE left(e.value->>'metadata', -1) || ',"hash":"' || links[e.ord] || '"}' END)::json
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
