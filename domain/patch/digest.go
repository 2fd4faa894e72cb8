package patch

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// Digest is a SHA-256. The zero Digest stands for "no content" (a path with no file): no
// input hashes to it.
type Digest [sha256.Size]byte

// DigestOf is the digest read credentials carry: SHA-256 of the file's exact bytes, BOM and
// line endings included.
func DigestOf(b []byte) Digest { return sha256.Sum256(b) }

// IsZero reports whether d is the "no content" digest.
func (d Digest) IsZero() bool { return d == Digest{} }

func (d Digest) String() string {
	if d.IsZero() {
		return "none"
	}
	return "sha256:" + hex.EncodeToString(d[:])
}

// digester hashes a length-prefixed encoding, so that no two different operations share an
// encoding (a path ending in a chunk's text cannot pass for the next field).
type digester struct{ buf []byte }

func (g *digester) str(s string) {
	g.buf = binary.AppendUvarint(g.buf, uint64(len(s)))
	g.buf = append(g.buf, s...)
}

func (g *digester) num(n int) { g.buf = binary.AppendUvarint(g.buf, uint64(n)) }

func (g *digester) strs(ss []string) {
	g.num(len(ss))
	for _, s := range ss {
		g.str(s)
	}
}

func (g *digester) sum() Digest { return sha256.Sum256(g.buf) }

// OpDigest identifies what an operation does, independent of where it sits in the patch
// text (line numbers and the order of other operations do not count). Two attempts with the
// same OpDigest on the same content have the same outcome, which is what IdenticalReplay
// relies on.
func OpDigest(op Op) Digest {
	var g digester
	g.str("zuno.apply_patch.op.1")
	switch op := op.(type) {
	case *Add:
		g.str("add")
		g.str(op.Path)
		g.str(op.Content)
	case *Delete:
		g.str("delete")
		g.str(op.Path)
	case *Update:
		g.str("update")
		g.str(op.Path)
		g.str(op.MoveTo)
		g.num(len(op.Chunks))
		for _, c := range op.Chunks {
			g.str(c.Context)
			if c.EndOfFile {
				g.num(1)
			} else {
				g.num(0)
			}
			g.strs(c.Old)
			g.strs(c.New)
		}
	default:
		g.str("unknown")
	}
	return g.sum()
}
