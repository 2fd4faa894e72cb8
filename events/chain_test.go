package events_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/events"
)

// chainOf seals n events of stream s at positions first, first+1, …
func chainOf(t *testing.T, s string, n int, first uint64) []events.Recorded {
	t.Helper()
	evs := make([]events.Event, n)
	for i := range evs {
		evs[i] = events.Event{ID: events.DeriveID(s, i), Type: "test.happened.1", Data: json.RawMessage(`{"i":` + string(rune('0'+i)) + `}`),
			Metadata: events.Metadata{CommandID: s, Actor: "user", Time: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}}
	}
	sealed, err := events.Seal(s, "", 0, evs)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]events.Recorded, n)
	for i, ev := range sealed {
		out[i] = events.Recorded{Event: ev, Stream: s, StreamRevision: uint64(i), Position: first + uint64(i)}
	}
	return out
}

func TestBodyDigestCoversEveryField(t *testing.T) {
	base := chainOf(t, "s", 1, 1)[0]
	want, _ := events.BodyDigest("s", base.Event)
	for name, change := range map[string]func(*events.Event) string{
		"id":       func(e *events.Event) string { e.ID = events.DeriveID("x", 0); return "s" },
		"stream":   func(e *events.Event) string { return "t" },
		"type":     func(e *events.Event) string { e.Type = "test.other.1"; return "s" },
		"data":     func(e *events.Event) string { e.Data = json.RawMessage(`{"i":1}`); return "s" },
		"data ws":  func(e *events.Event) string { e.Data = json.RawMessage(`{"i": 0}`); return "s" },
		"actor":    func(e *events.Event) string { e.Metadata.Actor = "host"; return "s" },
		"time":     func(e *events.Event) string { e.Metadata.Time = e.Metadata.Time.Add(time.Nanosecond); return "s" },
		"causes":   func(e *events.Event) string { e.Metadata.CausationID = "c"; return "s" },
		"boundary": func(e *events.Event) string { e.Type = "test.happened.1s"; return "" }, // length prefixes: no shifting bytes between fields
	} {
		ev := base.Event
		stream := change(&ev)
		got, _ := events.BodyDigest(stream, ev)
		if got == want {
			t.Errorf("%s: digest unchanged", name)
		}
	}
	withHash := base.Event
	withHash.Metadata.Hash = "anything"
	if got, _ := events.BodyDigest("s", withHash); got != want {
		t.Error("the hash itself is part of the digest")
	}
}

// A store that keeps what SealPrepared returns must read back the metadata Seal sealed, byte
// for byte as json.Marshal writes it, with the same hashes.
func TestSealPreparedIsTheMetadataJSON(t *testing.T) {
	evs := []events.Event{
		{ID: events.DeriveID("c", 0), Type: "test.happened.1", Data: json.RawMessage(`{}`),
			Metadata: events.Metadata{CommandID: "c", Actor: "user", Hash: "stale"}},
		{ID: events.DeriveID("c", 1), Type: "test.happened.1", Data: json.RawMessage(`{"a":"<\u0026>"}`),
			Metadata: events.Metadata{CommandID: "c\"<&>", CommandDigest: "d", CausationID: "x", CorrelationID: "y",
				Actor: "agent", Time: time.Date(2026, 12, 1, 1, 2, 3, 4, time.FixedZone("", 3600))}},
	}
	want, err := events.Seal("s", "prev", 7, evs)
	if err != nil {
		t.Fatal(err)
	}
	pre, err := events.PrepareSeal("s", evs)
	if err != nil {
		t.Fatal(err)
	}
	got, encoded := events.SealPrepared("prev", 7, evs, pre)
	for i := range evs {
		if got[i].Metadata != want[i].Metadata {
			t.Errorf("event %d: sealed %+v, Seal gives %+v", i, got[i].Metadata, want[i].Metadata)
		}
		marshalled, _ := json.Marshal(want[i].Metadata)
		if string(encoded[i]) != string(marshalled) {
			t.Errorf("event %d: encoded %s, json.Marshal gives %s", i, encoded[i], marshalled)
		}
	}
	if evs[0].Metadata.Hash != "stale" {
		t.Error("the caller's events were changed")
	}
}

