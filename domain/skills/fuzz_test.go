package skills_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/skills"
)

// FuzzParse: any bytes either parse into a skill whose fields hold the rules, or are refused
// with skill_invalid; never a panic, never another error.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"---\nname: a\ndescription: d\n---\nbody", "---\r\nname: a\r\ndescription: d\r\n---\r\n", "---\n---\n",
		"---\nname: &x a\ndescription: *x\n---\n", "---\nname: !!binary YQ==\ndescription: d\n---\n", "---\n: :\n---"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := skills.Parse(data, "a", skills.ScopeProject, "/r/a/SKILL.md")
		if err != nil {
			if domain.CodeOf(err) != skills.CodeSkillInvalid {
				t.Fatalf("error of another kind: %v", err)
			}
			return
		}
		if s.Name != "a" || strings.TrimSpace(s.Description) == "" || len(s.Description) > skills.MaxDescriptionBytes ||
			strings.ContainsAny(s.Description, "\n\r") || !utf8.ValidString(s.Body) || len(s.SHA256) != 64 {
			t.Fatalf("accepted a skill that breaks a rule: %+v", s)
		}
	})
}
