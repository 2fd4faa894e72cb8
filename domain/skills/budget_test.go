package skills_test

import (
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/skills"
)

// Each row is a sentence of seeds 002 §5 ("Skills and budgets") at its edges.
func TestBudgets(t *testing.T) {
	for _, c := range []struct {
		seed              string
		window            int64
		set               skills.Settings
		catalog, selected int64
	}{
		{"default: 10% of a known window", 100_000, skills.Settings{}, 4000, 10_000},
		{"10% exactly at the floor", 20_000, skills.Settings{}, 4000, 2000},
		{"below the floor: about 2,000 tokens", 19_999, skills.Settings{}, 4000, 2000},
		{"a tiny window still gets the floor", 1000, skills.Settings{}, 4000, 2000},
		{"10% exactly at the cap", 320_000, skills.Settings{}, 4000, 32_000},
		{"above the cap: 32,000 tokens", 1_000_000, skills.Settings{}, 4000, 32_000},
		{"one token over the floor's window", 20_010, skills.Settings{}, 4000, 2001},
		{"unknown window: about 8,000 tokens", 0, skills.Settings{}, 4000, 8000},
		{"maxSelectedContextTokens overrides the derived value", 1_000_000, skills.Settings{MaxSelectedContextTokens: 500}, 4000, 500},
		{"override with an unknown window", 0, skills.Settings{MaxSelectedContextTokens: 12_000}, 4000, 12_000},
		{"the override is still bound by the 32,000 cap", 0, skills.Settings{MaxSelectedContextTokens: 50_000}, 4000, 32_000},
		{"the override at the cap", 0, skills.Settings{MaxSelectedContextTokens: 32_000}, 4000, 32_000},
		{"maxContextTokens bounds only the catalogue", 100_000, skills.Settings{MaxContextTokens: 100}, 100, 10_000},
		{"maxContextTokens is bound by the cap too", 100_000, skills.Settings{MaxContextTokens: 99_999}, 32_000, 10_000},
	} {
		t.Run(c.seed, func(t *testing.T) {
			b, err := c.set.Derive(c.window)
			if err != nil {
				t.Fatal(err)
			}
			if b.Catalog != c.catalog || b.Selected != c.selected {
				t.Fatalf("catalog %d selected %d, want %d and %d", b.Catalog, b.Selected, c.catalog, c.selected)
			}
		})
	}
	for _, bad := range []skills.Settings{{MaxContextTokens: -1}, {MaxSelectedContextTokens: -1}} {
		if _, err := bad.Derive(0); domain.CodeOf(err) != domain.CodeInvalidArgument {
			t.Errorf("%+v: %v, want invalid_argument", bad, err)
		}
	}
}

// body returns a skill whose selected section costs exactly tokens (zuno.tokens.v1).
func sized(t *testing.T, name string, tokens int64) skills.Skill {
	s := skills.Skill{Name: name, Description: "d", Scope: skills.ScopeUser, Source: "/u/" + name + "/SKILL.md", SHA256: strings.Repeat("a", 64)}
	head := int64(prompt.EstimateTokens(prompt.SelectedSkillText(prompt.SelectedSkill{Name: s.Name, Source: s.Source})))
	// The header is ASCII and ends a whole number of 4-byte tokens only by chance: pad it.
	for pad := 0; pad < 4; pad++ {
		s.Body = strings.Repeat("x", pad)
		if int64(prompt.EstimateTokens(prompt.SelectedSkillText(prompt.SelectedSkill{Name: s.Name, Source: s.Source, Body: s.Body}))) == head {
			break
		}
	}
	s.Body += strings.Repeat("abcd", int(tokens-head))
	if got := int64(prompt.EstimateTokens(prompt.SelectedSkillText(prompt.SelectedSkill{Name: s.Name, Source: s.Source, Body: s.Body}))); got != tokens {
		t.Fatalf("sized %s: %d tokens, want %d", name, got, tokens)
	}
	return s
}

// "New loads or restored history over the budget fail explicitly before the provider request,
// without truncating a body or silently dropping a skill": the edges of the selected budget.
func TestSelectBudgetEdges(t *testing.T) {
	b := skills.Budgets{Catalog: 32_000, Selected: 2000, From: "test"}
	for _, c := range []struct {
		seed  string
		sizes []int64
		fails bool
	}{
		{"one body exactly at the budget loads", []int64{2000}, false},
		{"one body a token over fails", []int64{2001}, true},
		{"bodies share one aggregate budget: at it", []int64{1000, 1000}, false},
		{"bodies share one aggregate budget: one over", []int64{1000, 1001}, true},
		{"no skill is dropped to make room", []int64{60, 1941}, true},
	} {
		t.Run(c.seed, func(t *testing.T) {
			var cat []skills.Skill
			var req []string
			for i, n := range c.sizes {
				s := sized(t, "s"+string(rune('a'+i)), n)
				cat, req = append(cat, s), append(req, s.Name)
			}
			sel, err := skills.Select(skills.NewCatalog(cat, nil), "build", req, b)
			if c.fails {
				if domain.CodeOf(err) != skills.CodeSkillBudget {
					t.Fatalf("want skill_budget_exceeded, got %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(sel.Prompt.Selected) != len(c.sizes) {
				t.Fatalf("selected %d of %d", len(sel.Prompt.Selected), len(c.sizes))
			}
			for i, s := range sel.Prompt.Selected {
				if s.Body != cat[i].Body {
					t.Fatalf("body %d truncated", i)
				}
			}
		})
	}
}

// "skills.maxContextTokens only constrains the compact catalogue": a catalogue over it fails
// before the request, and at it loads; the bodies are not counted against it.
func TestSelectCatalogBudget(t *testing.T) {
	cat := skills.NewCatalog([]skills.Skill{sized(t, "big", 3000), sized(t, "other", 60)}, nil)
	sel, err := skills.Select(cat, "build", nil, skills.Budgets{Catalog: 32_000, Selected: 1})
	if err != nil {
		t.Fatal(err)
	}
	at := sel.CatalogTokens
	if _, err := skills.Select(cat, "build", nil, skills.Budgets{Catalog: at, Selected: 1}); err != nil {
		t.Fatalf("catalogue at its budget: %v", err)
	}
	if _, err := skills.Select(cat, "build", nil, skills.Budgets{Catalog: at - 1, Selected: 1}); domain.CodeOf(err) != skills.CodeSkillBudget {
		t.Fatalf("catalogue a token over: %v", err)
	}
	if _, err := skills.Select(cat, "build", []string{"big"}, skills.Budgets{Catalog: at, Selected: 2999}); domain.CodeOf(err) != skills.CodeSkillBudget {
		t.Fatalf("body over the selected budget while the catalogue fits: %v", err)
	}
}
