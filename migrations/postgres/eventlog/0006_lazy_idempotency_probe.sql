-- The idempotency probe of zuno_append (are any of these event ids stored already?) runs only
-- when the caller asks (check_known), not on every append (docs/storage.md, "Concurrent
-- appends"). Without it, an event id already stored fails the insert on its unique key and the
-- caller runs the batch again with the probe; a request answered "wrong" the caller probes
-- itself, since a retry of a stored append is "known", not "wrong". Everything else is as in
-- migration 0005: positions, the transaction-id order, the horizon and the collisions.

-- zuno_append writes a batch of appends in one statement and one transaction; see 0005 for the
-- arguments, the outcomes and the collisions. check_known asks for the idempotency probe.
CREATE OR REPLACE FUNCTION zuno_append(streams text[], expects text[], revisions bigint[], counts int[],
    ids uuid[], types text[], datas text[], metas text[], digests text[], check_known boolean)
RETURNS TABLE (idx int, outcome text, actual bigint, first_position bigint, last_position bigint, next_revision bigint)
LANGUAGE plpgsql AS $$
DECLARE
    total int := COALESCE(array_length(ids, 1), 0);
    next_pos bigint;
    reserved bigint;
    head_streams text[] := '{}';
    head_revs bigint[] := '{}';
    head_hashes text[] := '{}';
    seen uuid[];
    req_ids uuid[];
    h int;
    head_at bigint;
    cur bigint;
    prev text;
    off int := 0;
    w int := 0;
    n int;
    allowed boolean;
    my_xid xid8;
    linked text[] := '{}';
    ok_req int[];
    ok_pos bigint[];
    ok_rev bigint[];
    ok_off int[];
BEGIN
    IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
        RAISE EXCEPTION 'zuno_append must be the first write of its transaction'
            USING ERRCODE = 'invalid_transaction_state';
    END IF;
    IF total = 0 THEN
        RETURN;
    END IF;
    LOCK TABLE event_appending IN SHARE MODE;
    -- Take the transaction id and reserve the positions under the append lock, then roll the
    -- block back: that releases the lock at once, and keeps the id and the positions (neither
    -- is undone by a rollback).
    BEGIN
        LOCK TABLE event_log_append_lock IN EXCLUSIVE MODE;
        my_xid := pg_current_xact_id();
        reserved := nextval('event_position');
        IF total > 1 THEN
            PERFORM setval('event_position', reserved + total - 1);
        END IF;
        RAISE SQLSTATE 'ZU001';
    EXCEPTION WHEN SQLSTATE 'ZU001' THEN
        NULL;
    END;
    next_pos := reserved;

    IF check_known THEN
        SELECT COALESCE(array_agg(event_id), '{}') INTO seen FROM event_log WHERE event_id = ANY(ids);
    ELSE
        seen := '{}';
    END IF;

    idx := -1;
    FOR k IN 1 .. COALESCE(array_length(streams, 1), 0) LOOP
        idx := idx + 1;
        n := counts[k];
        req_ids := ids[off + 1 : off + n];
        actual := NULL; first_position := NULL; last_position := NULL; next_revision := NULL;
        h := array_position(head_streams, streams[k]);
        IF h IS NULL THEN
            -- The stream's head as its last committed event left it, read without a lock (see
            -- 0005: a concurrent append of the same revision collides on the unique key).
            h := COALESCE(array_length(head_streams, 1), 0) + 1;
            head_streams[h] := streams[k];
            SELECT e.stream_revision, COALESCE(e.metadata->>'hash', ''), e.position
              INTO cur, prev, head_at
              FROM event_log AS e WHERE e.stream = streams[k] ORDER BY e.stream_revision DESC LIMIT 1;
            IF NOT FOUND THEN
                cur := -1; prev := '';
            ELSIF head_at >= reserved THEN
                RAISE EXCEPTION 'stream % was written after positions were reserved; retry the batch', streams[k]
                    USING ERRCODE = 'serialization_failure';
            END IF;
            head_revs[h] := cur; head_hashes[h] := prev;
        END IF;
        cur := head_revs[h];
        allowed := CASE expects[k]
                       WHEN 'any' THEN true
                       WHEN 'no_stream' THEN cur < 0
                       WHEN 'exists' THEN cur >= 0
                       WHEN 'exact' THEN cur = revisions[k]
                       ELSE false
                   END;
        IF req_ids && seen THEN
            outcome := 'known';
        ELSIF NOT allowed THEN
            outcome := 'wrong';
            actual := cur;
        ELSE
            outcome := 'ok';
            prev := head_hashes[h];
            FOR j IN off + 1 .. off + n LOOP
                IF digests[j] = '' THEN
                    prev := ''; -- a build from before the chain: stored as sent (migration 0004)
                    linked[j] := metas[j];
                ELSE
                    prev := encode(sha256(convert_to('zuno.chain.1' || E'\n' || prev || E'\n' ||
                                (cur + j - off)::text || E'\n' || digests[j], 'UTF8')), 'hex');
                    linked[j] := left(metas[j], -1) || ',"hash":"' || prev || '"}';
                END IF;
            END LOOP;
            w := w + 1;
            ok_req[w] := k;
            ok_pos[w] := next_pos;
            ok_rev[w] := cur;
            ok_off[w] := off;
            seen := seen || req_ids;
            first_position := next_pos;
            last_position := next_pos + n - 1;
            next_revision := cur + n;
            next_pos := next_pos + n;
            head_revs[h] := cur + n;
            head_hashes[h] := prev;
        END IF;
        off := off + n;
        RETURN NEXT;
    END LOOP;
    IF w = 0 THEN
        RETURN;
    END IF;
    -- Request k's events are ids[off + 1 .. off + n], written at positions pos .. pos + n - 1
    -- and revisions rev + 1 .. rev + n.
    INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata, xid)
    SELECT o.pos + g.j - 1, ids[o.off + g.j], streams[o.req], o.rev + g.j, types[o.off + g.j],
           datas[o.off + g.j]::json, linked[o.off + g.j]::json, my_xid
    FROM unnest(ok_req, ok_pos, ok_rev, ok_off) AS o(req, pos, rev, off),
         generate_series(1, counts[o.req]) AS g(j);
END
$$;

-- Callers of 0005's signature (a process of an older build) keep the probe.
CREATE OR REPLACE FUNCTION zuno_append(streams text[], expects text[], revisions bigint[], counts int[],
    ids uuid[], types text[], datas text[], metas text[], digests text[])
RETURNS TABLE (idx int, outcome text, actual bigint, first_position bigint, last_position bigint, next_revision bigint)
LANGUAGE sql AS $$
    SELECT * FROM zuno_append(streams, expects, revisions, counts, ids, types, datas, metas, digests, true)
$$;
