package commands

import (
	"context"

	"github.com/zuno-run/zuno/domain/anchoring"
	"github.com/zuno-run/zuno/events"
)

// AnchorStream is the log's record of its anchors (events.LogAnchored; docs/storage.md,
// "Anchors").
const AnchorStream = "anchors"

// RecordAnchor records the anchor `zuno verify --anchor` is about to write.
type RecordAnchor struct {
	Meta
	anchoring.Record
}

// RecordAnchor handles RecordAnchor; its view is the log's record after it.
func (h *Handlers) RecordAnchor(ctx context.Context, c *RecordAnchor) (Result, error) {
	x := execution[*anchoring.State]{meta: c.Meta, stream: AnchorStream,
		newState: func() *anchoring.State { return &anchoring.State{} },
		decide:   func(s *anchoring.State) ([]events.Payload, error) { return anchoring.Decide(*s, c.Record) }}
	return handle(ctx, h, "RecordAnchor", x, c.Record, func(s *anchoring.State) any { return *s }), nil
}
