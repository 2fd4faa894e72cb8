package events

import (
	"fmt"
	"sort"
)

// Kinds of chain fault, in the words `zuno verify` reports them (docs/storage.md).
const (
	// FaultAltered: the event's hash does not match its content and predecessor; it was
	// changed, or an event before it was removed, inserted or moved.
	FaultAltered = "altered"
	// FaultMissing: a stream revision is absent (an event was deleted).
	FaultMissing = "missing"
	// FaultReordered: revisions and global positions disagree on the order.
	FaultReordered = "reordered"
	// FaultUnchained: the event has no hash but was written after the chain began.
	FaultUnchained = "unchained"
	// FaultTruncated: the stream ends before the revision an anchor recorded.
	FaultTruncated = "truncated"
	// FaultAnchorMismatch: the event at an anchored revision is not the one anchored.
	FaultAnchorMismatch = "anchor_mismatch"
	// FaultMalformed: the event's data or metadata does not decode into its type, so no
	// reader can fold it (zuno verify reports it instead of stopping on it).
	FaultMalformed = "malformed"
)

// MalformedFault is the fault a MalformedEventError stands for.
func MalformedFault(e *MalformedEventError) ChainFault {
	return ChainFault{Stream: e.Stream, Kind: FaultMalformed, Position: e.Position, Detail: e.Error()}
}

// ChainFault is the first thing wrong with one stream.
type ChainFault struct {
	Stream   string `json:"stream"`
	Kind     string `json:"kind"`
	Position uint64 `json:"position"`
	Revision uint64 `json:"revision"`
	EventID  string `json:"eventId,omitempty"`
	Detail   string `json:"detail"`
}

// StreamHead is a stream's last event as the chain computes it: what an anchor records.
type StreamHead struct {
	Stream   string `json:"stream"`
	Revision uint64 `json:"revision"`
	Hash     string `json:"hash"`
}

// ChainWalker checks streams' hash chains from their events, fed in position order or in
// revision order. Only the first fault of a stream is kept: everything after it depends on it.
type ChainWalker struct {
	// Genesis is the last position written before the chain existed: events at or below it
	// may lack a hash (docs/storage.md, "Events older than the chain").
	Genesis uint64
	anchors map[string]StreamHead
	streams map[string]*walkState
	events  uint64
}

type walkState struct {
	next    uint64 // expected revision
	lastPos uint64
	prev    string // the hash the next event must chain to
	head    StreamHead
	fault   *ChainFault
}

// NewChainWalker returns a walker whose events at or below genesis may be unhashed, and which
// compares the anchored heads with the events at their revisions.
func NewChainWalker(genesis uint64, anchored []StreamHead) *ChainWalker {
	w := &ChainWalker{Genesis: genesis, anchors: map[string]StreamHead{}, streams: map[string]*walkState{}}
	for _, h := range anchored {
		w.anchors[h.Stream] = h
	}
	return w
}

// Events is how many events the walker was given.
func (w *ChainWalker) Events() uint64 { return w.events }

// Add checks one event against its stream's chain so far.
func (w *ChainWalker) Add(r Recorded) {
	w.events++
	st := w.streams[r.Stream]
	if st == nil {
		st = &walkState{}
		w.streams[r.Stream] = st
	}
	if st.fault != nil {
		// A "missing" revision that turns up later was moved, not deleted.
		if f := st.fault; f.Kind == FaultMissing && r.StreamRevision == f.Revision {
			f.Kind = FaultReordered
			f.Detail = fmt.Sprintf("revision %d comes after it, at position %d", r.StreamRevision, r.Position)
		}
		return
	}
	if f := w.check(st, r); f != nil {
		f.Stream, f.Position, f.Revision, f.EventID = r.Stream, r.Position, r.StreamRevision, r.ID
		if f.Kind == FaultMissing {
			// Reported at the first revision missing, where the event after the gap stands.
			f.Revision, f.EventID = st.next, ""
		}
		st.fault = f
	}
}

func (w *ChainWalker) check(st *walkState, r Recorded) *ChainFault {
	switch {
	case r.StreamRevision > st.next:
		return &ChainFault{Kind: FaultMissing, Detail: fmt.Sprintf("revisions %d to %d are missing before this event", st.next, r.StreamRevision-1)}
	case r.StreamRevision < st.next || (st.next > 0 && r.Position <= st.lastPos):
		return &ChainFault{Kind: FaultReordered, Detail: "revision order and position order disagree here"}
	}
	body, err := BodyDigest(r.Stream, r.Event)
	if err != nil {
		return &ChainFault{Kind: FaultAltered, Detail: "metadata does not encode: " + err.Error()}
	}
	computed := Link(st.prev, r.StreamRevision, body)
	switch {
	case r.Metadata.Hash == "" && r.Position > w.Genesis:
		return &ChainFault{Kind: FaultUnchained, Detail: fmt.Sprintf("no hash, but written after the chain began (position %d)", w.Genesis)}
	case r.Metadata.Hash == "":
		// Older than the chain: the next hashed event starts afresh, as the store did.
		st.prev = ""
	case r.Metadata.Hash != computed:
		return &ChainFault{Kind: FaultAltered, Detail: "hash does not match the event's content and predecessor"}
	default:
		st.prev = computed
	}
	if a, ok := w.anchors[r.Stream]; ok && a.Revision == r.StreamRevision && a.Hash != computed {
		return &ChainFault{Kind: FaultAnchorMismatch, Detail: "this is not the event the anchor recorded at this revision"}
	}
	st.next, st.lastPos = r.StreamRevision+1, r.Position
	st.head = StreamHead{Stream: r.Stream, Revision: r.StreamRevision, Hash: computed}
	return nil
}

// Faults returns the first fault of each faulty stream, and a truncation fault for each
// anchored stream that ends before its anchored revision, sorted by stream.
func (w *ChainWalker) Faults() []ChainFault {
	var out []ChainFault
	for _, st := range w.streams {
		if st.fault != nil {
			out = append(out, *st.fault)
		}
	}
	for name, a := range w.anchors {
		st := w.streams[name]
		if st != nil && (st.fault != nil || st.next > a.Revision) {
			continue
		}
		f := ChainFault{Stream: name, Kind: FaultTruncated, Revision: a.Revision,
			Detail: fmt.Sprintf("the anchor recorded revision %d; the stream ends before it", a.Revision)}
		if st != nil {
			f.Revision, f.Position = st.next, st.lastPos
			f.Detail = fmt.Sprintf("the anchor recorded revision %d; the stream now ends at revision %d (position %d)", a.Revision, st.next-1, st.lastPos)
		}
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Stream < out[j].Stream })
	return out
}

// Heads returns each fault-free stream's head, sorted by stream: what a new anchor records.
func (w *ChainWalker) Heads() []StreamHead {
	out := make([]StreamHead, 0, len(w.streams))
	for _, st := range w.streams {
		if st.fault == nil {
			out = append(out, st.head)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Stream < out[j].Stream })
	return out
}

// Streams is how many streams the walker saw.
func (w *ChainWalker) Streams() int { return len(w.streams) }
