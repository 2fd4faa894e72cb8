package queries

import (
	"github.com/zuno-run/zuno/domain/agent"
	"github.com/zuno-run/zuno/domain/skills"
)

// AgentSkillSettings are the workspace's skills as debug agent reports them.
type AgentSkillSettings struct {
	Catalog       skills.Catalog
	Budget        skills.Settings
	ContextWindow int64
}

// SkillsReport is the Skill part of debug agent (seeds 002 §10.2): the required skills as a
// turn would resolve them, how many are available and which names are ambiguous, the two
// budgets and what each lane costs, the files that are not skills, and a bounded preview.
type SkillsReport struct {
	Required       []skills.Skill   `json:"required"`
	RequiredError  string           `json:"requiredError,omitempty"`
	Available      int              `json:"available"`
	Ambiguous      []string         `json:"ambiguous"`
	Budgets        skills.Budgets   `json:"budgets"`
	CatalogTokens  int64            `json:"catalogTokens"`
	SelectedTokens int64            `json:"selectedTokens"`
	Problems       []skills.Problem `json:"problems"`
	Preview        []skills.Skill   `json:"preview"`
}

// maxPreview bounds the catalogue's preview.
const maxPreview = 20

func skillsReport(ag agent.Agent, s *AgentSkillSettings) *SkillsReport {
	if s == nil {
		return nil
	}
	r := &SkillsReport{Available: len(s.Catalog.Skills), Ambiguous: s.Catalog.Ambiguous(), Problems: s.Catalog.Problems,
		Required: []skills.Skill{}, Preview: s.Catalog.Skills[:min(len(s.Catalog.Skills), maxPreview)]}
	if r.Ambiguous == nil {
		r.Ambiguous = []string{}
	}
	if r.Problems == nil {
		r.Problems = []skills.Problem{}
	}
	b, err := s.Budget.Derive(s.ContextWindow)
	if err != nil {
		r.RequiredError = err.Error()
		return r
	}
	r.Budgets = b
	if req, err := s.Catalog.Resolve(ag.Name, ag.RequiredSkills); err != nil {
		r.RequiredError = err.Error()
	} else {
		r.Required = req
	}
	sel, err := skills.Select(s.Catalog, ag.Name, ag.RequiredSkills, b)
	r.CatalogTokens, r.SelectedTokens = sel.CatalogTokens, sel.SelectedTokens
	if err != nil && r.RequiredError == "" {
		r.RequiredError = err.Error()
	}
	return r
}
