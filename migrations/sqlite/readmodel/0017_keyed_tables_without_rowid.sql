-- session, work_plan and work_item are stored in their primary key's order (WITHOUT ROWID):
-- a row is one entry of one B-tree, where a rowid table keeps it in two (the table by rowid
-- and its primary key's index), so writing a row costs one B-tree insert instead of two,
-- which a rebuild pays for every row (issue 32, docs/storage.md "Read models and
-- projections"). Their rows are small (a plan's steps and an item's dependencies are short
-- JSON arrays); part, whose data holds a tool's output, stays a rowid table. Each table is
-- copied whole, its columns in the same order, so a database keeps its rows and its
-- projectors' checkpoints. A primary key column of a WITHOUT ROWID table is NOT NULL, as
-- the projectors always bind one.
CREATE TABLE session_keyed (
    id                TEXT NOT NULL PRIMARY KEY,
    title             TEXT NOT NULL,
    agent             TEXT NOT NULL,
    parent_session_id TEXT,
    directory         TEXT,
    message_count     INTEGER NOT NULL DEFAULT 0,
    time_created      TEXT NOT NULL,
    time_updated      TEXT NOT NULL,
    status            TEXT NOT NULL DEFAULT 'idle'
) WITHOUT ROWID;
INSERT INTO session_keyed SELECT id, title, agent, parent_session_id, directory, message_count, time_created,
    time_updated, status FROM session;
DROP TABLE session;
ALTER TABLE session_keyed RENAME TO session;

CREATE TABLE work_plan_keyed (
    session_id     TEXT NOT NULL,
    plan_id        TEXT NOT NULL,
    revision       INTEGER NOT NULL,
    title          TEXT NOT NULL,
    status         TEXT NOT NULL,
    depth          INTEGER NOT NULL,
    parent_plan_id TEXT,
    steps          TEXT NOT NULL,
    time_created   TEXT NOT NULL,
    time_updated   TEXT NOT NULL,
    PRIMARY KEY (session_id, plan_id)
) WITHOUT ROWID;
INSERT INTO work_plan_keyed SELECT session_id, plan_id, revision, title, status, depth, parent_plan_id, steps,
    time_created, time_updated FROM work_plan;
DROP TABLE work_plan;
ALTER TABLE work_plan_keyed RENAME TO work_plan;

CREATE TABLE work_item_keyed (
    id           TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    title        TEXT NOT NULL,
    status       TEXT NOT NULL,
    owner        TEXT,
    dependencies TEXT NOT NULL,
    plan_step_id TEXT,
    time_created TEXT NOT NULL,
    time_updated TEXT NOT NULL,
    PRIMARY KEY (session_id, id)
) WITHOUT ROWID;
INSERT INTO work_item_keyed SELECT id, session_id, title, status, owner, dependencies, plan_step_id, time_created,
    time_updated FROM work_item;
DROP TABLE work_item;
ALTER TABLE work_item_keyed RENAME TO work_item;
