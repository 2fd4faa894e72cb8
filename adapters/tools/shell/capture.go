package shell

import (
	"bytes"
	"io"
	"os"
	"sync"
	"syscall"
)

// capture takes the combined output as it arrives. Only what the model may be shown inline
// stays in memory: at most maxBytes bytes. Output that grows past maxBytes is withheld
// whatever its line count, so from then on every byte, the ones held so far included, goes
// to a spool file instead; the caller keeps that file as the artifact ("Output caps and
// artifacts" in docs/tools.md). Memory is then fixed whatever the command prints (issue 14,
// "Bounded memory"). Bytes and lines are counted as they pass.
//
// Write never fails: a command must never block on a full pipe because the spool could
// not be written. The first spool error is kept; later bytes are still counted.
type capture struct {
	maxBytes int
	dir      string // where the spool is created ("" is the system's temporary directory)
	// limit is how many bytes are kept at most, in memory and spool together (0: no limit):
	// the disk cap (docs/config.md, "Bounds"). Past it bytes are counted and dropped, and
	// capped is closed once, so the runner stops the command.
	limit  int64
	kept   int64
	capped chan struct{}

	head  []byte
	spool *os.File
	err   error

	total    int64
	newlines int
	last     byte
}

func (c *capture) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n := len(p)
	c.total += int64(n)
	c.newlines += bytes.Count(p, []byte{'\n'})
	c.last = p[n-1]
	if c.limit > 0 && c.kept+int64(len(p)) > c.limit {
		p = p[:c.limit-c.kept]
		c.reachCap()
	}
	c.kept += int64(len(p))
	switch {
	case len(p) == 0:
	case c.err != nil:
	case c.spool != nil:
		c.spoolWrite(p)
	case len(c.head)+len(p) <= c.maxBytes:
		c.head = append(c.head, p...)
	default:
		c.spool, c.err = os.CreateTemp(c.dir, ".spool-*.out")
		if c.err == nil {
			c.spoolWrite(c.head)
			c.spoolWrite(p)
		}
		c.head = nil
	}
	return n, nil
}

// reachCap closes capped the first time the limit is reached.
func (c *capture) reachCap() {
	select {
	case <-c.capped:
	default:
		close(c.capped)
	}
}

// over reports whether the limit dropped bytes.
func (c *capture) over() bool { return c.limit > 0 && c.total > c.kept }

func (c *capture) spoolWrite(p []byte) {
	if c.err == nil {
		_, c.err = c.spool.Write(p)
	}
}

// lines counts lines as a terminal shows them (CountLines).
func (c *capture) lines() int {
	if c.total > 0 && c.last != '\n' {
		return c.newlines + 1
	}
	return c.newlines
}

// finish syncs and closes the spool, so the path handed out holds every byte on disk.
// It returns the spool's path, or "" when the output stayed in memory; on an error the
// spool is removed and the error returned.
func (c *capture) finish() (string, error) {
	if c.spool == nil {
		return "", c.err
	}
	p := c.spool.Name()
	err := c.err
	if err == nil {
		err = c.spool.Sync()
	}
	if cerr := c.spool.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		return "", err
	}
	return p, nil
}

// drainBuffers are drain's buffers, kept between commands: a fresh 64 KiB per command was
// an allocation, zeroed, and garbage to collect on every shell call.
var drainBuffers = sync.Pool{New: func() any { return new([64 << 10]byte) }}

// drain copies r into c through one fixed buffer.
func (c *capture) drain(r io.Reader) {
	b := drainBuffers.Get().(*[64 << 10]byte)
	defer drainBuffers.Put(b)
	buf := b[:]
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// drainReady copies what f holds now into c without waiting for more, and reports whether f
// is at its end (every write end closed). f must be non-blocking (outputPipe's read end).
func (c *capture) drainReady(f *os.File) (eof bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	b := drainBuffers.Get().(*[64 << 10]byte)
	defer drainBuffers.Put(b)
	_ = rc.Read(func(fd uintptr) bool {
		for {
			n, err := syscall.Read(int(fd), b[:])
			switch {
			case n > 0:
				c.Write(b[:n])
			case err == syscall.EINTR:
			case n == 0 && err == nil:
				eof = true
				return true
			default: // EAGAIN: a process still holds a write end
				return true
			}
		}
	})
	return eof
}
