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
	"github.com/zuno-run/zuno/faces/httpapi"
)

// A client that reconnects with Last-Event-ID at random points of a 1,000-event session,
// while the session is still being written, sees each of its events exactly once, in log
// order, and none of another session's.
func TestSSEResumesWithoutSkipOrRepeat(t *testing.T) {
	f := newFixture(t, options{tokens: map[string]string{"watcher": "watcher-token-0123456789"}})
	ctx := context.Background()
	const messages = 999 // with session.created.1: 1,000 events
	sid, noise := "ses_sse", "ses_noise"
	for _, id := range []string{sid, noise} {
		if _, err := f.app.Commands.CreateSession(ctx, meta("create-"+id), app.NewSession{SessionID: id, Title: id, Agent: "build"}); err != nil {
			t.Fatal(err)
		}
	}
	written := make(chan error, 1)
	began := time.Now()
	go func() {
		for i := range messages {
			if _, err := f.app.Commands.AppendMessage(ctx, meta(fmt.Sprintf("m-%d", i)), sid, fmt.Sprintf("msg_%d", i), "m"); err != nil {
				written <- err
				return
			}
			if i%7 == 0 {
				if _, err := f.app.Commands.AppendMessage(ctx, meta(fmt.Sprintf("n-%d", i)), noise, fmt.Sprintf("msg_%d", i), "n"); err != nil {
					written <- err
					return
				}
			}
		}
		written <- nil
	}()

	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[uint64]int{}
	var order []uint64
	last, reconnects := "", 0
	for len(order) < messages+1 {
		cctx, cancel := context.WithCancel(ctx)
		stream, res := f.openStream(cctx, "/api/sessions/"+sid+"/events", last)
		if res.StatusCode != 200 {
			t.Fatalf("stream: %d", res.StatusCode)
		}
		for range 1 + rng.IntN(40) {
			ev, ok := recvTimeout(t, stream)
			if !ok {
				break
			}
			var e struct {
				Position uint64
				Stream   string
			}
			if err := json.Unmarshal([]byte(ev.data), &e); err != nil {
				t.Fatal(err)
			}
			if strconv.FormatUint(e.Position, 10) != ev.id || e.Stream != commands.SessionStream(sid) {
				t.Fatalf("event id %s, data %s", ev.id, ev.data)
			}
			seen[e.Position]++
			order = append(order, e.Position)
			last = ev.id
			if len(order) == messages+1 {
				break
			}
		}
		cancel()
		reconnects++
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	t.Logf("the client had every event %v after the writes began", time.Since(began))
	recs, err := f.app.Queries.Events(ctx, commands.SessionStream(sid), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != messages+1 || len(order) != len(recs) {
		t.Fatalf("the session has %d events; the client saw %d", len(recs), len(order))
	}
	for i, r := range recs {
		if order[i] != r.Position || seen[r.Position] != 1 {
			t.Fatalf("event %d: saw position %d (%d times), the log has %d", i, order[i], seen[r.Position], r.Position)
		}
	}
	t.Logf("%d events over %d connections", len(order), reconnects)
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
		t.Fatal("no event within 10s")
		return sseEvent{}, false
	}
}

func meta(id string) commands.Meta { return commands.Meta{CommandID: id, Actor: "test"} }
