-- A cheaper append for the usual batch (docs/storage.md, "Concurrent appends"). Each statement
-- of a plpgsql function costs its own executor run; zuno_append spent most of its time in
-- them, not in writing. Two changes, same outcomes:
--
-- * The idempotency probe (are any of these event ids stored?) runs only when the caller asks
--   (check_known). Without it, an event id already stored fails the insert on its unique key;
--   the caller runs the batch again with the probe, and probes a request it is told is at the
--   wrong revision itself (a retry of a stored append is "known", not "wrong").
-- * A batch whose requests are all to different streams is decided and written in one
--   statement. A batch with two requests to one stream, or with the
--   probe, takes the request-by-request loop of migration 0005.
--
-- Positions, the transaction-id order, the horizon and the collisions are as in 0005.

-- zuno_link links events to their stream's hash chain: events.Link in SQL. prev is the head's
-- hash, cur its revision; each event's digest (or '' for a build from before the chain, whose
-- metadata is stored as sent, migration 0004) gives its link, added as the metadata's last
-- member. last_hash is the new head's hash.
CREATE OR REPLACE FUNCTION zuno_link(prev text, cur bigint, metas text[], digests text[],
    OUT linked text[], OUT last_hash text)
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    linked := metas;
    FOR j IN 1 .. COALESCE(array_length(metas, 1), 0) LOOP
        IF digests[j] = '' THEN
            prev := '';
        ELSE
            prev := encode(sha256(convert_to('zuno.chain.1' || E'\n' || prev || E'\n' ||
                        (cur + j)::text || E'\n' || digests[j], 'UTF8')), 'hex');
            linked[j] := left(metas[j], -1) || ',"hash":"' || prev || '"}';
        END IF;
    END LOOP;
    last_hash := prev;
END
$$;

-- zuno_head_unmoved fails the statement when a stream's head was committed at or after the
-- positions this append reserved (an append that reserved later committed first).
CREATE OR REPLACE FUNCTION zuno_head_unmoved(stream text, head_at bigint, reserved bigint)
RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF head_at >= reserved THEN
        RAISE EXCEPTION 'stream % was written after positions were reserved; retry the batch', stream
            USING ERRCODE = 'serialization_failure';
    END IF;
    RETURN true;
END
$$;

-- zuno_append writes a batch of appends in one statement and one transaction; see 0005 for
-- the arguments, the outcomes and the collisions. check_known asks for the idempotency probe.
CREATE OR REPLACE FUNCTION zuno_append(streams text[], expects text[], revisions bigint[], counts int[],
    ids uuid[], types text[], datas text[], metas text[], digests text[], check_known boolean)
RETURNS TABLE (idx int, outcome text, actual bigint, first_position bigint, last_position bigint, next_revision bigint)
LANGUAGE plpgsql AS $$
DECLARE
    total int := COALESCE(array_length(ids, 1), 0);
    requests int := COALESCE(array_length(streams, 1), 0);
    next_pos bigint;
    reserved bigint;
    head_streams text[] := '{}';
    head_revs bigint[] := '{}';
    head_hashes text[] := '{}';
    seen uuid[] := '{}';
    req_ids uuid[];
    h int;
    head_at bigint;
    cur bigint;
    prev text;
    off int := 0;
    w int := 0;
    n int;
    allowed boolean;
    distinct_streams boolean;
    my_xid xid8;
    link record;
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

    IF NOT check_known THEN
        IF requests = 1 THEN
            distinct_streams := true;
        ELSE
            distinct_streams := (SELECT COUNT(DISTINCT s) = requests FROM unnest(streams) AS s);
        END IF;
        IF distinct_streams THEN
            -- Each request sees only its stream's committed head, as in the loop below; the
            -- allowed ones take the reserved positions in request order.
            RETURN QUERY
            WITH req AS (
                SELECT q.rk, q.rstream, q.rexpect, q.rrev, q.rn,
                       (SUM(q.rn) OVER (ORDER BY q.rk) - q.rn)::int AS roff
                FROM unnest(streams, expects, revisions, counts) WITH ORDINALITY AS q(rstream, rexpect, rrev, rn, rk)
            ), decided AS (
                SELECT req.*, COALESCE(hd.hrev, -1) AS rcur, COALESCE(hd.hhash, '') AS rprev,
                       zuno_head_unmoved(req.rstream, hd.hat, reserved) AND CASE req.rexpect
                           WHEN 'any' THEN true
                           WHEN 'no_stream' THEN hd.hrev IS NULL
                           WHEN 'exists' THEN hd.hrev IS NOT NULL
                           WHEN 'exact' THEN COALESCE(hd.hrev, -1) = req.rrev
                           ELSE false
                       END AS rok
                FROM req LEFT JOIN LATERAL (
                    SELECT e.stream_revision AS hrev, COALESCE(e.metadata->>'hash', '') AS hhash, e.position AS hat
                    FROM event_log AS e WHERE e.stream = req.rstream ORDER BY e.stream_revision DESC LIMIT 1
                ) AS hd ON true
            ), placed AS (
                SELECT decided.*, reserved + SUM(CASE WHEN decided.rok THEN decided.rn ELSE 0 END) OVER (ORDER BY decided.rk)
                                  - CASE WHEN decided.rok THEN decided.rn ELSE 0 END AS rpos
                FROM decided
            ), written AS (
                INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata, xid)
                SELECT p.rpos + l.lj - 1, ids[p.roff + l.lj], p.rstream, p.rcur + l.lj, types[p.roff + l.lj],
                       datas[p.roff + l.lj]::json, l.lmeta::json, my_xid
                FROM placed AS p,
                     unnest((zuno_link(p.rprev, p.rcur, metas[p.roff + 1 : p.roff + p.rn],
                                       digests[p.roff + 1 : p.roff + p.rn])).linked) WITH ORDINALITY AS l(lmeta, lj)
                WHERE p.rok
            )
            SELECT (p.rk - 1)::int,
                   CASE WHEN p.rok THEN 'ok' ELSE 'wrong' END,
                   CASE WHEN p.rok THEN NULL ELSE p.rcur END,
                   CASE WHEN p.rok THEN p.rpos END,
                   CASE WHEN p.rok THEN p.rpos + p.rn - 1 END,
                   CASE WHEN p.rok THEN p.rcur + p.rn END
            FROM placed AS p ORDER BY p.rk;
            RETURN;
        END IF;
    ELSE
        SELECT COALESCE(array_agg(event_id), '{}') INTO seen FROM event_log WHERE event_id = ANY(ids);
    END IF;

    next_pos := reserved;
    idx := -1;
    FOR k IN 1 .. requests LOOP
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
            ELSE
                PERFORM zuno_head_unmoved(streams[k], head_at, reserved);
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
            SELECT * INTO link FROM zuno_link(head_hashes[h], cur, metas[off + 1 : off + n], digests[off + 1 : off + n]);
            FOR j IN 1 .. n LOOP
                linked[off + j] := link.linked[j];
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
            head_hashes[h] := link.last_hash;
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
