package search

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The check of every returned result (docs/tools.md, "Path authority"). rg is started on the
// directory opened beneath the root, but while it walks it opens what it listed by name: a
// directory below the searched one swapped for a link to the outside between rg listing it
// and rg entering it sends rg outside, and rg has no way to refuse that. So before a result
// is shown it is looked at again from the handle rg was given, with no link followed: a name
// must be a regular file beneath that directory now, and every line grep shows must be that
// file's line. A result that fails is left out and counted, never shown; a name that exists
// beneath and a line equal to the line of the file beneath are inside bytes, whichever file
// rg read.

// keepBeneath returns the first limit of names (sorted, root-relative) that are regular
// files beneath the target, and how many it left out on the way. Names past the limit are
// not looked at: they are counted, not shown.
func (s *Searcher) keepBeneath(t target, names []string, limit int) (kept []string, outside int) {
	kept = make([]string, 0, min(limit, len(names)))
	for _, n := range names {
		if len(kept) == limit {
			break
		}
		if s.fileBeneath(t, n) {
			kept = append(kept, n)
		} else {
			outside++
		}
	}
	return kept, outside
}

func (s *Searcher) fileBeneath(t target, name string) bool {
	if t.hidden != nil && t.hidden(name) {
		return false
	}
	rel, ok := t.below(name)
	if !ok {
		return false
	}
	mode, err := s.ws.LstatBeneath(t.f, rel)
	return err == nil && mode.IsRegular()
}

// below turns a root-relative result name back into the path below the target directory
// rg walked; ok is false for anything rg could not have printed.
func (t target) below(name string) (string, bool) {
	rel := name
	if t.rel != "" {
		var ok bool
		if rel, ok = strings.CutPrefix(name, t.rel+"/"); !ok {
			return "", false
		}
	}
	for seg := range strings.SplitSeq(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", false
		}
	}
	return rel, true
}

// linesBeneath reports whether the file name holds each of lines (sorted by number), as grep
// renders a line (see record.text and clipLine). For a directory target the file is opened
// beneath it with no link followed and must be regular; a file target is the very file rg
// was handed, read again from its start.
func (s *Searcher) linesBeneath(t target, name string, lines []hit) bool {
	if t.hidden != nil && t.hidden(name) {
		return false
	}
	var src io.Reader
	if t.isDir {
		rel, ok := t.below(name)
		if !ok {
			return false
		}
		f, err := s.ws.OpenBeneath(t.f, rel)
		if err != nil {
			return false
		}
		defer f.Close()
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			return false
		}
		src = f
	} else {
		src = io.NewSectionReader(t.f, 0, math.MaxInt64)
	}
	br := bufPool.Get().(*bufio.Reader)
	br.Reset(src)
	defer func() { br.Reset(nil); bufPool.Put(br) }()
	r, err := asRGDecodes(br)
	if err != nil {
		return false
	}
	return sameLines(r, lines)
}

// sameLines reads lines from r, numbered from 1 at "\n" as rg numbers them, and compares the
// wanted ones. A line longer than MaxRecordBytes cannot have been shown, so it never matches.
func sameLines(r *bufio.Reader, lines []hit) bool {
	num := 0
	var line []byte
	for _, h := range lines {
		for num < h.num {
			var ok bool
			if line, ok = nextLine(r, line[:0], num+1 == h.num); !ok {
				return false
			}
			num++
		}
		if rendered := clipLine(validLine(bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r")))); rendered != h.text {
			return false
		}
	}
	return true
}

// nextLine reads one line; with keep it appends the line to buf (up to MaxRecordBytes, then
// it fails), otherwise it skips it. ok is false at the end of the input with nothing read.
func nextLine(r *bufio.Reader, buf []byte, keep bool) ([]byte, bool) {
	read := false
	for {
		chunk, err := r.ReadSlice('\n')
		read = read || len(chunk) > 0
		if keep {
			if len(buf)+len(chunk) > MaxRecordBytes {
				return buf, false
			}
			buf = append(buf, chunk...)
		}
		switch {
		case err == nil:
			return buf, true
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return buf, read && errors.Is(err, io.EOF)
		}
	}
}

// asRGDecodes reads r as rg reads a file by default (no --encoding): a UTF-8 byte order mark
// is dropped, and UTF-16 with a byte order mark is decoded to UTF-8; anything else is
// searched as it is.
func asRGDecodes(r *bufio.Reader) (*bufio.Reader, error) {
	head, err := r.Peek(3)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	switch {
	case bytes.HasPrefix(head, []byte{0xef, 0xbb, 0xbf}):
		r.Discard(3)
		return r, nil
	case bytes.HasPrefix(head, []byte{0xff, 0xfe}):
		r.Discard(2)
		return bufio.NewReader(&utf16Reader{r: r, little: true}), nil
	case bytes.HasPrefix(head, []byte{0xfe, 0xff}):
		r.Discard(2)
		return bufio.NewReader(&utf16Reader{r: r}), nil
	}
	return r, nil
}

// utf16Reader decodes UTF-16 to UTF-8; an unpaired surrogate or an odd last byte becomes
// U+FFFD, as in rg's decoder.
type utf16Reader struct {
	r      *bufio.Reader
	little bool
	out    []byte
	done   bool
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	for len(u.out) == 0 {
		if u.done {
			return 0, io.EOF
		}
		u.fill()
	}
	n := copy(p, u.out)
	u.out = u.out[n:]
	return n, nil
}

// fill decodes up to a few hundred code units into out.
func (u *utf16Reader) fill() {
	u.out = u.out[:0]
	for range 256 {
		c, ok := u.unit()
		if !ok {
			return
		}
		r := rune(c)
		if utf16.IsSurrogate(r) {
			r = utf8.RuneError
			if c < 0xdc00 {
				if next, err := u.r.Peek(2); err == nil {
					if lo := u.decode(next); lo >= 0xdc00 && lo < 0xe000 {
						u.r.Discard(2)
						r = utf16.DecodeRune(rune(c), rune(lo))
					}
				}
			}
		}
		u.out = utf8.AppendRune(u.out, r)
	}
}

func (u *utf16Reader) unit() (uint16, bool) {
	b, err := u.r.Peek(2)
	if len(b) == 2 {
		u.r.Discard(2)
		return u.decode(b), true
	}
	if len(b) == 1 {
		u.r.Discard(1)
		u.out = utf8.AppendRune(u.out, utf8.RuneError)
	}
	if err != nil {
		u.done = true
	}
	return 0, false
}

func (u *utf16Reader) decode(b []byte) uint16 {
	if u.little {
		return uint16(b[0]) | uint16(b[1])<<8
	}
	return uint16(b[0])<<8 | uint16(b[1])
}
