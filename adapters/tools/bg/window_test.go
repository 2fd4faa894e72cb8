package bg

import (
	"bytes"
	"testing"
)

func TestRingWrapsByAbsoluteOffset(t *testing.T) {
	r := newRing(8)
	var all []byte
	for i := 0; i < 30; i++ {
		chunk := bytes.Repeat([]byte{byte('a' + i%26)}, i%5+1)
		r.write(chunk)
		all = append(all, chunk...)
		if r.total != int64(len(all)) {
			t.Fatalf("total %d, want %d", r.total, len(all))
		}
		if got, want := r.start(), max(0, int64(len(all))-8); got != want {
			t.Fatalf("start %d, want %d", got, want)
		}
		for from := r.start(); from <= r.total; from++ {
			for end := from; end <= r.total; end++ {
				if got := r.read(from, end); !bytes.Equal(got, all[from:end]) {
					t.Fatalf("read(%d,%d) = %q, want %q", from, end, got, all[from:end])
				}
			}
		}
	}
}

func TestClampLimit(t *testing.T) {
	for _, c := range []struct{ in, want int }{
		{-5, DefaultLimit}, {0, DefaultLimit}, {1, 1}, {100, 100},
		{MaxLimit, MaxLimit}, {MaxLimit + 1, MaxLimit}, {1 << 30, MaxLimit},
	} {
		if got := clampLimit(c.in); got != c.want {
			t.Errorf("clampLimit(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestPlan(t *testing.T) {
	s, err := plan(nil, 10, 25, true)
	if err != nil || s.from != 15 || s.end != 25 {
		t.Fatalf("tail plan = %+v, %v", s, err)
	}
	s, err = plan(nil, 10, 25, false)
	if err != nil || s.from != 0 || s.end != 10 {
		t.Fatalf("head plan = %+v, %v", s, err)
	}
	s, err = plan(ptr(25), 10, 25, true)
	if err != nil || s.from != 25 || s.end != 25 {
		t.Fatalf("cursor at end = %+v, %v", s, err)
	}
	for _, c := range []int64{-1, 26} {
		_, err := plan(ptr(c), 10, 25, true)
		wantCode(t, err, CodeInvalidArguments, "cursor")
	}
}

func TestSettleKeepsRunesTogether(t *testing.T) {
	text := []byte("aé€𝄞b") // 1 + 2 + 3 + 4 + 1 bytes
	total := int64(len(text))
	cases := []struct {
		name        string
		from, end   int64
		tail        bool
		growing     bool
		wantFrom    int64
		wantCursor  int64
		wantHasMore bool
	}{
		{"end splits é", 0, 2, false, false, 0, 1, true},
		{"end splits €", 1, 5, false, false, 1, 3, true},
		{"end splits 𝄞 after 3 bytes", 6, 9, false, false, 6, 6 + 3, true}, // would empty: kept
		{"end splits 𝄞 after 1 byte", 3, 7, false, false, 3, 6, true},
		{"end on boundary", 0, 3, false, false, 0, 3, true},
		{"tail start inside 𝄞", 8, 11, true, false, 10, 11, false},
		{"tail start inside €", 4, 11, true, false, 6, 11, false},
	}
	for _, c := range cases {
		w := settle(span{from: c.from, end: c.end, total: total, tail: c.tail}, text[c.from:c.end], c.growing)
		if w.WindowFrom != c.wantFrom || w.Cursor != c.wantCursor || w.HasMore != c.wantHasMore {
			t.Errorf("%s: got from %d cursor %d hasMore %t, want %d %d %t",
				c.name, w.WindowFrom, w.Cursor, w.HasMore, c.wantFrom, c.wantCursor, c.wantHasMore)
		}
		if string(text[w.WindowFrom:w.Cursor]) != w.Text || w.Bytes != len(w.Text) {
			t.Errorf("%s: text %q does not match [%d,%d)", c.name, w.Text, w.WindowFrom, w.Cursor)
		}
	}

	// A stream that ends mid-rune and will not grow keeps its last bytes:
	// backing off would hand the same bytes back forever.
	cut := text[:4] // "aé" + first byte of €
	w := settle(span{from: 0, end: 4, total: 4}, cut, false)
	if w.Cursor != 4 || w.HasMore {
		t.Fatalf("final partial rune: cursor %d hasMore %t", w.Cursor, w.HasMore)
	}
	// A growing one backs off: the rest of the rune is still coming.
	w = settle(span{from: 0, end: 4, total: 4}, cut, true)
	if w.Cursor != 3 || !w.HasMore {
		t.Fatalf("growing partial rune: cursor %d hasMore %t", w.Cursor, w.HasMore)
	}
}

func TestIncompleteTail(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"", 0}, {"a", 0}, {"é", 0}, {"\xc3", 1}, {"a\xe2\x82", 2}, {"\xf0\x9d\x84", 3},
		{"\xf0\x9d\x84\x9e", 0}, {"\x80\x80\x80", 0}, {"\xff", 0},
	} {
		if got := incompleteTail([]byte(c.in)); got != c.want {
			t.Errorf("incompleteTail(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}
