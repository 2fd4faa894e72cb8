package bg

// ring holds the most recent bytes of a stream, addressed by absolute
// offset: the byte at stream offset o lives at buf[o % size]. It grows lazily
// up to size, so a task that prints little costs little.
//
// ring is not synchronised; the owning task's mutex guards it.
type ring struct {
	size  int
	buf   []byte
	total int64 // bytes ever written
}

func newRing(size int) *ring { return &ring{size: size} }

// write appends p to the stream, overwriting the oldest bytes once full.
func (r *ring) write(p []byte) {
	for len(p) > 0 {
		pos := int(r.total % int64(r.size))
		var n int
		if pos == len(r.buf) && len(r.buf) < r.size {
			n = min(len(p), r.size-len(r.buf))
			r.buf = append(r.buf, p[:n]...)
		} else {
			n = copy(r.buf[pos:], p)
		}
		p = p[n:]
		r.total += int64(n)
	}
}

// start is the oldest absolute offset the ring still holds.
func (r *ring) start() int64 { return r.total - int64(len(r.buf)) }

// read copies the absolute range [from, end), which must lie within
// [start(), total).
func (r *ring) read(from, end int64) []byte {
	out := make([]byte, 0, end-from)
	for from < end {
		pos := int(from % int64(r.size))
		n := min(int64(len(r.buf)-pos), end-from)
		out = append(out, r.buf[pos:pos+int(n)]...)
		from += n
	}
	return out
}
