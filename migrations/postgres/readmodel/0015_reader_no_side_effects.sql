-- The reader may call no function with a side effect (issue 30, docs/storage.md "The reader").
-- PostgreSQL grants EXECUTE on every function to PUBLIC, so the reader could, inside its
-- read-only transaction, emit a WAL message (pg_logical_emit_message: hundreds of MB that a
-- rollback does not undo), take advisory keys, notify, create large objects, or signal its own
-- backends. Which functions those are is read from the catalog, not listed by hand: every
-- VOLATILE function (the catalog's mark for "may do anything, including writing") that can be
-- called from SQL, except the few below that only read a clock or a random source, or set a
-- setting for the caller's own transaction (zuno db's timeouts).
--
-- zuno_reader_revoke_side_effects() revokes EXECUTE on them from PUBLIC in this database and
-- grants it back to Zuno's writer (the owner of schema_migration, the role that migrated,
-- whose appends notify) and to the role running it. Only the functions' owner, the bootstrap superuser, may revoke what it
-- granted to PUBLIC: a migrator that is no superuser cannot, and then `zuno db` refuses the
-- reader (reader_privileged) until a superuser runs `SELECT zuno_reader_revoke_side_effects()`
-- in this database once. Functions created later by the migrator are not granted to PUBLIC
-- (ALTER DEFAULT PRIVILEGES below); the reader's check at connect catches any other.
CREATE OR REPLACE FUNCTION zuno_reader_side_effect_functions() RETURNS SETOF regprocedure
LANGUAGE sql STABLE AS $$
    SELECT p.oid::regprocedure FROM pg_proc p
    WHERE p.provolatile = 'v'
      AND p.prorettype NOT IN ('trigger'::regtype, 'event_trigger'::regtype, 'language_handler'::regtype,
          'index_am_handler'::regtype, 'table_am_handler'::regtype, 'tsm_handler'::regtype, 'fdw_handler'::regtype,
          'internal'::regtype)
      AND NOT (p.pronamespace = 'pg_catalog'::regnamespace
          AND p.proname IN ('clock_timestamp', 'timeofday', 'random', 'gen_random_uuid', 'set_config'))
$$;

CREATE OR REPLACE FUNCTION zuno_reader_revoke_side_effects() RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    f regprocedure;
    writer text := (SELECT tableowner FROM pg_tables WHERE tablename = 'schema_migration' AND schemaname = current_schema());
    n integer := 0;
BEGIN
    FOR f IN SELECT * FROM zuno_reader_side_effect_functions() LOOP
        EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', f, current_user);
        IF writer IS NOT NULL AND writer <> current_user THEN
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', f, writer);
        END IF;
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;

ALTER DEFAULT PRIVILEGES REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC;

DO $$
BEGIN
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        PERFORM zuno_reader_revoke_side_effects();
    ELSE
        -- Zuno's own functions it may revoke; the system's it may not.
        EXECUTE 'REVOKE EXECUTE ON FUNCTION zuno_reader_revoke_side_effects() FROM PUBLIC';
        RAISE NOTICE 'zuno: % is no superuser, so the reader role may still call functions with side effects; zuno db refuses it until a superuser runs SELECT zuno_reader_revoke_side_effects() in database %', current_user, current_database();
    END IF;
END
$$;
