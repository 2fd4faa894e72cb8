package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/events"
	"github.com/zuno-run/zuno/faces/httpapi"
)

// A client that reconnects with Last-Event-ID at random points of a 1,000-event session,
// while the session is still being written, sees each of its events exactly once, in log
// order, and none of another session's.
func TestSSEResumesWithoutSkipOrRepeat(t *testing.T) { dialects(t, testSSEResumes) }

func testSSEResumes(t *testing.T, postgres bool) {
	f := newFixture(t, options{tokens: map[string]string{"watcher": "watcher-token-0123456789"}, postgres: postgres})
	ctx := context.Background()
	const messages = 999 // with session.created.1: 1,000 events
	sid, noise := "ses_sse", "ses_noise"
	for _, id := range []string{sid, noise} {
		if _, err := f.app.Commands.CreateSession(ctx, meta("create-"+id), app.NewSession{SessionID: id, Title: id, Agent: "build"}); err != nil {
			t.Fatal(err)
		}
	}
	// The session's messages, and beside them another writer's, so appends commit out of
	// position order (on Postgres a position may become visible after a later one).
	written := make(chan error, 2)
	began := time.Now()
	write := func(session, prefix string, n int) {
		for i := range n {
			if _, err := f.app.Commands.AppendMessage(ctx, meta(fmt.Sprintf("%s-%d", prefix, i)), session, fmt.Sprintf("msg_%d", i), prefix); err != nil {
				written <- err
				return
			}
		}
		written <- nil
	}
	go write(sid, "m", messages)
	go write(noise, "n", messages/3)

	// Two clients at once: one on the session's stream, one on the whole log's, each
	// reconnecting at random points with the last id it saw.
	total := messages + 1 + messages/3 + 1
	type seen struct {
		order      []uint64
		reconnects int
	}
	all := make(chan seen, 1)
	go func() {
		order, n := f.followReconnecting(t, "/api/events", total, 3, nil)
		all <- seen{order, n}
	}()
	order, reconnects := f.followReconnecting(t, "/api/sessions/"+sid+"/events", messages+1, 1, func(stream string) bool {
		return stream == commands.SessionStream(sid)
	})
	for range 2 {
		if err := <-written; err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("the session's client had every event %v after the writes began, over %d connections", time.Since(began), reconnects)
	sessionRecs, err := f.app.Queries.Events(ctx, commands.SessionStream(sid), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, "the session's stream", order, sessionRecs)
	whole := <-all
	logRecs, err := f.app.Queries.Events(ctx, "", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	exactlyOnce(t, "the whole log's stream", whole.order, logRecs)
	t.Logf("the log's client: %d events over %d connections", len(whole.order), whole.reconnects)
}

// followReconnecting reads path's stream until it has want events, dropping the connection
// after a random number of events and reconnecting with the last id seen. own, when set,
// says which streams the events may come from.
func (f *fixture) followReconnecting(t *testing.T, path string, want int, seed uint64, own func(string) bool) ([]uint64, int) {
	rng := rand.New(rand.NewPCG(seed, 2))
	var order []uint64
	last, connections := "", 0
	for len(order) < want {
		ctx, cancel := context.WithCancel(context.Background())
		stream, res := f.openStream(ctx, path, last)
		if res.StatusCode != 200 {
			t.Errorf("%s: %d", path, res.StatusCode)
			cancel()
			return order, connections
		}
		connections++
		got := 0
		for range 1 + rng.IntN(40) {
			ev, ok := recvTimeout(t, stream)
			if !ok {
				break
			}
			got++
			var e struct {
				Position uint64
				Stream   string
			}
			if err := json.Unmarshal([]byte(ev.data), &e); err != nil || strconv.FormatUint(e.Position, 10) != ev.id ||
				own != nil && !own(e.Stream) {
				t.Errorf("%s: event id %s, data %s (%v)", path, ev.id, ev.data, err)
			}
			order = append(order, e.Position)
			last = ev.id
			if len(order) == want {
				break
			}
		}
		cancel()
		if got == 0 {
			t.Errorf("%s: a connection brought nothing", path)
			return order, connections
		}
	}
	return order, connections
}

// exactlyOnce fails unless a client saw the events of recs, each once, in log order.
func exactlyOnce(t *testing.T, what string, order []uint64, recs []events.Recorded) {
	t.Helper()
	if len(order) != len(recs) {
		t.Fatalf("%s: the log has %d events; the client saw %d", what, len(recs), len(order))
	}
	for i, r := range recs {
		if order[i] != r.Position {
			t.Fatalf("%s: event %d: saw position %d, the log has %d", what, i, order[i], r.Position)
		}
	}
}

// The stream of all sessions resumes the same way, from a position given as after=N too.
func TestSSEAllSessions(t *testing.T) {
	f := newFixture(t, options{})
	ctx := context.Background()
	for i := range 3 {
		id := fmt.Sprintf("ses_all_%d", i)
		if _, err := f.app.Commands.CreateSession(ctx, meta("c-"+id), app.NewSession{SessionID: id, Title: id, Agent: "build"}); err != nil {
			t.Fatal(err)
		}
	}
	all, err := f.app.Queries.Events(ctx, "", 0, 0)
	if err != nil || len(all) != 3 {
		t.Fatalf("%d events, %v", len(all), err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, _ := f.openStream(cctx, "/api/events?after="+strconv.FormatUint(all[0].Position, 10), "")
	for _, want := range all[1:] {
		ev, ok := recvTimeout(t, stream)
		if !ok || ev.id != strconv.FormatUint(want.Position, 10) {
			t.Fatalf("got %+v, want position %d", ev, want.Position)
		}
	}
	// A live event arrives on the open stream.
	if _, err := f.app.Commands.CreateSession(ctx, meta("c-live"), app.NewSession{SessionID: "ses_live", Title: "live", Agent: "build"}); err != nil {
		t.Fatal(err)
	}
	if ev, ok := recvTimeout(t, stream); !ok || !contains(ev.data, "ses_live") {
		t.Fatalf("live event: %+v", ev)
	}
	if r := f.do("GET", "/api/events", "", "Last-Event-ID", "x1"); r.status != 400 || r.code() != "bad_last_event_id" {
		t.Fatalf("bad Last-Event-ID: %d %s", r.status, r.body)
	}
	if r := f.do("GET", "/api/sessions/ses_none/events", ""); r.status != 404 {
		t.Fatalf("stream of no session: %d %s", r.status, r.body)
	}
}

// A stream outlives the server's read and write timeouts, which bound ordinary requests, and
// sends a keep-alive while idle.
func TestSSEOutlivesRequestTimeouts(t *testing.T) {
	f := newFixture(t, options{cfg: func(c *httpapi.Config) {
		c.ReadTimeout, c.WriteTimeout, c.Heartbeat = 300*time.Millisecond, 300*time.Millisecond, 100*time.Millisecond
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, _ := f.openStream(ctx, "/api/events", "")
	time.Sleep(time.Second)
	if _, err := f.app.Commands.CreateSession(ctx, meta("late"), app.NewSession{SessionID: "ses_late", Title: "late", Agent: "build"}); err != nil {
		t.Fatal(err)
	}
	if ev, ok := recvTimeout(t, stream); !ok || !contains(ev.data, "ses_late") {
		t.Fatalf("after the timeouts: %+v %v", ev, ok)
	}
}

func recvTimeout(t *testing.T, c <-chan sseEvent) (sseEvent, bool) {
	t.Helper()
	select {
	case ev, ok := <-c:
		return ev, ok
	case <-time.After(10 * time.Second):
		t.Error("no event within 10s") // not Fatal: followReconnecting calls this on a goroutine of its own
		return sseEvent{}, false
	}
}

func meta(id string) commands.Meta { return commands.Meta{CommandID: id, Actor: "test"} }
