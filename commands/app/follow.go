package app

import (
	"context"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/events"
)

// followPage is how many events Follow reads from the log at a time.
const followPage = 256

// Follow hands fn every event after the global position after that match accepts, in log
// order: those already in the log, then each one appended later, until ctx ends or fn
// returns an error. A follower that stops and starts again after the last position it was
// handed sees every later event once: positions are the log's own order, read from the store
// (which shows an event only once every older append has ended, docs/storage.md), and the
// process's live feed only says when to read again. match sees the envelope (stream, type,
// position) and must be quick.
func (a *Application) Follow(ctx context.Context, after uint64, match func(events.Recorded) bool, fn func(events.Recorded) error) error {
	pos := after
	for {
		recs, err := a.Queries.Events(ctx, "", pos, followPage)
		if err != nil {
			return err
		}
		for _, rec := range recs {
			if match(rec) {
				if err := fn(rec); err != nil {
					return err
				}
			}
			pos = rec.Position
		}
		if len(recs) == followPage {
			continue
		}
		// Nothing more stored: sleep until the feed sees an event the follower wants.
		if _, err := a.Commands.ports.Feed.Wait(ctx, pos, match); err != nil {
			return err
		}
	}
}

// SessionEvents matches the events of a session's own streams: its session stream, its
// inbox (the answers to its asks), its job ledger (the jobs it delegated, and the peer and
// steering messages admitted for it), its background tasks, its MCP servers' lifecycle and, for a root session, its work
// (plan and todos). A turn's lease stream names the turn, not the session, and is left out.
func SessionEvents(sessionID string) func(events.Recorded) bool {
	own := map[string]bool{
		commands.SessionStream(sessionID):    true,
		commands.InboxStream(sessionID):      true,
		commands.JobStream(sessionID):        true,
		commands.BackgroundStream(sessionID): true,
		commands.MCPStream(sessionID):        true,
		commands.WorkStream(sessionID):       true,
	}
	return func(rec events.Recorded) bool { return own[rec.Stream] }
}

// AllEvents matches every event of the log.
func AllEvents(events.Recorded) bool { return true }
