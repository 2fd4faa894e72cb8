package main

import (
	"context"

	"github.com/spf13/cobra"
)

func newDBCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "db [--format json|table] SQL",
		Short: "Run read-only SQL over the read models",
		Long: `Run read-only SQL over the read models: event, session, part (the transcript: text and
tool parts), prompt_receipt, provider_request, agent_job, work_plan, work_item,
permission_decision (who allowed each call, under which rule and layer) and
projection_checkpoint. json_extract(data, '$.path') works on SQLite and Postgres alike.
A statement that writes is refused: read models are derived from the event log.`,
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
			return withApp(cmd, func(ctx context.Context, a *app) error {
				rows, err := a.Queries.SQL(ctx, args[0], limit)
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
