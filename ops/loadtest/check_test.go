package loadtest_test

import (
	"strings"
	"testing"
	"time"
)

// The exactly-once check is what keeps the load test from passing on a stream that drops or
// repeats events: each way a stream can be wrong must fail it.
func TestCheckExactlyOnceRefusesWhatAStreamGetsWrong(t *testing.T) {
	at := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	ev := func(pos uint64, stream string) logEvent {
		e := logEvent{Position: pos, ID: "ev-" + string(rune('a'+pos)), Stream: stream, Type: "session.turn.started.1"}
		e.Metadata.Time = at.Add(time.Duration(pos) * time.Millisecond)
		return e
	}
	log := []logEvent{ev(1, "session-s1"), ev(2, "lease-t1"), ev(3, "session-s2"), ev(4, "inbox-s1"), ev(5, "session-s1")}
	read := func(evs ...logEvent) []received {
		var out []received
		for _, e := range evs {
			out = append(out, received{logEvent: e})
		}
		return out
	}
	moved := ev(4, "inbox-s1")
	moved.Metadata.Time = at
	cases := []struct {
		name, session string
		got           []received
		fails         string // "" when the stream is right
	}{
		{"the whole log", "", read(log...), ""},
		{"a session's own streams", "s1", read(log[0], log[3], log[4]), ""},
		{"one missing", "", read(log[0], log[1], log[3], log[4]), "event 2 read is 4"},
		{"one repeated", "", read(log[0], log[1], log[1], log[2], log[3], log[4]), "event 2 read is 2"},
		{"out of order", "", read(log[0], log[2], log[1], log[3], log[4]), "event 1 read is 3"},
		{"the last missing", "s1", read(log[0], log[3]), "read 2 events of 3"},
		{"another session's event", "s1", read(log[0], log[2], log[3], log[4]), "event 1 read is 3"},
		{"one beyond the log", "", read(append(log, ev(6, "session-s1"))...), "extra: 6"},
		{"another time", "s1", read(log[0], moved, log[4]), "event 1 read is 4"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkExactlyOnce(&sseClient{url: "/stream", session: c.session, got: c.got}, log)
			switch {
			case c.fails == "" && err != nil:
				t.Fatalf("a right stream refused: %v", err)
			case c.fails != "" && (err == nil || !strings.Contains(err.Error(), c.fails)):
				t.Fatalf("err = %v, want one naming %q", err, c.fails)
			}
		})
	}
}

// parseFrame reads the envelope and the metadata around the data, whatever the data holds:
// members named like the frame's own inside it (a tool result's "metadata") do not fool it.
func TestParseFrameSkipsTheData(t *testing.T) {
	frame := `{"position":7,"id":"e7","stream":"session-s1","revision":3,"type":"session.tool.settled.1",` +
		`"data":{"output":"a \"data\" string,\"metadata\":{}","metadata":{"time":"2000-01-01T00:00:00Z"}},` +
		`"metadata":{"commandId":"c","actor":"agent:build","time":"2026-12-02T12:00:00.123456789Z","hash":"h"}}`
	ev, err := parseFrame(frame)
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 12, 2, 12, 0, 0, 123456789, time.UTC)
	if ev.Position != 7 || ev.ID != "e7" || ev.Stream != "session-s1" || ev.Type != "session.tool.settled.1" || !ev.Metadata.Time.Equal(want) {
		t.Fatalf("parsed %+v", ev)
	}
	for _, bad := range []string{`{"position":7}`, `{"position":7,"id":"e7","data":{},"metadata":{"actor":"x"}}`, `not json`} {
		if _, err := parseFrame(bad); err == nil {
			t.Errorf("%s: parsed", bad)
		}
	}
}
