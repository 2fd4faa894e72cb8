package main

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/zuno-run/zuno/adapters/readmodel"
	"github.com/zuno-run/zuno/commands/queries"

	"github.com/spf13/cobra"
)

func newDBCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db [--format json|table] [--limit N] [--max-bytes N] [--timeout D] SQL",
		Short: "Run read-only SQL over the read models",
		Long: `Run read-only SQL over the read models: event, session, part (the transcript: text and
tool parts), prompt_receipt, provider_request, agent_job (the jobs a session delegated),
inbox (the job reports a session received), work_plan, work_item, goal (each Goal),
task_context (the objective, sources and checks of a long task),
permission_decision (who allowed each call, under which rule and layer),
verification_receipt (what each shell call's exit status proves) and
projection_checkpoint. json_extract(data, '$.path') works on SQLite and Postgres alike.
Exactly one query (SELECT, WITH … SELECT, VALUES) runs, on a connection that cannot write:
read models are derived from the event log. SQLite: the file opened read-only, behind an
authorizer that refuses writes, DDL, PRAGMA, ATTACH and transaction control. Postgres: a
login role that holds only SELECT on the read models (created by the migrations, or
ZUNO_READMODEL_READER_URL), in a READ ONLY transaction. The query is cancelled after --timeout.

Rows are printed as they are read (json), or kept until the last to align them (table),
within bounds (docs/config.md, "Bounds"): at most --limit rows (default 1000, at most
1000000; a note on stderr says when the query had more), and at most --max-bytes of values
(default 16 MiB, at most 256 MiB): the row that would pass it ends the query with
result_too_large, the rows before it printed. --timeout is at most 10m. A value above a
ceiling is refused (over_ceiling).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("zuno db takes one SQL statement as a single argument (quote it)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			b, err := dbBounds(cmd)
			if err != nil {
				return err
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				return runDB(ctx, cmd, a, args[0], format, b)
			})
		},
	}
	addFormatFlag(cmd, "table")
	cmd.Flags().Int("limit", int(queries.UserRowsLimit.Default), fmt.Sprintf("print at most this many rows (at most %d)", queries.UserRowsLimit.Ceiling))
	cmd.Flags().Int64("max-bytes", queries.UserBytesLimit.Default, fmt.Sprintf("stop with result_too_large past this many bytes of values (at most %d)", queries.UserBytesLimit.Ceiling))
	cmd.Flags().Duration("timeout", readmodel.DefaultTimeout, fmt.Sprintf("cancel the query after this long (at most %s)", dbTimeoutCeiling))
	return readOnly(cmd)
}

// dbTimeoutCeiling is --timeout's ceiling: a reader holds a snapshot and a connection
// while its query runs.
var dbTimeoutCeiling = time.Duration(queries.UserTimeoutLimit.Ceiling) * time.Millisecond

// dbBounds reads the flags, refusing a value out of range: below 1 is a usage error, above a
// ceiling over_ceiling (a flag the user typed is refused, never silently clamped).
func dbBounds(cmd *cobra.Command) (queries.UserBounds, error) {
	limit, _ := cmd.Flags().GetInt("limit")
	maxBytes, _ := cmd.Flags().GetInt64("max-bytes")
	timeout, _ := cmd.Flags().GetDuration("timeout")
	switch {
	case limit < 1:
		return queries.UserBounds{}, usagef("--limit %d: print at least one row (at most %d)", limit, queries.UserRowsLimit.Ceiling)
	case int64(limit) > queries.UserRowsLimit.Ceiling:
		return queries.UserBounds{}, queries.UserRowsLimit.OverCeiling(int64(limit))
	case maxBytes < 1:
		return queries.UserBounds{}, usagef("--max-bytes %d: allow at least one byte (at most %d)", maxBytes, queries.UserBytesLimit.Ceiling)
	case maxBytes > queries.UserBytesLimit.Ceiling:
		return queries.UserBounds{}, queries.UserBytesLimit.OverCeiling(maxBytes)
	case timeout <= 0:
		return queries.UserBounds{}, usagef("--timeout %s: give a positive duration (at most %s)", timeout, dbTimeoutCeiling)
	case timeout > dbTimeoutCeiling:
		return queries.UserBounds{}, queries.UserTimeoutLimit.OverCeiling(timeout.Milliseconds())
	}
	return queries.UserBounds{Limit: limit, MaxBytes: maxBytes, Timeout: timeout}, nil
}

// dbMemoryBase is zuno db's memory apart from the rows in flight (the runtime, the driver,
// the schema), for the soft limit.
const dbMemoryBase = 64 << 20

// runDB runs the query into the format's sink. Rows printed before result_too_large stay
// printed (json closes its array); a note says when --limit left rows unread.
func runDB(ctx context.Context, cmd *cobra.Command, a *app, sql, format string, b queries.UserBounds) error {
	// A long value passes through a few copies (the driver's, its text, its JSON); a soft
	// memory limit makes the collector reclaim each row's before the heap doubles, so the
	// peak follows the rows in flight, not the result (docs/config.md, "Bounds").
	debug.SetMemoryLimit(dbMemoryBase + 2*b.MaxBytes)
	var tab queries.Table
	var sink queries.RowSink = &tab
	js := &jsonRows{w: cmd.OutOrStdout()}
	if format == "json" {
		sink = js
	}
	sum, err := a.Queries.UserSQL(ctx, sql, b, sink)
	var tooLarge *readmodel.TooLargeError
	switch {
	case format == "json":
		if cerr := js.close(err == nil); err == nil {
			err = cerr
		}
	case err == nil || errors.As(err, &tooLarge):
		if werr := writeTable(cmd.OutOrStdout(), tab.Columns, tab.Rows); err == nil {
			err = werr
		}
	}
	if err == nil && sum.More {
		fmt.Fprintf(cmd.ErrOrStderr(), "zuno db: note: printed the first %d rows; the query has more: narrow it, or pass a larger --limit (at most %d)\n",
			sum.Rows, queries.UserRowsLimit.Ceiling)
	}
	return err
}
