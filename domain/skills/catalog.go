package skills

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zuno-run/zuno/domain"
)

// Problem is a SKILL.md the catalogue left out, and why.
type Problem struct {
	Source string `json:"source"`
	Error  string `json:"error"`
}

// Catalog is the skills discovered for one workspace, ordered by name then source, and the
// files that were not skills.
type Catalog struct {
	Skills   []Skill   `json:"skills"`
	Problems []Problem `json:"problems,omitempty"`
}

// NewCatalog orders skills (by name, then source), so every reader of one set of directories
// sees one catalogue.
func NewCatalog(skills []Skill, problems []Problem) Catalog {
	s := slices.Clone(skills)
	slices.SortFunc(s, func(a, b Skill) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Source, b.Source))
	})
	return Catalog{Skills: s, Problems: slices.Clone(problems)}
}

// Ambiguous lists the names that more than one source holds.
func (c Catalog) Ambiguous() []string {
	var out []string
	for i := 1; i < len(c.Skills); i++ {
		if c.Skills[i].Name == c.Skills[i-1].Name && !slices.Contains(out, c.Skills[i].Name) {
			out = append(out, c.Skills[i].Name)
		}
	}
	return out
}

// Find resolves one reference: "name" alone, which must name exactly one skill, or
// "name@source", where source is the scope (user, project), the SKILL.md's path or its
// directory, matched exactly (a cleaned absolute path, no pattern). A missing skill is
// CodeSkillNotFound, naming the skills there are; several under a bare name CodeSkillAmbiguous,
// naming each exact reference; a file of that name that is not a skill is its CodeSkillInvalid.
func (c Catalog) Find(ref string) (Skill, error) {
	name, source, qualified := strings.Cut(strings.TrimSpace(ref), "@")
	var hits []Skill
	for _, s := range c.Skills {
		if s.Name == name && (!qualified || matchesSource(s, source)) {
			hits = append(hits, s)
		}
	}
	switch {
	case len(hits) == 1:
		return hits[0], nil
	case len(hits) > 1:
		refs := make([]string, len(hits))
		for i, h := range hits {
			refs[i] = h.Ref()
		}
		e := domain.NewError(CodeSkillAmbiguous, fmt.Sprintf("skill %q is defined by %d sources: %s", ref, len(hits), strings.Join(refs, ", ")),
			"name the one meant exactly, as name@source (the scope user or project, or the SKILL.md path)")
		e.ID, e.Valid = ref, refs
		return Skill{}, e
	}
	for _, p := range c.Problems {
		if filepath.Base(filepath.Dir(p.Source)) == name && (!qualified || p.Source == source || filepath.Dir(p.Source) == source) {
			e := domain.NewError(CodeSkillInvalid, fmt.Sprintf("skill %q is not loadable: %s", ref, p.Error), "fix the SKILL.md file")
			e.ID = ref
			return Skill{}, e
		}
	}
	names := c.Names()
	e := domain.NewError(CodeSkillNotFound, fmt.Sprintf("no skill %q in the configured skill directories", ref),
		"add the skill's directory with its SKILL.md, or use one of: "+orNone(strings.Join(names, ", ")))
	e.ID, e.Valid = ref, names
	return Skill{}, e
}

func matchesSource(s Skill, source string) bool {
	if source == s.Scope {
		return true
	}
	if !filepath.IsAbs(source) {
		return false
	}
	clean := filepath.Clean(source)
	return clean == s.Source || clean == filepath.Dir(s.Source)
}

// Names are the distinct skill names, sorted.
func (c Catalog) Names() []string {
	var out []string
	for _, s := range c.Skills {
		if len(out) == 0 || out[len(out)-1] != s.Name {
			out = append(out, s.Name)
		}
	}
	return out
}

// Resolve resolves an agent's requiredSkills, in the order listed, before any request
// (seeds 002 §5): the first missing, ambiguous or invalid one fails the whole list, nothing
// is skipped. A skill listed twice (by two spellings) is selected once.
func (c Catalog) Resolve(agentName string, required []string) ([]Skill, error) {
	var out []Skill
	for i, ref := range required {
		s, err := c.Find(ref)
		if err != nil {
			if e, ok := err.(*domain.Error); ok {
				e.Field = fmt.Sprintf("agents.%s.requiredSkills[%d]", agentName, i)
			}
			return nil, err
		}
		if !slices.ContainsFunc(out, func(o Skill) bool { return o.Source == s.Source }) {
			out = append(out, s)
		}
	}
	return out, nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
