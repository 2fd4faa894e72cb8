package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/zuno-run/zuno/adapters/pgtest"
	"github.com/zuno-run/zuno/events"
)

// SubscribeHeaders hands the live feed each event's envelope in log order, the same positions,
// ids, streams, revisions and types Subscribe hands, and none of the content.
func TestSubscribeHeadersIsSubscribeWithoutContent(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) *Store{
		"sqlite":   func(t *testing.T) *Store { return openSQLite(t, sqliteFile(t)) },
		"postgres": func(t *testing.T) *Store { return openPostgres(t, pgtest.NewDatabase(t)) },
	} {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			defer s.Close()
			ctx := context.Background()
			for i := range 5 {
				stream := fmt.Sprintf("s-%d", i%2)
				ev := events.Event{ID: events.DeriveID(fmt.Sprint("h/", i), 0), Type: "test.happened.1", Data: []byte(`{"n":1}`),
					Metadata: events.Metadata{CommandID: "c"}}
				if _, err := s.Append(ctx, stream, events.Any, ev); err != nil {
					t.Fatal(err)
				}
			}
			collect := func(sub func(context.Context, uint64, func(events.Recorded) error) error) []events.Recorded {
				var got []events.Recorded
				stop := errors.New("enough")
				err := sub(ctx, 1, func(r events.Recorded) error {
					got = append(got, r)
					if len(got) == 4 {
						return stop
					}
					return nil
				})
				if !errors.Is(err, stop) {
					t.Fatal(err)
				}
				return got
			}
			whole, heads := collect(s.Subscribe), collect(s.SubscribeHeaders)
			for i := range whole {
				w, h := whole[i], heads[i]
				if h.Position != w.Position || h.ID != w.ID || h.Stream != w.Stream || h.StreamRevision != w.StreamRevision || h.Type != w.Type {
					t.Errorf("envelope %d: %+v, want that of %+v", i, h, w)
				}
				if h.Data != nil || h.Metadata.CommandID != "" || w.Data == nil {
					t.Errorf("envelope %d carries content (%s, %+v), or the whole event does not", i, h.Data, h.Metadata)
				}
			}
		})
	}
}
