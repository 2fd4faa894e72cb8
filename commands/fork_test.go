package commands_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/session"
	"github.com/zuno-run/zuno/domain/work"
	"github.com/zuno-run/zuno/events"
)

// loadSession folds a session stream as every reader does, and lists the streams and
// revisions it was given.
func loadSession(t *testing.T, s *stack, id string) (session.State, []string, error) {
	t.Helper()
	var st session.State
	var seen []string
	_, err := commands.Load(context.Background(), s.store, registry, commands.SessionStream(id), 0, func(r events.Recorded, p events.Payload) error {
		seen = append(seen, fmt.Sprintf("%s@%d", r.Stream, r.StreamRevision))
		return st.Evolve(p)
	})
	return st, seen, err
}

func fork(t *testing.T, s *stack, cmdID, newID, stream string, rev uint64) commands.Result {
	t.Helper()
	res, err := s.handlers.ForkSession(context.Background(), &commands.ForkSession{Meta: meta(cmdID), SessionID: newID, SourceStream: stream, SourceRevision: rev})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestForkSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "zuno.db")
	s := openStack(t, path)
	ctx := context.Background()
	send(t, s, &commands.CreateSession{Meta: meta("c1"), Create: session.Create{SessionID: "ses_src", Title: "Source", Agent: "build"}})
	for _, text := range []string{"one", "two", "three"} {
		send(t, s, &commands.AppendUserMessage{Meta: meta("m" + text), AppendUserMessage: session.AppendUserMessage{SessionID: "ses_src", MessageID: "msg_" + text, Text: text}})
	}
	srcBefore, _ := s.store.ReadStream(ctx, "session-ses_src", 0, 100)

	// The fork's history is the source's up to revision 2 (message "two"), then its own.
	res := fork(t, s, "f1", "ses_fork", "session-ses_src", 2)
	if res.Err() != nil || res.Revision != 0 {
		t.Fatalf("fork: %+v %v", res, res.Err())
	}
	send(t, s, &commands.AppendUserMessage{Meta: meta("mf"), AppendUserMessage: session.AppendUserMessage{SessionID: "ses_fork", MessageID: "msg_f", Text: "fork"}})
	st, seen, err := loadSession(t, s, "ses_fork")
	want := []string{"session-ses_src@0", "session-ses_src@1", "session-ses_src@2", "session-ses_fork@0", "session-ses_fork@1"}
	if err != nil || !equal(seen, want) || st.SessionID != "ses_fork" || st.Title != "Source (fork)" || st.MessageCount != 3 ||
		!st.HasMessage("msg_two") || st.HasMessage("msg_three") || st.ForkedFrom != "ses_src" {
		t.Fatalf("fork loads %v as %+v (%v), want %v", seen, st, err, want)
	}

	// The source is untouched: same events, same hashes.
	srcAfter, _ := s.store.ReadStream(ctx, "session-ses_src", 0, 100)
	if len(srcAfter) != len(srcBefore) || srcAfter[3].Metadata.Hash != srcBefore[3].Metadata.Hash {
		t.Fatalf("source changed: %d events, was %d", len(srcAfter), len(srcBefore))
	}
	// A retried fork command writes nothing; another fork into the same id is refused.
	if again := fork(t, s, "f1", "ses_fork", "session-ses_src", 2); again.Err() != nil || again.Revision != 0 {
		t.Fatalf("retry: %+v %v", again, again.Err())
	}
	if other := fork(t, s, "f2", "ses_fork", "session-ses_src", 1); domain.CodeOf(other.Err()) != domain.CodeSessionExists {
		t.Fatalf("fork into an existing id: %v", other.Err())
	}
	// A fork of a fork carries both histories.
	fork(t, s, "f3", "ses_fork2", "session-ses_fork", 1)
	if _, seen, err := loadSession(t, s, "ses_fork2"); err != nil || len(seen) != 6 || seen[5] != "session-ses_fork2@0" {
		t.Fatalf("fork of a fork loads %v (%v)", seen, err)
	}
	// An event of a stream that is not a session's cannot be forked from.
	send(t, s, &commands.UpdatePlan{Meta: meta("p1"), SessionID: "ses_src", Update: work.PlanUpdate{Action: "create", Title: "P", Steps: []work.StepInput{{Title: "a"}}}})
	if bad := fork(t, s, "f4", "ses_bad", "work-ses_src", 0); domain.CodeOf(bad.Err()) != domain.CodeInvalidArgument {
		t.Fatalf("fork from a work stream: %v", bad.Err())
	}
	if bad := fork(t, s, "f5", "ses_bad", "session-ses_src", 99); bad.Err() == nil {
		t.Fatal("fork past the end of the source was accepted")
	}

	// The pinned history changed behind the fork's back: loading it refuses.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, tc := range []struct{ name, sql, undo, reason string }{
		{"an event before the fork point changed", `UPDATE event_log SET data = replace(data, '"one"', '"ONE"') WHERE stream = 'session-ses_src' AND stream_revision = 1`,
			`UPDATE event_log SET data = replace(data, '"ONE"', '"one"') WHERE stream = 'session-ses_src' AND stream_revision = 1`, "revision 1 no longer matches its hash"},
		{"the fork point's hash rewritten", `UPDATE event_log SET metadata = replace(metadata, '"hash":"', '"hash":"0') WHERE stream = 'session-ses_src' AND stream_revision = 2`,
			`UPDATE event_log SET metadata = replace(metadata, '"hash":"0', '"hash":"') WHERE stream = 'session-ses_src' AND stream_revision = 2`, "revision 2 no longer matches its hash"},
		{"the fork point deleted", `DELETE FROM event_log WHERE stream = 'session-ses_src' AND stream_revision = 2`, "", "no longer in the log"},
	} {
		if _, _, err := loadSession(t, s, "ses_fork"); err != nil {
			t.Fatalf("before %s: %v", tc.name, err)
		}
		if _, err := raw.Exec(tc.sql); err != nil {
			t.Fatal(err)
		}

		_, _, err := loadSession(t, s, "ses_fork")
		var changed *commands.ForkSourceError
		if !errors.As(err, &changed) || changed.Revision != 2 || !strings.Contains(err.Error(), tc.reason) {
			t.Fatalf("%s: load = %v", tc.name, err)
		}
		if tc.undo != "" {
			raw.Exec(tc.undo)
		}
	}
}

func equal(a, b []string) bool { return slices.Equal(a, b) }