func TestChainWalker(t *testing.T) {
	type row struct {
		name     string
		genesis  uint64
		recs     func() []events.Recorded
		anchored []events.StreamHead
		kind     string
		pos, rev uint64
	}
	c := func() []events.Recorded { return chainOf(t, "s", 5, 1) }
	legacy := func() []events.Recorded {
		r := c()
		r[0].Metadata.Hash, r[1].Metadata.Hash = "", ""
		// the store chains the first hashed event after unhashed ones from ""
		body, _ := events.BodyDigest("s", r[2].Event)
		r[2].Metadata.Hash = events.Link("", 2, body)
		for i := 3; i < 5; i++ {
			body, _ := events.BodyDigest("s", r[i].Event)
			r[i].Metadata.Hash = events.Link(r[i-1].Metadata.Hash, uint64(i), body)
		}
		return r
	}
	heads := func() []events.StreamHead {
		r := c()
		return []events.StreamHead{{Stream: "s", Revision: 4, Hash: r[4].Metadata.Hash}}
	}
	cases := []row{
		{name: "intact", recs: c},
		{name: "first event deleted", recs: func() []events.Recorded { return c()[1:] }, kind: events.FaultMissing, pos: 2, rev: 0},
		{name: "hash field edited", recs: func() []events.Recorded { r := c(); r[2].Metadata.Hash = r[1].Metadata.Hash; return r }, kind: events.FaultAltered, pos: 3, rev: 2},
		{name: "revisions and positions disagree", recs: func() []events.Recorded { r := c(); r[3].Position = 2; return r }, kind: events.FaultReordered, pos: 2, rev: 3},
		{name: "events older than the chain, within genesis", genesis: 2, recs: legacy},
		{name: "unhashed events beyond genesis", genesis: 1, recs: legacy, kind: events.FaultUnchained, pos: 2, rev: 1},
		{name: "anchor matches", recs: c, anchored: heads()},
		{name: "tail deleted, anchored", recs: func() []events.Recorded { return c()[:3] }, anchored: heads(), kind: events.FaultTruncated, pos: 3, rev: 3},
		{name: "whole stream deleted, anchored", recs: func() []events.Recorded { return nil }, anchored: heads(), kind: events.FaultTruncated, pos: 0, rev: 4},
		{name: "anchored head replaced", recs: c, anchored: []events.StreamHead{{Stream: "s", Revision: 4, Hash: "00"}}, kind: events.FaultAnchorMismatch, pos: 5, rev: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := events.NewChainWalker(tc.genesis, tc.anchored)
			for _, r := range tc.recs() {
				w.Add(r)
			}
			faults := w.Faults()
			if tc.kind == "" {
				if len(faults) != 0 {
					t.Fatalf("faults %+v", faults)
				}
				return
			}
			if len(faults) != 1 || faults[0].Kind != tc.kind || faults[0].Position != tc.pos || faults[0].Revision != tc.rev {
				t.Fatalf("faults %+v, want %s at position %d revision %d", faults, tc.kind, tc.pos, tc.rev)
			}
		})
	}
}

// BenchmarkSeal is the hashing an append adds per event (body digest and link), for an event
// the size of a user message; compare with BenchmarkAppend in adapters/eventstore/sqlstore.
func BenchmarkSeal(b *testing.B) {
	ev := events.Event{ID: events.DeriveID("bench", 0), Type: "session.user_message.appended.1",
		Data:     json.RawMessage(`{"sessionId":"ses_bench","messageId":"msg","text":"` + strings.Repeat("x", 120) + `"}`),
		Metadata: events.Metadata{CommandID: "c", Actor: "user", Time: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}}
	evs := []events.Event{ev}
	for range b.N {
		if _, err := events.Seal("session-ses_bench", "", 0, evs); err != nil {
			b.Fatal(err)
		}
	}
}
