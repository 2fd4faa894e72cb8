package anchor_test

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/anchor"
	"github.com/zuno-run/zuno/events"
)

var heads = []events.StreamHead{{Stream: "session-a", Revision: 4, Hash: strings.Repeat("ab", 32)}}

func keys(t testing.TB, seed byte) (anchor.Keys, string) {
	t.Helper()
	s := base64.StdEncoding.EncodeToString([]byte(strings.Repeat(string(rune(seed)), ed25519.SeedSize)))
	k, err := anchor.ParseKeys(s, "")
	if err != nil {
		t.Fatal(err)
	}
	return k, base64.StdEncoding.EncodeToString(k.Public)
}

func code(err error) string {
	var c interface{ Code() string }
	if errors.As(err, &c) {
		return c.Code()
	}
	return ""
}

func TestAnchorSignatures(t *testing.T) {
	signer, public := keys(t, 'a')
	other, _ := keys(t, 'b')
	auditor, err := anchor.ParseKeys("", public)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name       string
		write      anchor.Keys
		edit       func(string) string
		read       anchor.Keys
		wantCode   string
		wantExists bool
	}{
		{name: "unsigned, no key", wantExists: true},
		{name: "signed, checked with the private key", write: signer, read: signer, wantExists: true},
		{name: "signed, checked with the public key only", write: signer, read: auditor, wantExists: true},
		{name: "signed by another key", write: other, read: auditor, wantCode: anchor.CodeAnchorSignature},
		{name: "head changed after signing", write: signer, read: auditor, wantCode: anchor.CodeAnchorSignature,
			edit: func(s string) string { return strings.Replace(s, `"revision": 4`, `"revision": 3`, 1) }},
		{name: "signature stripped", write: signer, read: auditor, wantCode: anchor.CodeAnchorUnsigned,
			edit: func(s string) string { return s[:strings.Index(s, `,`+"\n"+`  "signature"`)] + "\n}\n" }},
		{name: "signed, no key to check it", write: signer, wantCode: anchor.CodeAnchorKeyRequired},
		{name: "not an anchor", read: auditor, wantCode: anchor.CodeAnchorInvalid, edit: func(string) string { return `{"version":"x"}` }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "anchor.json")
			if err := anchor.Write(path, anchor.New(heads, "anc_t", 1, "", now), tc.write); err != nil {
				t.Fatal(err)
			}
			if tc.edit != nil {
				raw, _ := os.ReadFile(path)
				os.WriteFile(path, []byte(tc.edit(string(raw))), 0o600)
			}
			f, ok, err := anchor.Read(path, tc.read)
			if code(err) != tc.wantCode || (err == nil && (!ok || len(f.Heads) != 1 || f.Heads[0] != heads[0])) {
				t.Fatalf("read: %+v ok=%v err=%v, want code %q", f, ok, err, tc.wantCode)
			}
			if err != nil && strings.Count(err.Error(), tc.wantCode) != 1 {
				t.Fatalf("the message must state its code once: %v", err)
			}
		})
	}
	if _, ok, err := anchor.Read(filepath.Join(t.TempDir(), "none.json"), signer); ok || err != nil {
		t.Fatalf("a missing anchor is a first run: ok=%v err=%v", ok, err)
	}
}

// A version 1 anchor (before the chain) is still read, its signature checked over version 1's
// bytes; a digest names every signed member; a public key alone never writes; a generated
// key pair parses, and its public half is the one printed.
func TestAnchorVersionsDigestsAndKeys(t *testing.T) {
	signer, public := keys(t, 'a')
	auditor, _ := anchor.ParseKeys("", public)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	dir := t.TempDir()

	v1 := filepath.Join(dir, "v1.json")
	if err := anchor.Write(v1, anchor.File{Version: anchor.VersionV1, CreatedAt: now, Heads: heads}, signer); err != nil {
		t.Fatal(err)
	}
	f, ok, err := anchor.Read(v1, auditor)
	if err != nil || !ok || f.Counter != 0 || f.Chain != "" {
		t.Fatalf("a version 1 anchor: %+v %v %v", f, ok, err)
	}

	base := anchor.New(heads, "anc_a", 3, "sha256:prev", now)
	seen := map[string]string{anchor.Digest(base): "base"}
	for name, changed := range map[string]anchor.File{
		"chain":    anchor.New(heads, "anc_b", 3, "sha256:prev", now),
		"counter":  anchor.New(heads, "anc_a", 4, "sha256:prev", now),
		"previous": anchor.New(heads, "anc_a", 3, "sha256:other", now),
		"time":     anchor.New(heads, "anc_a", 3, "sha256:prev", now.Add(time.Second)),
		"heads":    anchor.New(nil, "anc_a", 3, "sha256:prev", now),
	} {
		d := anchor.Digest(changed)
		if prior, dup := seen[d]; dup {
			t.Errorf("changing the %s gives the digest of %s", name, prior)
		}
		seen[d] = name
	}
	if d := anchor.Digest(base); !strings.HasPrefix(d, "sha256:") || len(d) != len("sha256:")+64 || d != anchor.Digest(base) {
		t.Errorf("digest %q", d)
	}

	p := filepath.Join(dir, "auditor.json")
	if err := anchor.Write(p, base, signer); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(p)
	if err := anchor.Write(p, anchor.New(nil, "anc_a", 4, "", now), auditor); code(err) != anchor.CodeAnchorKeyRequired {
		t.Errorf("a write with the public key only: %v", err)
	}
	if after, _ := os.ReadFile(p); string(after) != string(before) {
		t.Error("a public key alone changed the anchor")
	}

	seed, pub, err := anchor.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	k, err := anchor.ParseKeys(seed, pub)
	if err != nil || k.PublicKey() != pub {
		t.Fatalf("a generated pair: %v, public %q want %q", err, k.PublicKey(), pub)
	}
}

func TestParseKeys(t *testing.T) {
	_, public := keys(t, 'a')
	_, otherPublic := keys(t, 'b')
	seed := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a", 32)))
	for _, tc := range []struct{ private, public, code string }{
		{seed, "", ""},
		{seed, public, ""},
		{"", public, ""},
		{"not base64!", "", anchor.CodeAnchorKeyInvalid},
		{base64.StdEncoding.EncodeToString([]byte("short")), "", anchor.CodeAnchorKeyInvalid},
		{"", seed + "AA", anchor.CodeAnchorKeyInvalid},
		{seed, otherPublic, anchor.CodeAnchorKeyInvalid},
	} {
		if _, err := anchor.ParseKeys(tc.private, tc.public); code(err) != tc.code {
			t.Errorf("ParseKeys(%q, %q) = %v, want code %q", tc.private, tc.public, err, tc.code)
		}
	}
}
