-- One process of a deployment projects at a time: the leader holds EXCLUSIVE on this table in a
-- transaction it keeps open on a connection of its own, and the others wait for the
-- checkpoints it writes (projections/follow.go, docs/storage.md). A table lock, not an
-- advisory key, for the reason of 0006: the reader role of zuno db can take any advisory key,
-- and so could make every process a follower, but no lock on a table it holds no privilege on.
CREATE TABLE IF NOT EXISTS projection_leader ();
REVOKE ALL ON projection_leader FROM PUBLIC;
