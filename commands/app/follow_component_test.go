package app_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/events"
)

// Follow hands over what the log holds after a position, then each matching event appended
// later, in log order, and stops when its context ends.
func TestComponentFollow(t *testing.T) {
	c := newComponent(t)
	ctx := context.Background()
	for _, id := range []string{"ses_f", "ses_g"} {
		if _, err := c.app.Commands.CreateSession(ctx, meta("c-"+id), app.NewSession{SessionID: id, Title: id, Agent: "build"}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := c.app.Queries.Events(ctx, commands.SessionStream("ses_f"), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	fctx, stop := context.WithCancel(ctx)
	got := make(chan events.Recorded, 16)
	done := make(chan error, 1)
	go func() {
		done <- c.app.Follow(fctx, 0, app.SessionEvents("ses_f"), func(rec events.Recorded) error {
			got <- rec
			return nil
		})
	}()
	next := func() events.Recorded {
		t.Helper()
		select {
		case rec := <-got:
			return rec
		case <-time.After(10 * time.Second):
			t.Fatal("nothing followed within 10s")
			return events.Recorded{}
		}
	}
	if rec := next(); rec.Position != first[0].Position || rec.Stream != "session-ses_f" {
		t.Fatalf("the stored event: %+v", rec)
	}
	// A later event of the other session is not handed over; the next of this one is.
	if _, err := c.app.Commands.AppendMessage(ctx, meta("m-g"), "ses_g", "msg_g", "g"); err != nil {
		t.Fatal(err)
	}
	res, err := c.app.Commands.AppendMessage(ctx, meta("m-f"), "ses_f", "msg_f", "f")
	if err != nil {
		t.Fatal(err)
	}
	if rec := next(); rec.Position != res.LastPosition || rec.Type != events.TypeUserMessageAppended {
		t.Fatalf("the live event: %+v, want position %d", rec, res.LastPosition)
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Follow ended with %v", err)
	}
	// Started after a position, it begins after it; an error of fn ends it with that error.
	var all []events.Recorded
	enough := errors.New("enough")
	err = c.app.Follow(ctx, first[0].Position, app.AllEvents, func(rec events.Recorded) error {
		all = append(all, rec)
		if len(all) == 3 {
			return enough
		}
		return nil
	})
	if !errors.Is(err, enough) || len(all) != 3 || all[0].Position <= first[0].Position || all[1].Position <= all[0].Position ||
		all[2].Position != res.LastPosition {
		t.Fatalf("after %d: %v %+v", first[0].Position, err, all)
	}
}
