package files

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/patch"
)

// windowRef is the window read cut before it streamed (the whole file in memory): the
// reference the streaming windower must match line for line.
// windowRef cuts lines offset..offset+limit-1 out of content, within MaxReadBytes.
func windowRef(content []byte, offset, limit int) ReadResult {
	if offset == 0 {
		offset = 1
	}
	if limit == 0 {
		limit = DefaultReadLines
	}
	// Line start offsets.
	var starts []int
	for i := 0; i < len(content); {
		starts = append(starts, i)
		j := i
		for j < len(content) && content[j] != '\n' {
			j++
		}
		i = j + 1
	}
	total := len(starts)
	res := ReadResult{StartLine: offset, EndLine: offset - 1, TotalLines: total}
	if offset > total {
		return res
	}
	from := starts[offset-1]
	end := from
	line := offset
	for ; line <= total && line < offset+limit; line++ {
		next := len(content)
		if line < total {
			next = starts[line]
		}
		if next-from > MaxReadBytes {
			if line == offset {
				// One line larger than the window: cut it rather than return nothing.
				end = from + MaxReadBytes
				res.Truncated = true
				line++
			}
			break
		}
		end = next
	}
	res.Content = string(content[from:end])
	res.EndLine = line - 1
	if res.EndLine < total {
		res.HasMore = true
		res.NextOffset = res.EndLine + 1
	}
	return res
}

// streamWindow feeds content through a windower in chunks of the given size, as a file read
// through a fixed buffer arrives.
func streamWindow(content []byte, offset, limit, chunk int) ReadResult {
	w := newWindower(offset, limit)
	for len(content) > 0 {
		n := min(chunk, len(content))
		w.Write(content[:n])
		content = content[n:]
	}
	return w.result()
}

// FuzzWindow: streamed in chunks of any size, the window is exactly the one cut from the
// whole file.
func FuzzWindow(f *testing.F) {
	long := strings.Repeat("x", MaxReadBytes+7)
	for _, s := range []string{"", "a", "a\n", "a\nb", "a\n\nb\n", "\n\n\n", long, long + "\nb\n", "a\n" + long + "\nc", "\ufeffa\r\nb\r\n"} {
		f.Add([]byte(s), 0, 0, 1)
		f.Add([]byte(s), 2, 1, 3)
		f.Add([]byte(s), 1, 2, 4096)
	}
	f.Fuzz(func(t *testing.T, content []byte, offset, limit, chunk int) {
		if offset < 0 || limit < 0 || offset > 1<<20 || limit > 1<<20 {
			t.Skip()
		}
		if chunk <= 0 || chunk > 1<<17 {
			chunk = 1 + (chunk&0xffff+0xffff)%0xffff
		}
		want := windowRef(content, offset, limit)
		if got := streamWindow(content, offset, limit, chunk); !reflect.DeepEqual(got, want) {
			t.Fatalf("offset %d limit %d chunk %d:\n got %+v\nwant %+v", offset, limit, chunk, got, want)
		}
	})
}

// TestWindowLarge: windows around a line longer than the window and at the window's byte
// bound, in chunks smaller and larger than a line, match the reference.
func TestWindowLarge(t *testing.T) {
	var b bytes.Buffer
	for i := 0; i < 3000; i++ {
		b.WriteString(strings.Repeat("y", i%97) + "\n")
		if i == 1500 {
			b.WriteString(strings.Repeat("z", 3*MaxReadBytes) + "\n")
		}
	}
	b.WriteString("tail")
	content := b.Bytes()
	for _, offset := range []int{0, 1, 700, 1501, 1502, 1503, 3001, 3002, 3003} {
		for _, limit := range []int{0, 1, 5, 2000, 5000} {
			for _, chunk := range []int{1, 7, 100, 64 << 10, len(content)} {
				want := windowRef(content, offset, limit)
				if got := streamWindow(content, offset, limit, chunk); !reflect.DeepEqual(got, want) {
					t.Fatalf("offset %d limit %d chunk %d:\n got %+v\nwant %+v", offset, limit, chunk, got, want)
				}
			}
		}
	}
}

// TestReadCredentialStreamed: the credential of a window of a file larger than the copy
// buffer is the digest of every byte of the file, not of what was shown.
func TestReadCredentialStreamed(t *testing.T) {
	root := t.TempDir()
	w, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	content := bytes.Repeat([]byte("0123456789abcdef\n"), 50000)
	if err := os.WriteFile(filepath.Join(root, "big.txt"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := w.Read(context.Background(), ReadRequest{Path: "big.txt", Offset: 10, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if r.Credential.Digest != patch.DigestOf(content) || r.Size != len(content) || r.TotalLines != 50000 {
		t.Fatalf("credential %s size %d lines %d", r.Credential.Digest, r.Size, r.TotalLines)
	}
	if r.Content != strings.Repeat("0123456789abcdef\n", 3) || r.NextOffset != 13 {
		t.Fatalf("window %q next %d", r.Content, r.NextOffset)
	}
}
