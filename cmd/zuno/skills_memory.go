package main

import (
	"context"
	"fmt"
	"path/filepath"

	adskills "github.com/zuno-run/zuno/adapters/skills"
	"github.com/zuno-run/zuno/adapters/tools/catalog"
	"github.com/zuno-run/zuno/adapters/tools/memorytool"
	zapp "github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain/memory"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/skills"
)

// skillsConfig is skills.* (docs/skills.md). Paths are more user-scope skill directories,
// which only a trusted layer may name (adapters/config trust.go).
type skillsConfig struct {
	Paths                    []string `json:"paths"`
	MaxContextTokens         int64    `json:"maxContextTokens"`
	MaxSelectedContextTokens int64    `json:"maxSelectedContextTokens"`
}

func (s skillsConfig) settings() skills.Settings {
	return skills.Settings{MaxContextTokens: s.MaxContextTokens, MaxSelectedContextTokens: s.MaxSelectedContextTokens}
}

// memoryConfig is memory.* (docs/memory.md).
type memoryConfig struct {
	Enabled bool `json:"enabled"`
	// Review is "auto" (the default) or "approve"; only a trusted layer may set it.
	Review string `json:"review"`
}

// checkSkillsMemory refuses the skills and memory values no reader could act on.
func (c config) checkSkillsMemory() error {
	for _, p := range c.Skills.Paths {
		if !filepath.IsAbs(p) {
			return &configError{fmt.Sprintf("skills.paths: %q is not an absolute path: name each skill directory in full", p)}
		}
	}
	if _, err := c.Skills.settings().Derive(0); err != nil {
		return &configError{"skills: " + err.Error()}
	}
	if r := c.Memory.Review; r != "" && r != memory.ReviewAuto && r != memory.ReviewApprove {
		return &configError{fmt.Sprintf("memory.review: %q is not a review policy: use auto (apply updates at once) or approve (hold them for zuno memory approve)", r)}
	}
	return nil
}

// workspaceSkills discovers the skills of a workspace's configuration: the user's directory,
// skills.paths, and the project's .zuno/skills (docs/skills.md).
func workspaceSkills(cfg config) (skills.Catalog, error) {
	return adskills.Discover(adskills.Dirs(cfg.Layers.Paths.GlobalDir, cfg.Skills.Paths, cfg.Layers.Paths.ProjectRoot))
}

// memoryScope is the memory scope of a workspace: its repository root, else the workspace.
func memoryScope(cfg config, dir string) string {
	root := cfg.Layers.Paths.ProjectRoot
	if root == "" {
		root, _ = filepath.Abs(dir)
	}
	return memory.Scope(root)
}

// withSkillsAndMemory completes a session's configuration and tool catalogue with the
// workspace's skills and, when enabled, the project memory over backend (nil: the tools are
// declared for a report, and the memory lane is left out).
func withSkillsAndMemory(sc *zapp.SessionConfig, c *catalog.Catalog, cfg config, dir string, backend memorytool.Backend) error {
	cat, err := workspaceSkills(cfg)
	if err != nil {
		return err
	}
	sc.Skills, sc.SkillBudget = cat, cfg.Skills.settings()
	c.Skills = cat
	if c.SkillBudgets, err = cfg.Skills.settings().Derive(cfg.ContextWindow); err != nil {
		return err
	}
	if !cfg.Memory.Enabled || backend == nil {
		return nil
	}
	scope := memoryScope(cfg, dir)
	c.Memory, c.MemoryConfig = backend, memorytool.Config{Scope: scope, Review: cfg.Memory.Review}
	sc.Memory = func(ctx context.Context) (*prompt.MemoryPrompt, error) {
		st, err := backend.Memory(ctx, scope)
		if err != nil || st.Content == "" {
			return nil, err
		}
		return &prompt.MemoryPrompt{Scope: scope, Revision: st.Revision, Content: st.Content}, nil
	}
	return nil
}
