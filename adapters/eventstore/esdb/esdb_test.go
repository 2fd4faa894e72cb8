package esdb

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/zuno-run/zuno/adapters/eventstore/storetest"
	"github.com/zuno-run/zuno/events"
)

var _ storetest.Store = (*Store)(nil)

func TestConformance(t *testing.T) {
	url := os.Getenv("ZUNO_TEST_ESDB_URL")
	if url == "" {
		t.Skip("ZUNO_TEST_ESDB_URL not set: EventStoreDB conformance suite needs a running server (see ops/esdb/compose.yaml)")
	}
	storetest.Run(t, func(t *testing.T) storetest.Store {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := Open(ctx, url)
		if err != nil {
			t.Fatalf("Open(%q): %v", url, err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, storetest.NoGlobalEventIDIndex)
}

func TestToExpected(t *testing.T) {
	tests := []struct {
		in   events.ExpectedRevision
		want esdb.ExpectedRevision
	}{
		{events.Any, esdb.Any{}},
		{events.NoStream, esdb.NoStream{}},
		{events.StreamExists, esdb.StreamExists{}},
		{events.Exact(0), esdb.Revision(0)},
		{events.Exact(41), esdb.Revision(41)},
	}
	for _, tt := range tests {
		if got := toExpected(tt.in); got != tt.want {
			t.Errorf("toExpected(%v) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}

func TestAppendRejectsWhatEventStoreDBCannotStore(t *testing.T) {
	valid := events.Event{ID: events.DeriveID("cmd-1", 0), Type: "session.created.1", Data: json.RawMessage(`{}`)}
	withID := func(id string) events.Event { ev := valid; ev.ID = id; return ev }
	tests := []struct {
		name   string
		stream string
		ev     events.Event
	}{
		{"not a uuid", "session-1", withID("cmd-1/0")},
		{"upper case uuid", "session-1", withID(strings.ToUpper(valid.ID))},
		{"braced uuid", "session-1", withID("{" + valid.ID + "}")},
		{"nil uuid", "session-1", withID("00000000-0000-0000-0000-000000000000")},
		{"system stream", "$session-1", valid},
		{"invalid type", "session-1", events.Event{ID: valid.ID, Type: "Created", Data: json.RawMessage(`{}`)}},
	}
	// No client: every case must be refused before the server is asked.
	s := &Store{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Append(context.Background(), tt.stream, events.Any, tt.ev)
			var invalid *events.InvalidAppendError
			if !errors.As(err, &invalid) {
				t.Fatalf("Append = %v, want *events.InvalidAppendError", err)
			}
		})
	}
}

func TestToEventDataKeepsIdentity(t *testing.T) {
	ev := events.Event{
		ID:   events.DeriveID("cmd-1", 0),
		Type: "session.created.1",
		Data: json.RawMessage(`{"title":"x"}`),
		Metadata: events.Metadata{CommandID: "cmd-1", Actor: "user",
			Time: time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)},
	}
	got, err := toEventData("session-1", []events.Event{ev})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].EventID.String() != ev.ID || got[0].EventType != ev.Type ||
		got[0].ContentType != esdb.ContentTypeJson || string(got[0].Data) != string(ev.Data) {
		t.Fatalf("toEventData = %+v", got[0])
	}

	rec, err := toRecorded(&esdb.ResolvedEvent{Event: &esdb.RecordedEvent{
		EventID:      got[0].EventID,
		EventType:    got[0].EventType,
		StreamID:     "session-1",
		EventNumber:  3,
		Position:     esdb.Position{Commit: 1234, Prepare: 1234},
		Data:         got[0].Data,
		UserMetadata: got[0].Metadata,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !rec.SameContent(ev) || !rec.Metadata.Time.Equal(ev.Metadata.Time) || rec.Metadata.CommandID != "cmd-1" ||
		rec.Stream != "session-1" || rec.StreamRevision != 3 || rec.Position != 1234 {
		t.Fatalf("round trip = %+v, want %+v", rec, ev)
	}
}

func TestCommitPosition(t *testing.T) {
	commit := uint64(77)
	unknown := uint64(math.MaxUint64)
	tests := []struct {
		name   string
		re     esdb.ResolvedEvent
		want   uint64
		wantOK bool
	}{
		{"from event", esdb.ResolvedEvent{Event: &esdb.RecordedEvent{Position: esdb.Position{Commit: 10, Prepare: 10}}}, 10, true},
		{"from read response", esdb.ResolvedEvent{Event: &esdb.RecordedEvent{Position: esdb.Position{Commit: unknown, Prepare: unknown}}, Commit: &commit}, 77, true},
		{"server too old", esdb.ResolvedEvent{Event: &esdb.RecordedEvent{Position: esdb.Position{Commit: unknown, Prepare: unknown}}}, 0, false},
		{"both unknown", esdb.ResolvedEvent{Event: &esdb.RecordedEvent{Position: esdb.Position{Commit: unknown}}, Commit: &unknown}, 0, false},
	}
	for _, tt := range tests {
		got, ok := commitPosition(&tt.re)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: commitPosition = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestIsSystem(t *testing.T) {
	tests := []struct {
		stream, typ string
		want        bool
	}{
		{"session-1", "session.created.1", false},
		{"$$session-1", "$metadata", true},
		{"$ce-session", "$>", true},
		{"$stats-127.0.0.1:2113", "$statsCollected", true},
		{"session-1", "$>", true},
	}
	for _, tt := range tests {
		re := &esdb.ResolvedEvent{Event: &esdb.RecordedEvent{StreamID: tt.stream, EventType: tt.typ}}
		if got := isSystem(re); got != tt.want {
			t.Errorf("isSystem(%q, %q) = %v, want %v", tt.stream, tt.typ, got, tt.want)
		}
	}
}

func TestAllPosition(t *testing.T) {
	if got := allPosition(0); got != (esdb.Start{}) {
		t.Errorf("allPosition(0) = %#v, want Start", got)
	}
	if got := allPosition(512); got != (esdb.Position{Commit: 512, Prepare: 512}) {
		t.Errorf("allPosition(512) = %#v", got)
	}
}

func TestOpenDoesNotRepeatThePassword(t *testing.T) {
	_, err := Open(context.Background(), "esdb://admin:s3cret@bad host:2113?tls=false")
	if err == nil {
		t.Fatal("Open accepted a malformed connection string")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("error repeats the password: %v", err)
	}
}

func TestClosedStore(t *testing.T) {
	s := &Store{closed: true}
	ctx := context.Background()
	if _, err := s.ReadAll(ctx, 0, 10); !errors.Is(err, ErrClosed) {
		t.Errorf("ReadAll = %v, want ErrClosed", err)
	}
	if _, err := s.LastPosition(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("LastPosition = %v, want ErrClosed", err)
	}
	if err := s.Subscribe(ctx, 0, func(events.Recorded) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Subscribe = %v, want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}
