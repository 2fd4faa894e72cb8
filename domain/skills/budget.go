package skills

import (
	"fmt"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/prompt"
)

// The selected-body budget of seeds 002 §5: 10% of a known window, at least FloorTokens and
// at most CapTokens; UnknownWindowTokens when the window is unknown. CapTokens bounds an
// override too.
const (
	WindowPercent       = 10
	FloorTokens         = 2000
	CapTokens           = 32000
	UnknownWindowTokens = 8000
	// DefaultCatalogTokens is the catalogue's budget when skills.maxContextTokens is unset:
	// seeds 002 gives the catalogue its own budget without a figure; 4,000 tokens hold about
	// fifty one-line entries. CapTokens bounds it too.
	DefaultCatalogTokens = 4000
)

// Settings are the skills.* budget keys (0: unset).
type Settings struct {
	MaxContextTokens         int64 `json:"maxContextTokens,omitempty"`
	MaxSelectedContextTokens int64 `json:"maxSelectedContextTokens,omitempty"`
}

// Budgets are the two budgets in effect for one model window, and how each was derived.
type Budgets struct {
	Catalog  int64  `json:"catalogTokens"`
	Selected int64  `json:"selectedTokens"`
	From     string `json:"selectedFrom"`
}

// Derive computes the budgets for a model window (0: unknown). A negative setting is
// CodeInvalidArgument; a setting above CapTokens is held to it (seeds 002 §5: an override
// "remains bound by the 32,000-token cap").
func (s Settings) Derive(window int64) (Budgets, error) {
	if s.MaxContextTokens < 0 || s.MaxSelectedContextTokens < 0 {
		return Budgets{}, domain.Invalid("skills", fmt.Sprintf("maxContextTokens %d, maxSelectedContextTokens %d", s.MaxContextTokens, s.MaxSelectedContextTokens),
			"use a positive number of tokens, or leave the key out for the default")
	}
	b := Budgets{Catalog: DefaultCatalogTokens}
	if s.MaxContextTokens > 0 {
		b.Catalog = min(s.MaxContextTokens, CapTokens)
	}
	switch {
	case s.MaxSelectedContextTokens > 0:
		b.Selected, b.From = min(s.MaxSelectedContextTokens, CapTokens), "skills.maxSelectedContextTokens"
	case window > 0:
		b.Selected, b.From = min(max(window*WindowPercent/100, FloorTokens), CapTokens), fmt.Sprintf("%d%% of the %d-token window", WindowPercent, window)
	default:
		b.Selected, b.From = UnknownWindowTokens, "the window is unknown"
	}
	return b, nil
}

// Selection is what a turn's prompt holds of the skills, within its budgets.
type Selection struct {
	Prompt  *prompt.SkillsPrompt
	Budgets Budgets
	// CatalogTokens and SelectedTokens are what the two lanes cost, measured as the receipt
	// measures their sections (zuno.tokens.v1).
	CatalogTokens, SelectedTokens int64
	Selected                      []Skill
}

// Select builds the Skill lanes for an agent: its requiredSkills resolved (Resolve) and the
// catalogue, each held to its budget. Over a budget is CodeSkillBudget before any request:
// nothing is truncated and no skill is dropped (seeds 002 §5). An empty catalogue and no
// requirement is no lane at all.
func Select(c Catalog, agentName string, required []string, b Budgets) (Selection, error) {
	sel, err := c.Resolve(agentName, required)
	if err != nil {
		return Selection{}, err
	}
	out := Selection{Budgets: b, Selected: sel}
	if len(c.Skills) == 0 {
		return out, nil
	}
	sp := &prompt.SkillsPrompt{}
	for _, s := range sel {
		ps := prompt.SelectedSkill{Name: s.Name, Source: s.Source, FileSHA256: s.SHA256, Trust: Trust(s.Scope), Body: s.Body}
		sp.Selected = append(sp.Selected, ps)
		out.SelectedTokens += int64(prompt.EstimateTokens(prompt.SelectedSkillText(ps)))
	}
	ambiguous := c.Ambiguous()
	for _, s := range c.Skills {
		amb := false
		for _, a := range ambiguous {
			amb = amb || a == s.Name
		}
		sp.Index = append(sp.Index, prompt.SkillEntry{Name: s.Name, Description: s.Description, Scope: s.Scope, Source: s.Source,
			Ambiguous: amb, Trust: Trust(s.Scope)})
	}
	out.CatalogTokens = int64(prompt.EstimateTokens(prompt.SkillIndexText(sp.Index)))
	if err := b.checkSelected(out.SelectedTokens, "the required skills"); err != nil {
		return Selection{}, err
	}
	if out.CatalogTokens > b.Catalog {
		return Selection{}, overBudget(fmt.Sprintf("the skill catalogue of %d skills is %d tokens, over its budget of %d (skills.maxContextTokens)",
			len(c.Skills), out.CatalogTokens, b.Catalog),
			"raise skills.maxContextTokens (at most 32000), or remove skill directories or skills from them")
	}
	out.Prompt = sp
	return out, nil
}

// CheckSelected holds the selected bodies (tokens in all, with the one about to be added) to
// the selected budget.
func (b Budgets) CheckSelected(tokens int64, what string) error { return b.checkSelected(tokens, what) }

func (b Budgets) checkSelected(tokens int64, what string) error {
	if tokens <= b.Selected {
		return nil
	}
	return overBudget(fmt.Sprintf("%s take %d tokens, over the selected-skill budget of %d (%s)", what, tokens, b.Selected, b.From),
		"select fewer or shorter skills, or set skills.maxSelectedContextTokens (at most 32000); nothing is truncated")
}

func overBudget(msg, fix string) error { return domain.NewError(CodeSkillBudget, msg, fix) }

// Trust is the prompt trust of a scope's text.
func Trust(scope string) string {
	if scope == ScopeUser {
		return prompt.TrustUser
	}
	return prompt.TrustProject
}
