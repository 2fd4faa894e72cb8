package files

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/tools"
)

// BenchmarkReadRoute reads one 64 KB file window from the disk (the baseline) and through an
// in-process editor holding the same text: what the editor route adds in Zuno (the name
// resolved again and compared, the window cut from a string), without the client's round trip.
func BenchmarkReadRoute(b *testing.B) {
	text := strings.Repeat(strings.Repeat("x", 63)+"\n", 1024)
	for _, route := range []string{"disk", "editor"} {
		b.Run(route, func(b *testing.B) {
			root := b.TempDir()
			w, err := New(root)
			if err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
			if route == "editor" {
				w.Editor = &tools.Editor{ReadText: func(context.Context, string) (string, error) { return text, nil }}
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := w.Read(ctx, ReadRequest{Path: "a.txt"}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
