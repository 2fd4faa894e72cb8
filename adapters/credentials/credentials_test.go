package credentials

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestSetWritesOwnerOnlyFileAtomically(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "zuno")
	f := At(dir)
	if err := f.Set("openai", "sk-one\n"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(f.Path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %04o, want 0600", st.Mode().Perm())
	}
	if err := f.Set("anthropic", "sk-ant"); err != nil {
		t.Fatal(err)
	}
	keys, err := f.Load()
	if err != nil {
		t.Fatal(err)
	}
	if keys["openai"] != "sk-one" || keys["anthropic"] != "sk-ant" {
		t.Fatalf("keys %v", keys)
	}
	// No temporary file is left beside it.
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("dir holds %d entries, want only %s", len(ents), FileName)
	}
	if ok, err := f.Remove("openai"); !ok || err != nil {
		t.Fatalf("remove: %v %v", ok, err)
	}
	if ok, _ := f.Remove("openai"); ok {
		t.Fatal("second remove found a key")
	}
	keys, _ = f.Load()
	if _, ok := keys["openai"]; ok || keys["anthropic"] != "sk-ant" {
		t.Fatalf("after remove: %v", keys)
	}
}

func TestLoadRefusesFilesOthersCanReadOrWrite(t *testing.T) {
	for _, mode := range []os.FileMode{0o640, 0o604, 0o620, 0o666, 0o644} {
		f := At(t.TempDir())
		if err := f.Set("openai", "sk-secret"); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f.Path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := f.Load()
		var e *Error
		if !errors.As(err, &e) || e.Code() != string(CodeAuthFilePermissions) {
			t.Fatalf("mode %04o: err %v, want %s", mode, err, CodeAuthFilePermissions)
		}
		if !strings.Contains(err.Error(), "chmod 600 "+f.Path) || strings.Contains(err.Error(), "sk-secret") {
			t.Fatalf("mode %04o: message %q must name the chmod and never the key", mode, err)
		}
		// Resolve refuses too, even with a host variable that could have been used instead.
		if _, err := Resolve("openai", env(map[string]string{"OPENAI_API_KEY": "h"}), f); !errors.As(err, &e) {
			t.Fatalf("mode %04o: Resolve took a key past a refused file: %v", mode, err)
		}
	}
}

func TestLoadMissingAndBroken(t *testing.T) {
	f := At(t.TempDir())
	if keys, err := f.Load(); err != nil || len(keys) != 0 {
		t.Fatalf("missing file: %v %v", keys, err)
	}
	if err := os.WriteFile(f.Path, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	var e *Error
	if _, err := f.Load(); !errors.As(err, &e) || e.Code() != string(CodeAuthFileInvalid) {
		t.Fatalf("broken file: %v", err)
	}
	if err := f.Set("openai", "k"); !errors.As(err, &e) {
		t.Fatalf("Set over a broken file must refuse, not drop its keys: %v", err)
	}
}

func TestSetRefusals(t *testing.T) {
	f := At(t.TempDir())
	var e *Error
	if err := f.Set("gemini", "k"); !errors.As(err, &e) || e.Code() != string(CodeUnknownProvider) {
		t.Fatalf("unknown provider: %v", err)
	}
	if err := f.Set("openai", "  \n"); !errors.As(err, &e) || e.Code() != string(CodeEmptyKey) {
		t.Fatalf("empty key: %v", err)
	}
}

func TestResolvePrecedence(t *testing.T) {
	f := At(t.TempDir())
	all := map[string]string{"ZUNO_OPENAI_API_KEY": "ns", "OPENAI_API_KEY": "host"}
	cases := []struct {
		name   string
		env    map[string]string
		file   string
		want   string
		origin Origin
	}{
		{"namespace wins over file and host", all, "file", "ns", OriginNamespace},
		{"file wins over host", map[string]string{"OPENAI_API_KEY": "host"}, "file", "file", OriginFile},
		{"host last", map[string]string{"OPENAI_API_KEY": "host"}, "", "host", OriginHost},
		{"none", nil, "", "", OriginNone},
		{"other provider's variables are not read", map[string]string{"ZUNO_ANTHROPIC_API_KEY": "a", "ANTHROPIC_API_KEY": "b"}, "", "", OriginNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(f.Path)
			if c.file != "" {
				if err := f.Set("openai", c.file); err != nil {
					t.Fatal(err)
				}
			}
			k, err := Resolve("openai", env(c.env), f)
			if err != nil {
				t.Fatal(err)
			}
			if k.Value != c.want || k.Origin != c.origin {
				t.Fatalf("got %q from %q, want %q from %q", k.Value, k.Origin, c.want, c.origin)
			}
		})
	}
}

func TestHostWarningNamesTheMoveNotTheKey(t *testing.T) {
	f := At("/data")
	k := Key{Provider: "openai", Value: "sk-live-123", Origin: OriginHost, Source: "OPENAI_API_KEY"}
	w := HostWarning(k, f)
	for _, s := range []string{"OPENAI_API_KEY", "zuno auth set openai", "ZUNO_OPENAI_API_KEY", "unset OPENAI_API_KEY"} {
		if !strings.Contains(w, s) {
			t.Errorf("warning lacks %q: %s", s, w)
		}
	}
	if strings.Contains(w, k.Value) {
		t.Fatal("warning holds the key")
	}
}
