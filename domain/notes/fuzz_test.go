package notes_test

import (
	"path"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/notes"
)

// FuzzParseName: a note name the parser accepts is a clean, relative logical path of the
// allowed characters that can never climb out of a directory or name a host path; anything
// else is refused with a typed invalid_argument on the name field.
func FuzzParseName(f *testing.F) {
	for _, s := range []string{"plans/api.md", "a", "a/b/c.txt", "", "/etc/passwd", "../x", "a//b", "a/./b", `a\b`, "C:x",
		"a/..", "ok-name_1.2", "é.md", "a\x00b", strings.Repeat("a", 201), "trailing/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, err := notes.ParseName(name)
		if err != nil {
			var de *domain.Error
			if !errorsAs(err, &de) || de.Code() != domain.CodeInvalidArgument || de.Field != "name" {
				t.Fatalf("ParseName(%q): untyped refusal %v", name, err)
			}
			return
		}
		if got != name || path.Clean(name) != name || path.IsAbs(name) ||
			len(name) == 0 || len(name) > notes.MaxName {
			t.Fatalf("ParseName accepted %q", name)
		}
		for _, c := range []byte(name) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-/", c) >= 0) {
				t.Fatalf("ParseName accepted %q with byte %q", name, c)
			}
		}
		for _, seg := range strings.Split(name, "/") {
			if seg == ".." || seg == "." || seg == "" {
				t.Fatalf("ParseName accepted %q", name)
			}
		}
	})
}

func errorsAs(err error, de **domain.Error) bool {
	e, ok := err.(*domain.Error)
	if ok {
		*de = e
	}
	return ok
}
