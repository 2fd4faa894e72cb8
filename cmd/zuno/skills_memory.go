package main

import (
	"github.com/zuno-run/zuno/adapters/tools/catalog"
	zapp "github.com/zuno-run/zuno/commands/app"
)

// skillsConfig is skills.* (docs/skills.md). Paths are more user-scope skill directories,
// which only a trusted layer may name (adapters/config trust.go).
type skillsConfig struct {
	Paths                    []string `json:"paths"`
	MaxContextTokens         int64    `json:"maxContextTokens"`
	MaxSelectedContextTokens int64    `json:"maxSelectedContextTokens"`
}

// memoryConfig is memory.* (docs/memory.md).
type memoryConfig struct {
	Enabled bool `json:"enabled"`
	// Review is "auto" (the default) or "approve"; only a trusted layer may set it.
	Review string `json:"review"`
}

// checkSkillsMemory refuses the skills and memory values no reader could act on.
func (c config) checkSkillsMemory() error {
	if err := zapp.CheckSkillsMemory(c.Skills.Paths, c.Skills.MaxContextTokens, c.Skills.MaxSelectedContextTokens, c.Memory.Review); err != nil {
		return &configError{err.Error()}
	}
	return nil
}

// skillsMemory is the configuration's skills and memory settings for a workspace.
func (c config) skillsMemory(dir string) zapp.SkillsMemory {
	x := zapp.SkillsMemory{GlobalDir: c.Layers.Paths.GlobalDir, ProjectRoot: c.Layers.Paths.ProjectRoot, Workspace: dir,
		SkillPaths: c.Skills.Paths, ContextWindow: c.ContextWindow, MemoryEnabled: c.Memory.Enabled, MemoryReview: c.Memory.Review}
	x.Budget.MaxContextTokens, x.Budget.MaxSelectedContextTokens = c.Skills.MaxContextTokens, c.Skills.MaxSelectedContextTokens
	return x
}

// withSkillsAndMemory completes a session's configuration and catalogue (zapp.WithSkillsAndMemory).
func withSkillsAndMemory(sc *zapp.SessionConfig, c *catalog.Catalog, cfg config, dir string, backend zapp.MemoryBackend) error {
	return zapp.WithSkillsAndMemory(sc, c, cfg.skillsMemory(dir), backend)
}
