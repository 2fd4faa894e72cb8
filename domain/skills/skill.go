// Package skills is the Skill policy (docs/skills.md): what a SKILL.md file is, how the
// skills of the configured directories form a catalogue, how an agent's requiredSkills resolve
// against it (by name and exact source, failing closed on a missing or ambiguous one), and the
// two token budgets of seeds 002 §5, one for the compact catalogue and one for the selected
// bodies. It does no I/O: adapters/skills reads the directories and hands over bytes.
package skills

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/zuno-run/zuno/domain"
)

// FileName is the one file a skill directory holds its instructions in.
const FileName = "SKILL.md"

// Limits of one skill file, checked before any YAML is parsed.
const (
	// MaxFileBytes bounds a SKILL.md: 256 KiB is eight times the largest selected-body budget
	// (32,000 tokens of four bytes), so no file that could ever be selected is refused by it.
	MaxFileBytes = 256 << 10
	// MaxFrontMatterBytes bounds the YAML between the two --- lines: a name and a description
	// need a few hundred bytes, and YAML is parsed only after this bound holds.
	MaxFrontMatterBytes = 8 << 10
	// MaxNameBytes and MaxDescriptionBytes bound the two fields (the Agent Skills format's
	// own limits).
	MaxNameBytes        = 64
	MaxDescriptionBytes = 1024
)

// Stable codes.
const (
	// CodeSkillInvalid: a SKILL.md that is not a skill (no front matter, a bad name or
	// description, not UTF-8, too large); the catalogue leaves it out and says why.
	CodeSkillInvalid = "skill_invalid"
	// CodeSkillNotFound: no skill of the catalogue has the name (and source) asked for.
	CodeSkillNotFound = "skill_not_found"
	// CodeSkillAmbiguous: several sources hold a skill of that name and none was named.
	CodeSkillAmbiguous = "skill_ambiguous"
	// CodeSkillBudget: the selected bodies or the catalogue are over their token budget;
	// nothing is truncated and no request is sent.
	CodeSkillBudget = "skill_budget_exceeded"
)

// Scopes: where a skill directory was configured. The scope decides the prompt trust of its
// text: a user skill is the user's own (trusted layers), a project skill is the checkout's.
const (
	ScopeUser    = "user"
	ScopeProject = "project"
)

// Skill is one parsed SKILL.md.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Scope is ScopeUser or ScopeProject; Source the SKILL.md file's absolute path.
	Scope  string `json:"scope"`
	Source string `json:"source"`
	// SHA256 is the digest of the file's bytes as read: what a receipt records, so an auditor
	// holding the file can check it.
	SHA256 string `json:"sha256"`
	// Body is the text after the front matter: the instructions a selection loads.
	Body string `json:"-"`
}

// Ref is "name@source" with the source in full, the one spelling that names a skill exactly.
func (s Skill) Ref() string { return s.Name + "@" + s.Source }

// frontMatter are the fields Zuno reads; other keys of the Agent Skills format (license,
// allowed-tools, metadata) are accepted and ignored: a skill grants no tool and no permission
// (seeds 002 §5), whatever its file says.
type frontMatter struct {
	Name        yaml.Node `yaml:"name"`
	Description yaml.Node `yaml:"description"`
}

// Parse reads one SKILL.md: "---" on the first line, YAML front matter holding name and
// description, "---" on a line of its own, then the body. dirName is the name of the
// directory holding the file, which the skill's name must equal, so one name means one
// directory. Every refusal is a *domain.Error with CodeSkillInvalid.
func Parse(data []byte, dirName, scope, source string) (Skill, error) {
	bad := func(msg, fix string) (Skill, error) {
		e := domain.NewError(CodeSkillInvalid, source+": "+msg, fix)
		e.ID = source
		return Skill{}, e
	}
	if len(data) > MaxFileBytes {
		return bad(fmt.Sprintf("is %d bytes, more than %d", len(data), MaxFileBytes), "split it into smaller skills")
	}
	if !utf8.Valid(data) {
		return bad("is not valid UTF-8", "save the file as UTF-8: it is sent to the model verbatim")
	}
	head, body, ok := splitFrontMatter(data)
	if !ok {
		return bad("does not start with YAML front matter between two --- lines",
			"begin the file with ---, a line name: <name>, a line description: <what it is for>, and ---")
	}
	if len(head) > MaxFrontMatterBytes {
		return bad(fmt.Sprintf("has %d bytes of front matter, more than %d", len(head), MaxFrontMatterBytes), "keep the front matter to name and description")
	}
	var fm frontMatter
	if err := yaml.Unmarshal(head, &fm); err != nil {
		return bad("front matter is not YAML: "+oneLine(err.Error()), "write the front matter as YAML: name: <name> and description: <text>")
	}
	name, ok := scalar(fm.Name)
	if !ok {
		return bad("front matter has no name string", "add name: "+dirName)
	}
	if err := CheckName(name); err != nil {
		return bad(err.Error(), "use lower-case letters, digits and single hyphens, at most 64 bytes")
	}
	if name != dirName {
		return bad(fmt.Sprintf("names the skill %q inside the directory %q", name, dirName), "make the name and the directory's name the same")
	}
	desc, ok := scalar(fm.Description)
	desc = strings.TrimSpace(desc)
	if !ok || desc == "" {
		return bad("front matter has no description string", "add description: <when the skill applies>; the catalogue shows it to the model")
	}
	if len(desc) > MaxDescriptionBytes {
		return bad(fmt.Sprintf("description is %d bytes, more than %d", len(desc), MaxDescriptionBytes), "shorten the description; the body holds the details")
	}
	sum := sha256.Sum256(data)
	return Skill{Name: name, Description: oneLine(desc), Scope: scope, Source: source,
		SHA256: hex.EncodeToString(sum[:]), Body: string(body)}, nil
}

// splitFrontMatter cuts the file at its two --- lines (LF or CRLF endings).
func splitFrontMatter(data []byte) (head, body []byte, ok bool) {
	first, rest, found := bytes.Cut(data, []byte("\n"))
	if !found || string(bytes.TrimSuffix(first, []byte("\r"))) != "---" {
		return nil, nil, false
	}
	for off := 0; off <= len(rest); {
		line, after, more := bytes.Cut(rest[off:], []byte("\n"))
		if string(bytes.TrimSuffix(line, []byte("\r"))) == "---" {
			return rest[:off], after, true
		}
		if !more {
			break
		}
		off += len(line) + 1
	}
	return nil, nil, false
}

// scalar is a node's string when it is a plain scalar string: a mapping, a list or a tagged
// number for a name is refused rather than printed.
func scalar(n yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!str" && n.Tag != "") {
		return "", false
	}
	return n.Value, true
}

// CheckName refuses a skill name that is not 1 to 64 bytes of lower-case ASCII letters,
// digits and single inner hyphens.
func CheckName(name string) error {
	if name == "" || len(name) > MaxNameBytes {
		return fmt.Errorf("name %q must be 1 to %d bytes", name, MaxNameBytes)
	}
	if name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return fmt.Errorf("name %q begins or ends with a hyphen, or doubles one", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return fmt.Errorf("name %q holds %q", name, string(rune(c)))
		}
	}
	return nil
}

// oneLine folds line breaks to spaces, so a description or a parser message stays one line of
// the catalogue or of an error.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
