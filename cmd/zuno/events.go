package main

import (
	"context"
	"encoding/json"
	"math"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/events"
)

// eventOut is one event as `zuno events read` prints it.
type eventOut struct {
	Position uint64          `json:"position"`
	ID       string          `json:"id"`
	Stream   string          `json:"stream"`
	Revision uint64          `json:"revision"`
	Type     string          `json:"type"`
	Data     json.RawMessage `json:"data"`
	Metadata events.Metadata `json:"metadata"`
}

func newEventsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "events", Short: "Read the event log"}
	read := &cobra.Command{
		Use:   "read [--stream S] [--from P] [--limit N] [--format json|table]",
		Short: "Print events: the whole log after a position, or one stream from a revision",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			stream, _ := cmd.Flags().GetString("stream")
			from, _ := cmd.Flags().GetUint64("from")
			limit, _ := cmd.Flags().GetInt("limit")
			if limit <= 0 {
				limit = math.MaxInt32
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				recs, err := a.Queries.Events(ctx, stream, from, limit)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if format == "json" {
					enc := json.NewEncoder(out) // one event per line
					for _, r := range recs {
						if err := enc.Encode(eventOut{r.Position, r.ID, r.Stream, r.StreamRevision, r.Type, r.Data, r.Metadata}); err != nil {
							return err
						}
					}
					return nil
				}
				rows := make([][]any, len(recs))
				for i, r := range recs {
					rows[i] = []any{r.Position, r.Stream, r.StreamRevision, r.Type, r.Metadata.Actor, string(r.Data)}
				}
				return writeTable(out, []string{"POSITION", "STREAM", "REV", "TYPE", "ACTOR", "DATA"}, rows)
			})
		},
	}
	addFormatFlag(read, "table")
	read.Flags().String("stream", "", "read only this stream (e.g. session-ses_…); --from is then a stream revision")
	read.Flags().Uint64("from", 0, "without --stream: events after this global position; with it: from this revision")
	read.Flags().Int("limit", 0, "at most this many events (0: all)")
	cmd.AddCommand(readOnly(read))
	return cmd
}
