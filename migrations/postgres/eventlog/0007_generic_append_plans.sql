-- zuno_append's statements run with their generic plans (docs/storage.md, "Concurrent
-- appends"). Under the default plan_cache_mode, PL/pgSQL plans a statement anew on each call
-- whenever the generic plan's estimate is above the custom plans' average; the insert over
-- unnest() of the batch's arrays always was, so every append planned it again (about a fifth
-- of the function's server time). Its generic plan, and the head read's and the probe's, are
-- the same for any batch size: index lookups and a nested loop over the arrays.
ALTER FUNCTION zuno_append(text[], text[], bigint[], int[], uuid[], text[], text[], text[], text[], boolean)
    SET plan_cache_mode = force_generic_plan;
