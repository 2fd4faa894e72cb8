-- Appends commit concurrently (docs/storage.md, "Concurrent appends"). Until now every append
-- held the append lock through its commit, so commits, and their WAL flushes, happened one at
-- a time. Now an append holds that lock only while it takes its transaction id and reserves its
-- positions; two appends to one stream at once collide on its unique revision, and one is run
-- again. Positions are reserved in transaction-id order, and a reader reads only the
-- events of transactions older than every append still in progress (zuno_event_horizon), so
-- it can never pass a position that commits later.
LOCK TABLE event_log_append_lock IN EXCLUSIVE MODE;

-- The transaction that wrote each event; events written before this migration (or by hand) read
-- as 0, older than any transaction.
ALTER TABLE event_log ADD COLUMN IF NOT EXISTS xid xid8 NOT NULL DEFAULT '0';

CREATE SEQUENCE IF NOT EXISTS event_position AS BIGINT;
SELECT setval('event_position', COALESCE((SELECT MAX(position) FROM event_log), 0) + 1, false);
REVOKE ALL ON SEQUENCE event_position FROM PUBLIC;

-- An append holds a SHARE lock on event_appending from its start to its end, before it takes its
-- transaction id: it is how a reader finds the appends in progress, whatever else runs in the
-- cluster. SHARE does not conflict with itself, and is never a fast-path lock, so pg_locks
-- shows it beside the transaction's id in one consistent read. Taking it needs a privilege on
-- the table, which a reader does not have.
CREATE TABLE IF NOT EXISTS event_appending ();
REVOKE ALL ON event_appending FROM PUBLIC;

-- zuno_event_horizon is the smallest transaction id an append in progress has or may still
-- take: the least id among the holders of event_appending, or the next id to be assigned. A
-- reader that asks for it and then, in a later statement, reads only events with a smaller
-- xid reads a prefix of the log no later commit can add to (docs/storage.md, "Concurrent
-- appends"). Transactions that do not append (another database's, a projection's) do not
-- hold it back.
CREATE OR REPLACE FUNCTION zuno_event_horizon() RETURNS xid8
LANGUAGE sql VOLATILE AS $$
    WITH next AS (
        SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint AS full_id
    ), appending AS (
        -- pg_locks names a transaction id in 32 bits: put it back beside the next full id,
        -- from which it is less than 2^31 away.
        SELECT next.full_id + ((x.transactionid::text::bigint - (next.full_id % 4294967296) + 6442450944) % 4294967296 - 2147483648) AS full_id
        FROM pg_locks AS r
        JOIN pg_locks AS x ON x.virtualtransaction = r.virtualtransaction
             AND x.locktype = 'transactionid' AND x.mode = 'ExclusiveLock' AND x.granted
        CROSS JOIN next
        WHERE r.locktype = 'relation' AND r.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND r.relation = 'event_appending'::regclass AND r.mode = 'ShareLock' AND r.granted
    )
    SELECT LEAST((SELECT full_id FROM next), (SELECT MIN(full_id) FROM appending))::text::xid8
$$;

-- zuno_append writes a batch of appends in one statement and one transaction. The batch comes
-- as parallel arrays: request k is streams[k], expects[k] ("any", "no_stream", "exists",
-- "exact"), revisions[k] and counts[k] events, which are the next counts[k] entries of ids,
-- types, datas, metas (JSON text, kept exactly) and digests (events.BodyDigest, or '' for
-- none). Each request is decided on its own, in order, seeing the ones before it, with the
-- outcomes of migration 0002 (known, wrong, ok). A request not written leaves its reserved
-- positions unused: positions are unique and increasing, not contiguous.
--
-- It does not NOTIFY: a transaction that notifies holds a database-wide lock through its commit,
-- which would serialise the commits again; the appending process notifies after its commit.
--
-- It must be its transaction's first write: the order proof needs the transaction id taken
-- while positions are reserved. When another transaction has committed to one of the batch's
-- streams at positions after the ones reserved here (it reserved later but wrote first), it
-- fails with serialization_failure; when one writes the same revision of a stream at the same
-- time, one of the two fails with unique_violation. The caller runs the batch again, with new
-- positions: within a stream, positions follow revisions.
CREATE OR REPLACE FUNCTION zuno_append(streams text[], expects text[], revisions bigint[], counts int[],
    ids uuid[], types text[], datas text[], metas text[], digests text[])
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

    SELECT COALESCE(array_agg(event_id), '{}') INTO seen FROM event_log WHERE event_id = ANY(ids);

    idx := -1;
    FOR k IN 1 .. COALESCE(array_length(streams, 1), 0) LOOP
        idx := idx + 1;
        n := counts[k];
        req_ids := ids[off + 1 : off + n];
        actual := NULL; first_position := NULL; last_position := NULL; next_revision := NULL;
        h := array_position(head_streams, streams[k]);
        IF h IS NULL THEN
            -- The stream's head as its last committed event left it. Nothing is locked: an
            -- append that decides the same revision of the stream at the same time collides
            -- with this one on the unique (stream, stream_revision) key, waits for it, and
            -- fails; its batch is run again (docs/storage.md, "Concurrent appends").
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

-- A process of an older build calls zuno_append(json) (migrations 0002-0004): it now takes the
-- same path, so its appends take their positions as every other append does. (Such a process
-- still reads the log without the horizon: upgrade every process together, docs/storage.md.)
CREATE OR REPLACE FUNCTION zuno_append(requests json)
RETURNS TABLE (idx int, outcome text, actual bigint, first_position bigint, last_position bigint, next_revision bigint)
LANGUAGE sql AS $$
    WITH reqs AS (
        SELECT q.r, q.o FROM json_array_elements(requests) WITH ORDINALITY AS q(r, o)
    ), evs AS (
        SELECT reqs.o, ev.e, ev.eo FROM reqs, json_array_elements(reqs.r->'events') WITH ORDINALITY AS ev(e, eo)
    )
    SELECT * FROM zuno_append(
        ARRAY(SELECT r->>'stream' FROM reqs ORDER BY o),
        ARRAY(SELECT r->>'expect' FROM reqs ORDER BY o),
        ARRAY(SELECT COALESCE((r->>'revision')::bigint, 0) FROM reqs ORDER BY o),
        ARRAY(SELECT json_array_length(r->'events') FROM reqs ORDER BY o),
        ARRAY(SELECT (e->>'id')::uuid FROM evs ORDER BY o, eo),
        ARRAY(SELECT e->>'type' FROM evs ORDER BY o, eo),
        ARRAY(SELECT e->>'data' FROM evs ORDER BY o, eo),
        ARRAY(SELECT e->>'metadata' FROM evs ORDER BY o, eo),
        ARRAY(SELECT COALESCE(e->>'digest', '') FROM evs ORDER BY o, eo))
$$;
