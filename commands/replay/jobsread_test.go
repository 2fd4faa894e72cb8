package replay

import (
	"context"
	"testing"

	"github.com/zuno-run/zuno/adapters/eventstore/memstore"
	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/events"
)

// A replayed turn reads the session's job stream as the next recorded prompt says its run
// had read it (jobsRead), whatever the log's order around the replay's point: a child's
// settlement or a peer's message can land between the parent's read and its next event.
// A receipt without the record read none (this build omits 0; older builds showed no jobs).
func TestJobStreamReadsAsTheRecordedPrompt(t *testing.T) {
	ctx := context.Background()
	log := memstore.New()
	stream := commands.JobStream("s")
	var last uint64
	for i := range 3 {
		ev, err := events.Encode(events.DeriveID("jobs", i), events.InboxMessageAdmitted{InputID: "in"}, events.Metadata{CommandID: "c"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := log.Append(ctx, stream, events.Any, ev)
		if err != nil {
			t.Fatal(err)
		}
		last = res.LastPosition
	}
	for _, tc := range []struct {
		name   string
		cutoff uint64
		reads  []recordedRead
		want   int
	}{
		{"the run had read one, the log holds three before the point", last + 1, []recordedRead{{position: last + 5, read: 1}}, 1},
		{"the run had read none", last + 1, []recordedRead{{position: last + 5, read: 0}}, 0},
		{"the run had read all three, the point is before them", 1, []recordedRead{{position: last + 5, read: 3}}, 3},
		{"an earlier prompt is behind the point: the next one counts", last + 1, []recordedRead{{position: 1, read: 0}, {position: last + 5, read: 2}}, 2},
		{"no record: none read", last, []recordedRead{{position: last + 5}}, 0},
		{"no later prompt: the cutoff", last + 1, nil, 3},
	} {
		st := &store{log: log, stream: "session-s", cutoff: tc.cutoff, jobStream: stream, jobsRead: tc.reads}
		recs, err := st.ReadStream(ctx, stream, 0, 100)
		if err != nil || len(recs) != tc.want {
			t.Errorf("%s: %d events (%v), want %d", tc.name, len(recs), err, tc.want)
		}
	}
}
