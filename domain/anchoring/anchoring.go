// Package anchoring decides whether an anchor file may be trusted against the log's own record
// of anchoring (stream "anchors", events.LogAnchored), and records the next anchor of the chain
// (docs/storage.md, "Anchors"). Pure: the file is read and written by the caller.
package anchoring

import (
	"fmt"
	"sort"
	"strings"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// Stable codes.
const (
	// CodeAnchorMissing: the anchor file is not there, and the log has been anchored before
	// (or a key is configured, so an anchor is expected).
	CodeAnchorMissing = "anchor_missing"
	// CodeAnchorStale: the file is an older anchor than the last the log records.
	CodeAnchorStale = "anchor_stale"
	// CodeAnchorReplaced: the file has the counter of the last anchor but not its content.
	CodeAnchorReplaced = "anchor_replaced"
	// CodeAnchorAhead: the file is a later anchor than any the log records: the log lost
	// the record of its latest anchorings.
	CodeAnchorAhead = "anchor_ahead"
	// CodeAnchorExists: --init where an anchor file already is.
	CodeAnchorExists = "anchor_exists"
)

// State is the log's record of anchoring: the last anchor of each chain.
type State struct {
	Chains map[string]Last
}

// Last is a chain's last anchor.
type Last struct {
	Counter uint64
	Digest  string
}

// Evolve applies one event of the anchors stream.
func (s *State) Evolve(p events.Payload) error {
	e, ok := p.(events.LogAnchored)
	if !ok {
		return domain.UnexpectedEvent("anchoring", p)
	}
	if s.Chains == nil {
		s.Chains = map[string]Last{}
	}
	s.Chains[e.Chain] = Last{Counter: e.Counter, Digest: e.Digest}
	return nil
}

// File is what the anchor file says of itself.
type File struct {
	Exists  bool
	Path    string
	Chain   string
	Counter uint64
	Digest  string
}

// Check says whether the file may be compared with the log and renewed. init starts a new
// chain where no file is; keyed says a key is configured (so a missing file is not a first run).
func Check(s State, f File, init, keyed bool) error {
	last := s.Chains[f.Chain]
	switch {
	case init && f.Exists:
		return fail(CodeAnchorExists, fmt.Sprintf("%s exists; --init starts a chain only where there is no anchor", f.Path),
			"verify against it without --init, or name a new path")
	case !f.Exists && init:
		return nil
	case !f.Exists && len(s.Chains) > 0:
		return fail(CodeAnchorMissing, fmt.Sprintf("%s does not exist, but the log records %s", f.Path, chains(s)),
			"restore the anchor file from where you keep its copies; only if it is lost for good (or to keep a second anchor), start a new chain with --init (the log records that)")
	case !f.Exists && keyed:
		return fail(CodeAnchorMissing, fmt.Sprintf("%s does not exist, and a key is configured, so an anchor is expected", f.Path),
			"restore the anchor file, or start the first chain with --init")
	case !f.Exists:
		return nil // a first run without keys: the file is written
	case f.Counter < last.Counter:
		return fail(CodeAnchorStale, fmt.Sprintf("%s is anchor %d of chain %s, but the log records %d: it is an older copy (or the last verify --anchor stopped before writing its file)", f.Path, f.Counter, f.Chain, last.Counter),
			"restore the latest anchor; only if it is lost for good, move this one away and start a new chain with --init")
	case f.Counter > last.Counter:
		return fail(CodeAnchorAhead, fmt.Sprintf("%s is anchor %d of chain %s, but the log records %d of that chain: the log has lost the record of its latest anchorings", f.Path, f.Counter, f.Chain, last.Counter),
			"the log was truncated or restored from an older copy: investigate it against this anchor before anything else")
	case f.Counter > 0 && f.Digest != last.Digest:
		return fail(CodeAnchorReplaced, fmt.Sprintf("%s is anchor %d of chain %s, but not the one the log records (%s, the file %s)", f.Path, f.Counter, f.Chain, last.Digest, f.Digest),
			"restore the anchor the log records")
	}
	return nil
}

// chains says how many anchor chains the log records and how far each has come.
func chains(s State) string {
	names := make([]string, 0, len(s.Chains))
	for c := range s.Chains {
		names = append(names, c)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, c := range names {
		parts[i] = fmt.Sprintf("chain %q at anchor %d", c, s.Chains[c].Counter)
	}
	return fmt.Sprintf("%d anchor chain(s): %s", len(names), strings.Join(parts, ", "))
}

func fail(code, msg, fix string) error { return domain.NewError(code, msg, fix) }

// Next is the anchor to write after s: its chain (newChain when the file starts one), its
// counter, and whom it follows.
func Next(s State, f File, init bool, newChain string) (chain string, counter uint64, previous string) {
	if !f.Exists || init {
		return newChain, 1, ""
	}
	return f.Chain, s.Chains[f.Chain].Counter + 1, f.Digest
}

// Record is the command that records an anchor about to be written.
type Record struct {
	events.LogAnchored
}

// Decide records the anchor if it is the next of the chain; another process that anchored
// in between makes it stale.
func Decide(s State, c Record) ([]events.Payload, error) {
	if last := s.Chains[c.Chain].Counter; c.Counter != last+1 {
		return nil, fail(CodeAnchorStale, fmt.Sprintf("anchor %d of chain %s was recorded while this one was prepared as %d", last, c.Chain, c.Counter),
			"run zuno verify --anchor again")
	}
	return []events.Payload{c.LogAnchored}, nil
}
