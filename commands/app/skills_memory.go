package app

import (
	"context"
	"fmt"
	"path/filepath"

	adskills "github.com/zuno-run/zuno/adapters/skills"
	"github.com/zuno-run/zuno/adapters/tools/catalog"
	"github.com/zuno-run/zuno/adapters/tools/memorytool"
	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/domain/memory"
	"github.com/zuno-run/zuno/domain/prompt"
	"github.com/zuno-run/zuno/domain/skills"
	"github.com/zuno-run/zuno/events"
)

// SkillsMemory are the skills.* and memory.* settings of one workspace's configuration
// (docs/skills.md, docs/memory.md), with where its layers were found.
type SkillsMemory struct {
	// GlobalDir is the user's configuration directory; ProjectRoot the workspace's repository
	// root ("" outside one); Workspace the session's directory.
	GlobalDir, ProjectRoot, Workspace string
	SkillPaths                        []string
	Budget                            skills.Settings
	ContextWindow                     int64
	MemoryEnabled                     bool
	MemoryReview                      string
}

// CheckSkillsMemory refuses the values no reader could act on (bad_config at load).
func CheckSkillsMemory(paths []string, maxContext, maxSelected int64, review string) error {
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("skills.paths: %q is not an absolute path: name each skill directory in full", p)
		}
	}
	if _, err := (skills.Settings{MaxContextTokens: maxContext, MaxSelectedContextTokens: maxSelected}).Derive(0); err != nil {
		return fmt.Errorf("skills: %w", err)
	}
	if review != "" && review != memory.ReviewAuto && review != memory.ReviewApprove {
		return fmt.Errorf("memory.review: %q is not a review policy: use auto (apply updates at once) or approve (hold them for zuno memory approve)", review)
	}
	return nil
}

// MemoryScope is the memory scope of a workspace: its repository root, else the workspace.
func MemoryScope(projectRoot, workspace string) string {
	root := projectRoot
	if root == "" {
		root, _ = filepath.Abs(workspace)
	}
	return memory.Scope(root)
}

// MemoryBackend reads and updates the project memory: the tools' backend, and MemoryAt for a
// replay (commands.WorkCommands is one).
type MemoryBackend interface {
	memorytool.Backend
	MemoryAt(ctx context.Context, scope string, revision uint64) (string, error)
}

// WithSkillsAndMemory completes a session's configuration and tool catalogue: the workspace's
// skills (the user's directory, skills.paths, the project's .zuno/skills) and, when memory is
// enabled and backend is set, the project memory's tools and lane.
func WithSkillsAndMemory(sc *SessionConfig, c *catalog.Catalog, x SkillsMemory, backend MemoryBackend) error {
	cat, err := adskills.Discover(adskills.Dirs(x.GlobalDir, x.SkillPaths, x.ProjectRoot))
	if err != nil {
		return err
	}
	sc.Skills, sc.SkillBudget, c.Skills = cat, x.Budget, cat
	if c.SkillBudgets, err = x.Budget.Derive(x.ContextWindow); err != nil {
		return err
	}
	if !x.MemoryEnabled || backend == nil {
		return nil
	}
	scope := MemoryScope(x.ProjectRoot, x.Workspace)
	c.Memory, c.MemoryConfig = backend, memorytool.Config{Scope: scope, Review: x.MemoryReview}
	sc.Memory = func(ctx context.Context, at *events.MemoryRead) (*prompt.MemoryPrompt, error) {
		if at != nil {
			content, err := backend.MemoryAt(ctx, at.Scope, at.Revision)
			if err != nil {
				return nil, err
			}
			return &prompt.MemoryPrompt{Scope: at.Scope, Revision: at.Revision, Content: content}, nil
		}
		st, err := backend.Memory(ctx, scope)
		if err != nil || st.Content == "" {
			return nil, err
		}
		return &prompt.MemoryPrompt{Scope: scope, Revision: st.Revision, Content: st.Content}, nil
	}
	return nil
}

// DebugSkills discovers a workspace's skills for debug agent.
func DebugSkills(x SkillsMemory) (*queries.AgentSkillSettings, error) {
	cat, err := adskills.Discover(adskills.Dirs(x.GlobalDir, x.SkillPaths, x.ProjectRoot))
	if err != nil {
		return nil, err
	}
	return &queries.AgentSkillSettings{Catalog: cat, Budget: x.Budget, ContextWindow: x.ContextWindow}, nil
}
