-- zuno_append_linked writes a batch of appends whose places the caller already knows
-- (docs/storage.md, "Known heads"): event j goes to streams[j] at revisions[j], the caller
-- having numbered each stream's events on from the head it knows and linked each event into
-- the hash chain itself, metas[j] carrying its "hash" member. It takes the append lock, the
-- transaction id and the positions exactly as zuno_append does (migration 0005), so the
-- order readers rely on is the same; it reads no head and computes no hash.
--
-- A caller whose knowledge is stale cannot store a wrong event. The head it knows was
-- committed (it read it, or its own append of it was acknowledged) and events are never
-- removed, so the stream's head is that one or a later one; if later, the revision after it,
-- the first the batch writes to that stream, is taken, and the insert fails on the (stream,
-- revision) key (unique_violation, after waiting for an append still writing it; two batches
-- waiting on each other's revisions fail one of them with deadlock_detected). An event id
-- already stored fails on its key too. Either way nothing of the batch is written, and the
-- caller runs zuno_append, which decides each append from the stored head. The known head
-- committed before this call began, so its position is below the ones reserved here: within a
-- stream, positions follow revisions.
--
-- Returns the first reserved position; the events take it and the ones after it, in order.
CREATE OR REPLACE FUNCTION zuno_append_linked(streams text[], revisions bigint[],
    ids uuid[], types text[], datas text[], metas text[])
RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    n int := cardinality(ids);
    reserved bigint;
    my_xid xid8;
BEGIN
    IF pg_current_xact_id_if_assigned() IS NOT NULL THEN
        RAISE EXCEPTION 'zuno_append_linked must be the first write of its transaction'
            USING ERRCODE = 'invalid_transaction_state';
    END IF;
    IF n = 0 OR cardinality(streams) <> n OR cardinality(revisions) <> n OR cardinality(types) <> n
            OR cardinality(datas) <> n OR cardinality(metas) <> n THEN
        RAISE EXCEPTION 'zuno_append_linked needs as many streams, revisions, types, data and metadata as ids (got % ids)', n
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    LOCK TABLE event_appending IN SHARE MODE;
    -- As in zuno_append: the id and the positions are taken under the append lock, in a block
    -- rolled back to release it at once.
    BEGIN
        LOCK TABLE event_log_append_lock IN EXCLUSIVE MODE;
        my_xid := pg_current_xact_id();
        reserved := nextval('event_position');
        IF n > 1 THEN
            PERFORM setval('event_position', reserved + n - 1);
        END IF;
        RAISE SQLSTATE 'ZU001';
    EXCEPTION WHEN SQLSTATE 'ZU001' THEN
        NULL;
    END;
    INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata, xid)
    SELECT reserved + g.j - 1, ids[g.j], streams[g.j], revisions[g.j],
           types[g.j], datas[g.j]::json, metas[g.j]::json, my_xid
    FROM generate_series(1, n) AS g(j);
    RETURN reserved;
END
$$;

-- Generic plans, as for zuno_append (migration 0007): the insert's plan is the same for any n.
ALTER FUNCTION zuno_append_linked(text[], bigint[], uuid[], text[], text[], text[])
    SET plan_cache_mode = force_generic_plan;
