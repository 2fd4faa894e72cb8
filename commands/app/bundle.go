package app

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/zuno-run/zuno/commands"
	"github.com/zuno-run/zuno/commands/bundle"
	"github.com/zuno-run/zuno/events"
)

// ExportBundle is what `zuno audit export` writes: one session's streams (and its delegated
// children's with WithChildren), signed with Key when set (docs/formats.md, "Bundles").
type ExportBundle struct {
	Session      string
	WithChildren bool
	// Anchor is an anchor file's bytes to include; nil for none.
	Anchor []byte
	Key    ed25519.PrivateKey
	Now    time.Time
}

// BundleSummary says what a bundle holds.
type BundleSummary struct {
	Sessions []string `json:"sessions"`
	Streams  int      `json:"streams"`
	Events   int      `json:"events"`
	Signed   bool     `json:"signed"`
}

// ExportBundle writes the bundle of r to w. The session must have events.
func (c *Commands) ExportBundle(ctx context.Context, r ExportBundle, w io.Writer) (BundleSummary, error) {
	sessions, err := c.bundleSessions(ctx, r.Session, r.WithChildren)
	if err != nil {
		return BundleSummary{}, err
	}
	var recs []events.Recorded
	streams := 0
	for _, stream := range bundleStreams(sessions) {
		n := len(recs)
		for rec, err := range commands.Events(ctx, c.ports.Log, stream, 0) {
			if err != nil {
				return BundleSummary{}, err
			}
			recs = append(recs, rec)
		}
		if len(recs) > n {
			streams++
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Position < recs[j].Position })
	genesis, err := c.ports.Log.ChainGenesis(ctx)
	if err != nil {
		return BundleSummary{}, fmt.Errorf("read the chain's genesis: %w", err)
	}
	contents := bundle.Contents{Sessions: sessions, Events: recs, Genesis: genesis, Anchor: r.Anchor, CreatedAt: r.Now}
	if err := bundle.Write(w, contents, r.Key); err != nil {
		return BundleSummary{}, err
	}
	return BundleSummary{Sessions: sessions, Streams: streams, Events: len(recs), Signed: r.Key != nil}, nil
}

// bundleSessions are the session asked for, its fork sources (whose events are its history,
// docs/storage.md "Forks") and, with children, every descendant the job ledgers name, each
// once, in the order found.
func (c *Commands) bundleSessions(ctx context.Context, session string, children bool) ([]string, error) {
	type visit struct {
		id       string
		children bool
	}
	queue := []visit{{session, children}}
	seen := map[string]bool{}
	var out []string
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if seen[v.id] {
			continue
		}
		first, err := c.ports.Log.ReadStream(ctx, commands.SessionStream(v.id), 0, 1)
		if err != nil {
			return nil, err
		}
		if len(first) == 0 {
			return nil, &UsageError{fmt.Sprintf("session %q has no events; list sessions with `zuno session list`", v.id)}
		}
		seen[v.id] = true
		out = append(out, v.id)
		if source := forkSource(first[0]); source != "" {
			queue = append(queue, visit{source, false})
		}
		if !v.children {
			continue
		}
		ledger, _, err := commands.LoadJobs(ctx, c.ports.Log, c.ports.Driver.Registry, v.id)
		if err != nil {
			return nil, err
		}
		for _, jb := range ledger.Jobs() {
			queue = append(queue, visit{jb.ChildSessionID, true})
		}
	}
	return out, nil
}

// forkSource is the session a forked session's first event names as its history's source.
func forkSource(first events.Recorded) string {
	if first.Type != events.TypeSessionForked {
		return ""
	}
	var forked events.SessionForked
	if json.Unmarshal(first.Data, &forked) != nil {
		return ""
	}
	return forked.Source.SessionID
}

// bundleStreams are the streams keyed by each session (those `zuno verify --session` walks,
// and its job ledger, notes and task context), then the log's record of its anchors.
func bundleStreams(sessions []string) []string {
	var out []string
	for _, s := range sessions {
		out = append(out, commands.SessionStream(s), commands.WorkStream(s), commands.WorkSnapshotStream(s),
			commands.InboxStream(s), commands.BackgroundStream(s), commands.JobStream(s), commands.NotesStream(s),
			commands.TaskContextStream(s), commands.MCPStream(s))
	}
	return append(out, commands.AnchorStream)
}
