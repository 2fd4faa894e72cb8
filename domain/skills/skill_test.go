package skills_test

import (
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/skills"
)

// The attacks on a SKILL.md, each refused with skill_invalid, and the spellings that load.
func TestParse(t *testing.T) {
	ok := "---\nname: go-review\ndescription: How we review Go.\n---\nBody line.\n"
	for _, c := range []struct {
		name, file string
		fails      string // a word of the message, "" when it loads
	}{
		{"plain", ok, ""},
		{"CRLF endings", strings.ReplaceAll(ok, "\n", "\r\n"), ""},
		{"extra keys of the format are ignored", "---\nname: go-review\ndescription: d\nallowed-tools: [shell]\nlicense: MIT\n---\nb", ""},
		{"quoted name", "---\nname: \"go-review\"\ndescription: d\n---\n", ""},
		{"folded description", "---\nname: go-review\ndescription: >\n  two\n  lines\n---\n", ""},
		{"no front matter", "name: go-review\n", "front matter"},
		{"unterminated front matter", "---\nname: go-review\ndescription: d\n", "front matter"},
		{"empty file", "", "front matter"},
		{"not YAML", "---\nname: [\n---\n", "not YAML"},
		{"name missing", "---\ndescription: d\n---\n", "no name"},
		{"name a number", "---\nname: 12\ndescription: d\n---\n", "no name"},
		{"name a list", "---\nname: [go-review]\ndescription: d\n---\n", "no name"},
		{"name a mapping", "---\nname: {a: b}\ndescription: d\n---\n", "no name"},
		{"name with upper case", "---\nname: Go-Review\ndescription: d\n---\n", "holds"},
		{"name with a slash", "---\nname: go/review\ndescription: d\n---\n", "holds"},
		{"name with dots", "---\nname: ../x\ndescription: d\n---\n", "holds"},
		{"leading hyphen", "---\nname: -go\ndescription: d\n---\n", "hyphen"},
		{"double hyphen", "---\nname: go--review\ndescription: d\n---\n", "hyphen"},
		{"name too long", "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\n", "1 to 64"},
		{"name not the directory's", "---\nname: other\ndescription: d\n---\n", "inside the directory"},
		{"description missing", "---\nname: go-review\n---\n", "no description"},
		{"description blank", "---\nname: go-review\ndescription: \"  \"\n---\n", "no description"},
		{"description too long", "---\nname: go-review\ndescription: " + strings.Repeat("d", 1025) + "\n---\n", "description is"},
		{"duplicate key", "---\nname: go-review\nname: go-review\ndescription: d\n---\n", "not YAML"},
		{"alias bomb", "---\na: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\nname: go-review\ndescription: d\n---\n", ""},
		{"invalid UTF-8", "---\nname: go-review\ndescription: \xff\n---\n", "UTF-8"},
		{"front matter too large", "---\nname: go-review\ndescription: d\n#" + strings.Repeat("x", skills.MaxFrontMatterBytes) + "\n---\n", "front matter"},
		{"file too large", ok + strings.Repeat("x", skills.MaxFileBytes), "bytes, more than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := skills.Parse([]byte(c.file), "go-review", skills.ScopeUser, "/u/go-review/SKILL.md")
			if c.fails == "" {
				if err != nil {
					t.Fatal(err)
				}
				if s.Name != "go-review" || s.Description == "" || len(s.SHA256) != 64 {
					t.Fatalf("parsed %+v", s)
				}
				return
			}
			if domain.CodeOf(err) != skills.CodeSkillInvalid || !strings.Contains(err.Error(), c.fails) {
				t.Fatalf("want skill_invalid with %q, got %v", c.fails, err)
			}
		})
	}
	s, _ := skills.Parse([]byte(ok), "go-review", skills.ScopeUser, "/u/go-review/SKILL.md")
	if s.Body != "Body line.\n" || s.Description != "How we review Go." {
		t.Fatalf("body %q description %q", s.Body, s.Description)
	}
}

// "requiredSkills resolve by name and exact source; missing or one name from several sources
// fails closed."
func TestResolve(t *testing.T) {
	mk := func(name, scope, dir string) skills.Skill {
		return skills.Skill{Name: name, Description: "d", Scope: scope, Source: dir + "/" + name + "/SKILL.md", SHA256: strings.Repeat("0", 64)}
	}
	cat := skills.NewCatalog([]skills.Skill{mk("lint", skills.ScopeUser, "/home/u/skills"), mk("lint", skills.ScopeProject, "/repo/.zuno/skills"),
		mk("review", skills.ScopeProject, "/repo/.zuno/skills")}, []skills.Problem{{Source: "/repo/.zuno/skills/broken/SKILL.md", Error: "no description"}})
	for _, c := range []struct {
		ref, code, source string
	}{
		{"review", "", "/repo/.zuno/skills/review/SKILL.md"},
		{"lint", skills.CodeSkillAmbiguous, ""},
		{"lint@user", "", "/home/u/skills/lint/SKILL.md"},
		{"lint@project", "", "/repo/.zuno/skills/lint/SKILL.md"},
		{"lint@/home/u/skills/lint/SKILL.md", "", "/home/u/skills/lint/SKILL.md"},
		{"lint@/home/u/skills/lint", "", "/home/u/skills/lint/SKILL.md"},
		{"lint@/home/u/skills/lint/", "", "/home/u/skills/lint/SKILL.md"},
		{"lint@/home/u/skills/lint/../lint", "", "/home/u/skills/lint/SKILL.md"},
		{"lint@/home/u/skills", skills.CodeSkillNotFound, ""},
		{"lint@/home/u/*", skills.CodeSkillNotFound, ""},
		{"lint@home/u/skills/lint", skills.CodeSkillNotFound, ""},
		{"lint@USER", skills.CodeSkillNotFound, ""},
		{"Lint", skills.CodeSkillNotFound, ""},
		{"missing", skills.CodeSkillNotFound, ""},
		{"", skills.CodeSkillNotFound, ""},
		{"broken", skills.CodeSkillInvalid, ""},
	} {
		t.Run(c.ref, func(t *testing.T) {
			s, err := cat.Find(c.ref)
			if c.code != "" {
				if domain.CodeOf(err) != c.code {
					t.Fatalf("want %s, got %v", c.code, err)
				}
				return
			}
			if err != nil || s.Source != c.source {
				t.Fatalf("got %+v, %v", s, err)
			}
		})
	}
	_, err := cat.Resolve("build", []string{"review", "missing"})
	var e *domain.Error
	if !asDomain(err, &e) || e.Field != "agents.build.requiredSkills[1]" {
		t.Fatalf("the failing entry is named: %v", err)
	}
	got, err := cat.Resolve("build", []string{"review", "review@project"})
	if err != nil || len(got) != 1 {
		t.Fatalf("one skill named twice is selected once: %v %v", got, err)
	}
}

func asDomain(err error, e **domain.Error) bool {
	d, ok := err.(*domain.Error)
	*e = d
	return ok
}
