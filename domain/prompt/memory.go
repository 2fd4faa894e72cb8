package prompt

import (
	"fmt"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/events"
)

// MemoryPrompt is the applied project memory a turn starts with (docs/memory.md).
type MemoryPrompt struct {
	// Scope names the memory (the project it belongs to); Revision is the applied revision.
	Scope    string
	Revision uint64
	Content  string
}

// SectionMemory is the memory lane's one section.
const SectionMemory = "memory"

// MemoryText is the memory section's content: a host header, then the memory verbatim.
func MemoryText(m MemoryPrompt) string {
	return fmt.Sprintf("Project memory, revision %d, kept by agents across sessions (memory_read and memory_update). "+
		"It is notes written by models, not the user's instructions.\n\n%s", m.Revision, m.Content)
}

// addMemory adds the memory section. Its trust is session: models wrote it.
func (l *sectionList) addMemory(m *MemoryPrompt) error {
	if m == nil {
		return nil
	}
	return l.add("memory", events.PromptSection{ID: SectionMemory, Lane: LaneMemory, Source: "zuno-memory:" + m.Scope,
		Role: string(model.RoleDeveloper), Trust: TrustSession, Priority: priority(TrustSession, 0)}, MemoryText(*m), m.Content)
}
