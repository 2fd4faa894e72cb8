-- The reader: the login role `zuno db` connects as (docs/storage.md). It holds SELECT on the
-- read-model tables and nothing else: no write, no ownership, no membership in a role that
-- reads server files or runs programs. SET ROLE from an owner session is no boundary (a
-- statement can switch back with set_config), so the reader logs in as itself.
--
-- One role per database (the name carries a digest of the database's name), so databases on
-- one server never share, or reset, each other's reader. Its password is random, kept in
-- zuno_reader_credential, which only the owner may read; running this again (a new database of
-- the same name) sets a new one. A migrator without CREATEROLE creates no role: `zuno db` then
-- refuses until the deployment configures a reader URL (reader_unavailable).
CREATE TABLE IF NOT EXISTS zuno_reader_credential (
    role     TEXT NOT NULL,
    password TEXT NOT NULL
);
REVOKE ALL ON zuno_reader_credential FROM PUBLIC;

DO $$
DECLARE
    reader text := 'zuno_reader_' || left(md5(current_database()), 16);
    secret text := replace(gen_random_uuid()::text, '-', '') || replace(gen_random_uuid()::text, '-', '');
    t text;
BEGIN
    IF NOT (SELECT rolsuper OR rolcreaterole FROM pg_roles WHERE rolname = current_user) THEN
        RAISE NOTICE 'zuno: % may not create roles, so no reader role was created for zuno db', current_user;
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = reader) THEN
        EXECUTE format('ALTER ROLE %I LOGIN PASSWORD %L NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS', reader, secret);
    ELSE
        EXECUTE format('CREATE ROLE %I LOGIN PASSWORD %L NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS', reader, secret);
    END IF;
    DELETE FROM zuno_reader_credential;
    INSERT INTO zuno_reader_credential (role, password) VALUES (reader, secret);
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', current_schema(), reader);
    -- The read models, by name: a later migration that adds one grants SELECT on it too.
    FOREACH t IN ARRAY ARRAY['event', 'session', 'part', 'prompt_receipt', 'provider_request', 'agent_job',
                             'work_plan', 'work_item', 'permission_decision', 'projection_checkpoint'] LOOP
        EXECUTE format('GRANT SELECT ON %I TO %I', t, reader);
    END LOOP;
END
$$;
