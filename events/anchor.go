package events

// Anchoring (stream "anchors"). Each `zuno verify --anchor FILE` that writes an anchor first
// records it here: its counter, the digest of what it signs and its predecessor's digest. The
// log thereby keeps its own record of how far the anchor chain has come, so a deleted anchor
// file, or an older copy put in its place, is found against it (docs/storage.md, "Anchors").

const TypeLogAnchored = "log.anchored.1"

// LogAnchored is one anchor written: the Counter-th of its chain.
type LogAnchored struct {
	// Chain names the chain (anc_…): one per anchor file, begun by its first anchor. A log
	// may keep several (a second file starts one with --init); a version 1 file is chain "".
	Chain string `json:"chain"`
	// Counter numbers a chain's anchors from 1.
	Counter uint64 `json:"counter"`
	// Digest is "sha256:" and the hex SHA-256 of the anchor's signed bytes; Previous is the
	// digest of the anchor it replaced, empty for the first or after Init.
	Digest   string `json:"digest"`
	Previous string `json:"previous,omitempty"`
	// Init marks an anchor started with --init where no file was: the chain begins again,
	// and the log says so.
	Init bool `json:"init,omitempty"`
	// Streams is how many stream heads the anchor records; Signed whether it is signed.
	Streams int  `json:"streams"`
	Signed  bool `json:"signed,omitempty"`
}

func (LogAnchored) EventType() string { return TypeLogAnchored }
