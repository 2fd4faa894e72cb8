package main

import (
	"context"

	"github.com/zuno-run/zuno/adapters/readmodel"

	"github.com/spf13/cobra"
)

func newDBCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db [--format json|table] SQL",
		Short: "Run read-only SQL over the read models",
		Long: `Run read-only SQL over the read models: event, session, part (the transcript: text and
tool parts), prompt_receipt, provider_request, agent_job (the jobs a session delegated),
inbox (the job reports a session received), work_plan, work_item, goal (each Goal),
permission_decision (who allowed each call, under which rule and layer),
verification_receipt (what each shell call's exit status proves) and
projection_checkpoint. json_extract(data, '$.path') works on SQLite and Postgres alike.
Exactly one query (SELECT, WITH … SELECT, VALUES) runs, on a connection that cannot write:
read models are derived from the event log. SQLite: the file opened read-only, behind an
authorizer that refuses writes, DDL, PRAGMA, ATTACH and transaction control. Postgres: a
login role that holds only SELECT on the read models (created by the migrations, or
ZUNO_READMODEL_READER_URL), in a READ ONLY transaction. The query is cancelled after --timeout.`,
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
			limit, _ := cmd.Flags().GetInt("limit")
			timeout, _ := cmd.Flags().GetDuration("timeout")
			return withApp(cmd, func(ctx context.Context, a *app) error {
				rows, err := a.Queries.UserSQL(ctx, args[0], limit, timeout)
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), rowsAsObjects(rows.Columns, rows.Rows))
				}
				return writeTable(cmd.OutOrStdout(), rows.Columns, rows.Rows)
			})
		},
	}
	addFormatFlag(cmd, "table")
	cmd.Flags().Int("limit", 0, "return at most this many rows (0: all)")
	cmd.Flags().Duration("timeout", readmodel.DefaultTimeout, "cancel the query after this long")
	return cmd
}

// rowsAsObjects turns rows into one JSON object per row, keyed by column name.
func rowsAsObjects(columns []string, rows [][]any) []map[string]any {
	out := make([]map[string]any, len(rows))
	for i, row := range rows {
		obj := make(map[string]any, len(columns))
		for j, c := range columns {
			obj[c] = row[j]
		}
		out[i] = obj
	}
	return out
}
