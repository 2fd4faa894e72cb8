package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/zuno-run/zuno/events"
)

// wantChain reads stream back and checks that every event carries the link events.Seal
// computes (docs/storage.md, "Hash chain"), with a ChainWalker as `zuno verify` runs it.
func wantChain(t *testing.T, s Store, stream string, n int) {
	t.Helper()
	recs, err := s.ReadStream(context.Background(), stream, 0, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n {
		t.Fatalf("stream %s has %d events, want %d", stream, len(recs), n)
	}
	w := events.NewChainWalker(0, nil)
	prev := ""
	for _, r := range recs {
		body, err := events.BodyDigest(stream, r.Event)
		if err != nil {
			t.Fatal(err)
		}
		if want := events.Link(prev, r.StreamRevision, body); r.Metadata.Hash != want {
			t.Fatalf("revision %d: hash %q, want %q", r.StreamRevision, r.Metadata.Hash, want)
		}
		prev = r.Metadata.Hash
		w.Add(r)
	}
	if f := w.Faults(); len(f) > 0 {
		t.Fatalf("walker faults on an untouched stream: %+v", f)
	}
}

// testHashChain: one append of several events, appends one by one, a forged hash a caller
// set, and an idempotent re-append (which must not fork the chain) all leave one chain.
func testHashChain(t *testing.T, open Opener, gaps []Limitation) {
	s := open(t)
	stream := uniqueStream(t, "chain")
	forged := newEvent(stream, 0, `{"n":0}`)
	forged.Metadata.Hash = "forged by the caller"
	mustAppend(t, s, stream, events.NoStream, forged, newEvent(stream, 1, `{"n":1}`))
	batch := []events.Event{newEvent(stream, 2, `{"n":2,"s":"<&>\u00e9"}`), newEvent(stream, 3, `{ "n" : 3 }`)}
	mustAppend(t, s, stream, events.Exact(1), batch...)
	mustAppend(t, s, stream, events.Any, batch...) // a retry: stored once, chain unchanged
	mustAppend(t, s, stream, events.StreamExists, newEvent(stream, 4, `{"n":4}`))
	wantChain(t, s, stream, 5)
	// A reopened store continues the chain from the stored head.
	s2 := open(t)
	mustAppend(t, s2, stream, events.Exact(4), newEvent(stream, 5, `{"n":5}`))
	wantChain(t, s2, stream, 6)
}

// testHashChainConcurrent: writers racing on one stream with "any" (each from its own store,
// as processes) must still leave a single unforked chain.
func testHashChainConcurrent(t *testing.T, open Opener, gaps []Limitation) {
	const writers, perWriter = 6, 15
	stream := uniqueStream(t, "chain-race")
	var wg sync.WaitGroup
	for w := range writers {
		s := open(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				cmd := fmt.Sprintf("%s/w%d/%d", stream, w, i)
				if _, err := s.Append(context.Background(), stream, events.Any, newEvent(cmd, 0, `{}`), newEvent(cmd, 1, `{}`)); err != nil {
					t.Errorf("append: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	wantChain(t, open(t), stream, writers*perWriter*2)
}
