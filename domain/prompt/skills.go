package prompt

import (
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// SkillsPrompt is what the Skill lanes show (docs/skills.md): the bodies selected before the
// request (an agent's requiredSkills) and the compact catalogue of every skill available.
// domain/skills builds it and holds both to their budgets before Assemble sees it.
type SkillsPrompt struct {
	Selected []SelectedSkill
	Index    []SkillEntry
}

// SelectedSkill is one selected body and where it came from.
type SelectedSkill struct {
	Name string
	// Source is the SKILL.md's path; FileSHA256 the digest of its bytes as read, recorded as
	// the section's sourceSha256 so an auditor holding the file can check it.
	Source, FileSHA256 string
	// Trust is TrustUser or TrustProject: who could have written the file.
	Trust string
	Body  string
}

// SkillEntry is one line of the catalogue.
type SkillEntry struct {
	Name, Description, Scope, Source string
	// Ambiguous: another source holds a skill of the same name, so the line names its source.
	Ambiguous bool
	Trust     string
}

// Section ids of the Skill lanes.
const (
	SectionSkillIndex    = "skills.index"
	selectedSkillSection = "skill:"
)

// SelectedSkillText is the content of a selected skill's section: a host header naming the
// skill and its file, then the body verbatim. Budgets measure exactly this text.
func SelectedSkillText(s SelectedSkill) string {
	return "Skill " + s.Name + " from " + s.Source + ", selected before this request. Follow its instructions " +
		"where they apply to the task; a skill grants no tool and no permission.\n\n" + s.Body
}

// SkillIndexText is the content of the catalogue's section, "" for no entries.
func SkillIndexText(entries []SkillEntry) string {
	if len(entries) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Skills available. When a skill's description matches the task, load its instructions with the skill tool " +
		"(name, and source where a name is listed twice); a skill grants no tool and no permission.\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "- %s (%s", e.Name, e.Scope)
		if e.Ambiguous {
			b.WriteString(" " + e.Source)
		}
		b.WriteString("): " + e.Description + "\n")
	}
	return b.String()
}

// addSkills adds the selected bodies, then the catalogue, in the lanes' order. The
// catalogue's trust is its least trusted entry's: one project skill makes its lines the
// checkout's words.
func (l *sectionList) addSkills(sp *SkillsPrompt) error {
	if sp == nil {
		return nil
	}
	for i, s := range sp.Selected {
		if s.Source == "" || s.FileSHA256 == "" {
			return invalid(fmt.Sprintf("skills.selected[%d]", i), "has no source or digest", "select skills from a catalogue")
		}
		sec := events.PromptSection{ID: selectedSkillSection + s.Name + "@" + s.Source, Lane: LaneSelectedSkills, Source: s.Source,
			Role: string(model.RoleDeveloper), Trust: s.Trust, Priority: priority(s.Trust, 0), SourceSHA256: s.FileSHA256}
		if err := l.add(fmt.Sprintf("skills.selected[%d]", i), sec, SelectedSkillText(s), SelectedSkillText(s)); err != nil {
			return err
		}
	}
	text := SkillIndexText(sp.Index)
	trust := TrustUser
	for _, e := range sp.Index {
		if e.Trust == TrustProject {
			trust = TrustProject
		}
	}
	return l.add("skills.index", events.PromptSection{ID: SectionSkillIndex, Lane: LaneSkillIndex, Source: "zuno-skills:index",
		Role: string(model.RoleDeveloper), Trust: trust, Priority: priority(trust, 0)}, text, text)
}
