-- Read-model writers (projections) serialise on a table lock that only the owner may take,
-- for the reason appends do (eventlog/0003): the reader role of zuno db can take any advisory
-- key, but no lock on a table it holds no privilege on.
CREATE TABLE IF NOT EXISTS read_model_write_lock ();
REVOKE ALL ON read_model_write_lock FROM PUBLIC;
