package anchor_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/anchor"
)

// FuzzRead: an anchor file is untrusted input (whoever can write where it is kept can change
// it). Whatever its bytes, Read answers with an anchor, none, or a typed error, never a panic,
// and an anchor it accepts under a key is one that key signed.
func FuzzRead(f *testing.F) {
	signer, _ := keys(f, 'a')
	dir := f.TempDir()
	for i, k := range []anchor.Keys{{}, signer} {
		p := filepath.Join(dir, "seed")
		anchor.Write(p, anchor.New(heads, "anc_f", 1, "", time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)), k)
		raw, _ := os.ReadFile(p)
		f.Add(raw, i == 1)
	}
	f.Add([]byte(`{"version":"zuno.anchor.1","heads":null,"signature":"!!"}`), true)
	f.Add([]byte(`[]`), false)
	f.Fuzz(func(t *testing.T, raw []byte, signed bool) {
		p := filepath.Join(t.TempDir(), "anchor.json")
		if err := os.WriteFile(p, raw, 0o600); err != nil {
			t.Fatal(err)
		}
		k := anchor.Keys{}
		if signed {
			k = signer
		}
		file, ok, err := anchor.Read(p, k)
		if err != nil {
			if code(err) == "" {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if !ok || file.Version != anchor.Version {
			t.Fatalf("accepted %q as %+v", raw, file)
		}
		if signed && file.Signature == "" {
			t.Fatalf("accepted an unsigned anchor under a key: %q", raw)
		}
	})
}
