package search

import (
	"bufio"
	"bytes"
	"io"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// referenceDecode decodes a whole file as rg does by default, for comparison with the
// streaming asRGDecodes: a UTF-8 byte order mark dropped, UTF-16 with a mark decoded (an
// unpaired surrogate or an odd last byte as U+FFFD), anything else as it is.
func referenceDecode(b []byte) []byte {
	var little bool
	switch {
	case bytes.HasPrefix(b, []byte{0xef, 0xbb, 0xbf}):
		return b[3:]
	case bytes.HasPrefix(b, []byte{0xff, 0xfe}):
		little = true
	case bytes.HasPrefix(b, []byte{0xfe, 0xff}):
	default:
		return b
	}
	b = b[2:]
	units := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		if little {
			units = append(units, uint16(b[i])|uint16(b[i+1])<<8)
		} else {
			units = append(units, uint16(b[i])<<8|uint16(b[i+1]))
		}
	}
	out := []byte(string(utf16.Decode(units)))
	if len(b)%2 == 1 {
		out = utf8.AppendRune(out, utf8.RuneError)
	}
	return out
}

// FuzzCheckLines: the result check (beneath.go) reads any file content as the whole-buffer
// reference decodes it, finds every line of it where rg numbers it, and refuses a line that
// differs by one byte.
func FuzzCheckLines(f *testing.F) {
	for _, seed := range []string{
		"", "a\nb\n", "a\r\nb", "\xef\xbb\xbfbom\n", "\xff\xfea\x00\n\x00", "\xfe\xff\x00a\x00\n\xd8\x00",
		"\xff\xfe\x3d\xd8\x00\xde\n\x00", "\xff\xfe\x00\xd8", "\xff\xfeodd", "bad \xff\xfe\n\x00nul\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		r, err := asRGDecodes(bufio.NewReaderSize(bytes.NewReader(content), 16))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		want := referenceDecode(content)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("decoded %q, want %q (%v)", got, want, err)
		}

		var lines []hit
		for i, l := range bytes.SplitAfter(want, []byte("\n")) {
			if len(l) == 0 {
				break // after a final newline
			}
			text := clipLine(validLine(bytes.TrimSuffix(bytes.TrimSuffix(l, []byte("\n")), []byte("\r"))))
			lines = append(lines, hit{num: i + 1, text: text})
		}
		check := func(lines []hit) bool {
			r, err := asRGDecodes(bufio.NewReaderSize(bytes.NewReader(content), 16))
			if err != nil {
				t.Fatal(err)
			}
			return sameLines(r, lines)
		}
		if !check(lines) {
			t.Fatalf("the lines of %q were not found", content)
		}
		if len(lines) == 0 {
			return
		}
		last := lines[len(lines)-1]
		if check(append(lines[:len(lines)-1:len(lines)-1], hit{num: last.num, text: last.text + "x"})) {
			t.Fatalf("a changed last line of %q was accepted", content)
		}
		if check(append(lines[:len(lines):len(lines)], hit{num: last.num + 1})) {
			t.Fatalf("a line past the end of %q was accepted", content)
		}
	})
}
