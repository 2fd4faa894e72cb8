package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"time"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/commands/queries"
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

// followPoll is how often events read --follow looks for new events.
const followPoll = 200 * time.Millisecond

// eventsRead is one zuno events read: where it reads from and how it prints.
type eventsRead struct {
	stream    string
	from      uint64
	limit     int
	format    string
	sensitive bool
	follow    bool
}

func newEventsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "events", Short: "Read the event log"}
	read := &cobra.Command{
		Use:   "read [--stream S] [--from P] [--limit N] [--follow] [--show-sensitive] [--format json|table]",
		Short: "Print events: the whole log after a position, or one stream from a revision",
		Long: `Prints the log's events after --from (a global position), or one --stream's from a revision.
A prompt receipt's section content and system and developer text are shown as <redacted>,
as zuno debug prompt shows them, unless --show-sensitive; ids, digests and sizes are always
shown. --follow keeps printing events as they are appended until interrupted (or until
--limit events were printed).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var r eventsRead
			var err error
			if r.format, err = getFormat(cmd); err != nil {
				return err
			}
			r.stream, _ = cmd.Flags().GetString("stream")
			r.from, _ = cmd.Flags().GetUint64("from")
			r.limit, _ = cmd.Flags().GetInt("limit")
			r.sensitive, _ = cmd.Flags().GetBool("show-sensitive")
			r.follow, _ = cmd.Flags().GetBool("follow")
			if r.limit <= 0 {
				r.limit = math.MaxInt32
			}
			return withApp(cmd, func(ctx context.Context, a *app) error {
				return r.run(ctx, a, cmd.OutOrStdout())
			})
		},
	}
	addFormatFlag(read, "table")
	read.Flags().String("stream", "", "read only this stream (e.g. session-ses_…); --from is then a stream revision")
	read.Flags().Uint64("from", 0, "without --stream: events after this global position; with it: from this revision")
	read.Flags().Int("limit", 0, "at most this many events (0: all)")
	read.Flags().Bool("follow", false, "keep printing events as they are appended, until interrupted or --limit events were printed")
	read.Flags().Bool("show-sensitive", false, "show prompt receipts' section content and host instructions (do not paste them publicly)")
	cmd.AddCommand(readOnly(read))
	return cmd
}

// run prints what the log holds, then, with --follow, what is appended after it. A table is
// printed in batches (each batch's columns aligned on its own).
func (r eventsRead) run(ctx context.Context, a *app, out io.Writer) error {
	from, printed := r.from, 0
	for batch := 0; ; batch++ {
		recs, err := a.Queries.Events(ctx, r.stream, from, r.limit-printed)
		var none *queries.NotFoundError
		switch {
		case err == nil:
		case r.follow && errors.As(err, &none):
			// a stream that has no events yet: --follow waits for its first
		case r.follow && ctx.Err() != nil:
		default:
			return err
		}
		if err := r.print(out, recs, batch == 0); err != nil {
			return err
		}
		printed += len(recs)
		if n := len(recs); n > 0 {
			// Global positions are read after from; a stream's revisions from it.
			from = recs[n-1].Position
			if r.stream != "" {
				from = recs[n-1].StreamRevision + 1
			}
		}
		if !r.follow || printed >= r.limit {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil // interrupted: what was appended so far has been printed
		case <-time.After(followPoll):
		}
	}
}

// print writes one batch; a table's header only when the batch has events, or is the first.
func (r eventsRead) print(out io.Writer, recs []events.Recorded, first bool) error {
	data := func(rec events.Recorded) json.RawMessage {
		if r.sensitive {
			return rec.Data
		}
		return queries.RedactEvent(rec.Type, rec.Data)
	}
	if r.format == "json" {
		enc := json.NewEncoder(out) // one event per line
		enc.SetEscapeHTML(false)    // the log's text as written: <redacted>, a -> b
		for _, rec := range recs {
			if err := enc.Encode(eventOut{rec.Position, rec.ID, rec.Stream, rec.StreamRevision, rec.Type, data(rec), rec.Metadata}); err != nil {
				return err
			}
		}
		return nil
	}
	if len(recs) == 0 && !first {
		return nil
	}
	rows := make([][]any, len(recs))
	for i, rec := range recs {
		rows[i] = []any{rec.Position, rec.Stream, rec.StreamRevision, rec.Type, rec.Metadata.Actor, string(data(rec))}
	}
	return writeTable(out, []string{"POSITION", "STREAM", "REV", "TYPE", "ACTOR", "DATA"}, rows)
}
