package events

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
)

// The hash chain (docs/storage.md, "Hash chain"). Every stored event's Metadata.Hash is
//
//	Link(prev, revision, BodyDigest(stream, event))
//
// where prev is the Hash of the event before it in its stream ("" for the first event, and for
// the first event after events written before the chain existed). The body digest covers the
// event's id, stream, type, data bytes and metadata without the hash; the link adds the stream
// revision and the predecessor. The link is a fixed text format so that the Postgres append
// function computes it in SQL from a digest Go passes in, where the revision is decided.

// ChainVersion names the canonical form; it is part of every hashed byte string.
const ChainVersion = "zuno.chain.1"

// BodyDigest returns the hex SHA-256 of an event's canonical bytes, without its place in the
// chain: each field length-prefixed, so no two different events share bytes.
func BodyDigest(stream string, ev Event) (string, error) {
	md := ev.Metadata
	md.Hash = ""
	mdBytes, err := json.Marshal(md)
	if err != nil {
		return "", err
	}
	return EncodedBodyDigest(stream, ev, mdBytes), nil
}

// EncodedBodyDigest is BodyDigest for a caller that has already encoded the event's metadata
// without its hash (as an append does to store it), so it is not encoded twice.
func EncodedBodyDigest(stream string, ev Event, metadata []byte) string {
	h := sha256.New()
	buf := make([]byte, 0, 64)
	buf = append(buf, ChainVersion...)
	buf = append(buf, '\n')
	h.Write(buf)
	for _, field := range [][]byte{[]byte(ev.ID), []byte(stream), []byte(ev.Type), ev.Data, metadata} {
		buf = strconv.AppendInt(buf[:0], int64(len(field)), 10)
		buf = append(buf, ':')
		h.Write(buf)
		h.Write(field)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Link chains a body digest to its predecessor's hash at a stream revision. The Postgres
// append function computes the same text: version, prev, revision and digest, one per line.
func Link(prev string, revision uint64, body string) string {
	buf := make([]byte, 0, len(ChainVersion)+len(prev)+len(body)+24)
	buf = append(buf, ChainVersion...)
	buf = append(buf, '\n')
	buf = append(buf, prev...)
	buf = append(buf, '\n')
	buf = strconv.AppendUint(buf, revision, 10)
	buf = append(buf, '\n')
	buf = append(buf, body...)
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:])
}

// Seal returns copies of evs, to be stored at revisions first, first+1, … of stream after an
// event whose hash is prev, each with its Metadata.Hash set. Any hash a caller set is
// replaced. The caller's slice is not changed.
func Seal(stream, prev string, first uint64, evs []Event) ([]Event, error) {
	pre, err := PrepareSeal(stream, evs)
	if err != nil {
		return nil, err
	}
	sealed, _ := SealPrepared(prev, first, evs, pre)
	return sealed, nil
}

// Prepared is what sealing an event needs that does not depend on its place in the stream:
// its metadata as json.Marshal encodes it without the hash, and its body digest. A store
// with one writer prepares an append's events before they reach the writer (on the
// appender's goroutine), so the writer only links them (SealPrepared).
type Prepared struct {
	Metadata []byte
	Body     string
}

// PrepareSeal prepares evs, to be appended to stream, for SealPrepared: each event's metadata
// is encoded once, for its digest and for storage.
func PrepareSeal(stream string, evs []Event) ([]Prepared, error) {
	out := make([]Prepared, len(evs))
	for i, ev := range evs {
		ev.Metadata.Hash = ""
		md, err := json.Marshal(ev.Metadata)
		if err != nil {
			return nil, err
		}
		out[i] = Prepared{Metadata: md, Body: EncodedBodyDigest(stream, ev, md)}
	}
	return out, nil
}

// SealPrepared is Seal for events prepared by PrepareSeal (pre[i] is evs[i]'s). It also
// returns each sealed event's metadata as json.Marshal encodes it, hash included, for a store
// that keeps metadata as JSON text: Hash is Metadata's last field, so that JSON is the JSON
// without the hash plus one trailing member (a hex hash needs no escaping).
func SealPrepared(prev string, first uint64, evs []Event, pre []Prepared) ([]Event, [][]byte) {
	out := make([]Event, len(evs))
	encoded := make([][]byte, len(evs))
	for i, ev := range evs {
		ev.Metadata.Hash = Link(prev, first+uint64(i), pre[i].Body)
		prev = ev.Metadata.Hash
		out[i] = ev
		encoded[i] = withHashMember(pre[i].Metadata, ev.Metadata.Hash)
	}
	return out, encoded
}

// withHashMember adds "hash" as the last member of md, a JSON object with members (CommandID
// and Actor are never omitted).
func withHashMember(md []byte, hash string) []byte {
	out := make([]byte, 0, len(md)+len(`,"hash":""`)+len(hash))
	out = append(out, md[:len(md)-1]...)
	out = append(out, `,"hash":"`...)
	out = append(out, hash...)
	return append(out, `"}`...)
}
