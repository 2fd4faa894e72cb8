-- How far each reaction of the reaction runner (commands/react, docs/turns.md "Reactions") has
-- read the log: the position of the last event whose commands it has issued. A reaction's
-- commands are idempotent (their ids derive from the reaction and the trigger event), so a
-- checkpoint that lags after a crash only re-issues commands that return their first result.
CREATE TABLE IF NOT EXISTS reaction_checkpoint (
    reaction TEXT PRIMARY KEY,
    position INTEGER NOT NULL
);
