// Package bundle writes and checks evidence bundles: one file holding a session's events with
// their hash chains, optionally the anchor that covers them, sealed by a SHA-256 of every byte
// before the seal and signed with the anchor key (docs/formats.md, "Bundles"). Checking needs
// nothing but the file: no database, no Zuno data directory.
package bundle

import (
	"bufio"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"time"

	"github.com/zuno-run/zuno/events"
)

// Format and Version name the file format (the header's "format" and "version").
const (
	Format  = "zuno.bundle"
	Version = 1
	// SignedPrefix is prepended to the seal's hex digest to make the signed bytes, so a
	// bundle signature can never be mistaken for an anchor's.
	SignedPrefix = "zuno.bundle.1\n"
)

// Contents is what a bundle holds.
type Contents struct {
	// Sessions are the bundled sessions: the one asked for first, then children and fork
	// sources.
	Sessions []string
	// Events are every event of the bundled streams, in log position order.
	Events []events.Recorded
	// Genesis is the log's last position before the hash chain began: events at or below it
	// may carry no hash (docs/storage.md, "Events older than the chain").
	Genesis uint64
	// Anchor is an anchor file's bytes, included as they are; nil for none.
	Anchor    []byte
	CreatedAt time.Time
}

// Header is the bundle's first line.
type Header struct {
	Format       string          `json:"format"`
	Version      int             `json:"version"`
	Sessions     []string        `json:"sessions"`
	Streams      []StreamSummary `json:"streams"`
	ChainGenesis uint64          `json:"chainGenesis"`
	CreatedAt    time.Time       `json:"createdAt"`
}

// StreamSummary is one bundled stream: how many events and the chain link of its last.
type StreamSummary struct {
	Stream string `json:"stream"`
	Events uint64 `json:"events"`
	Head   string `json:"head"`
}

// EventLine is one event: data and metadata are the bytes the chain hashes, as strings.
type EventLine struct {
	Kind     string `json:"kind"`
	Position uint64 `json:"position"`
	Stream   string `json:"stream"`
	Revision uint64 `json:"revision"`
	EventID  string `json:"eventId"`
	Type     string `json:"type"`
	Data     string `json:"data"`
	Metadata string `json:"metadata"`
}

type anchorLine struct {
	Kind string `json:"kind"`
	File string `json:"file"`
}

// SealLine is the last line.
type SealLine struct {
	Kind      string     `json:"kind"`
	SHA256    string     `json:"sha256"`
	Signature *Signature `json:"signature"`
}

// Signature is an ed25519 signature of SignedPrefix + the seal's hex digest.
type Signature struct {
	Alg       string `json:"alg"`
	PublicKey string `json:"publicKey"`
	Value     string `json:"value"`
}

// Write writes c as a bundle, signed with key when it is not nil.
func Write(w io.Writer, c Contents, key ed25519.PrivateKey) error {
	h := sha256.New()
	bw := bufio.NewWriter(w)
	out := io.MultiWriter(bw, h)
	lines := make([]any, 0, len(c.Events)+2)
	lines = append(lines, header(c))
	for _, rec := range c.Events {
		line, err := eventLine(rec)
		if err != nil {
			return err
		}
		lines = append(lines, line)
	}
	if c.Anchor != nil {
		lines = append(lines, anchorLine{Kind: "anchor", File: string(c.Anchor)})
	}
	for _, line := range lines {
		if err := writeLine(out, line); err != nil {
			return err
		}
	}
	if err := writeLine(bw, seal(hex.EncodeToString(h.Sum(nil)), key)); err != nil {
		return err
	}
	return bw.Flush()
}

// header summarises the streams of c's events: the head of each is its last event's link as
// a chain walk computes it (events.ChainWalker), so an unhashed pre-chain event has one too.
func header(c Contents) Header {
	w := events.NewChainWalker(c.Genesis, nil)
	var order []string
	counts := map[string]uint64{}
	for _, rec := range c.Events {
		if counts[rec.Stream] == 0 {
			order = append(order, rec.Stream)
		}
		counts[rec.Stream]++
		w.Add(rec)
	}
	heads := map[string]string{}
	for _, h := range w.Heads() {
		heads[h.Stream] = h.Hash
	}
	streams := make([]StreamSummary, 0, len(order))
	for _, s := range order {
		streams = append(streams, StreamSummary{Stream: s, Events: counts[s], Head: heads[s]})
	}
	sessions := c.Sessions
	if sessions == nil {
		sessions = []string{}
	}
	return Header{Format: Format, Version: Version, Sessions: sessions, Streams: streams, ChainGenesis: c.Genesis, CreatedAt: c.CreatedAt.UTC()}
}

// eventLine is rec as a bundle line. The metadata is Go's encoding of the decoded metadata:
// the bytes the chain hashed with the hash member after them (events.SealPrepared), whatever
// text the store kept (docs/formats.md, "Metadata bytes").
func eventLine(rec events.Recorded) (EventLine, error) {
	md, err := json.Marshal(rec.Metadata)
	if err != nil {
		return EventLine{}, err
	}
	return EventLine{Kind: "event", Position: rec.Position, Stream: rec.Stream, Revision: rec.StreamRevision,
		EventID: rec.ID, Type: rec.Type, Data: string(rec.Data), Metadata: string(md)}, nil
}

func seal(digest string, key ed25519.PrivateKey) SealLine {
	s := SealLine{Kind: "seal", SHA256: digest}
	if key != nil {
		sig := ed25519.Sign(key, []byte(SignedPrefix+digest))
		s.Signature = &Signature{Alg: "ed25519", PublicKey: base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey)),
			Value: base64.StdEncoding.EncodeToString(sig)}
	}
	return s
}

func writeLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
