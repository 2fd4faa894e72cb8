package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/commands/queries"
	"github.com/zuno-run/zuno/domain/skills"
)

// What debug agent prints in its table form comes partly from parties Zuno does not trust: a
// checked-in SKILL.md's description (YAML "\e" is an escape character), a file's path, an MCP
// server's tool names and the messages that quote them or its stderr. None may reach the
// terminal as a control sequence (retitle the window, clear the screen, hide text), as a
// command's output may not in zuno run's previews (printable).
func TestDebugAgentPrintsNoControlSequences(t *testing.T) {
	const evil = "\x1b]0;pwned\x07\x1b[2J\x1b[8mhidden\r"
	// The premise: a SKILL.md may carry escape characters in its description.
	sk, err := skills.Parse([]byte("---\nname: a\ndescription: \"review \\e]0;pwned\\a\"\n---\nbody\n"), "a", "project", "/r/.zuno/skills/a/SKILL.md")
	if err != nil || !strings.Contains(sk.Description, "\x1b]0;pwned\x07") {
		t.Fatalf("premise: %q %v", sk.Description, err)
	}
	var b bytes.Buffer
	printSkills(&b, &queries.SkillsReport{
		Required:      []skills.Skill{{Name: "a", Source: "/r/.zuno/skills/a" + evil + "/SKILL.md"}},
		RequiredError: "skill_invalid: " + evil,
		Preview:       []skills.Skill{{Name: "a", Scope: "project", Description: "review " + evil}},
		Problems:      []skills.Problem{{Source: "/r/.zuno/skills/b" + evil, Error: "bad " + evil}},
	})
	printMCP(&b, []queries.MCPServerReport{{Name: "x", Transport: "stdio",
		Tools:       []queries.MCPToolReport{{ID: "mcp_x_a", Reason: "not offered"}},
		Diagnostics: []queries.MCPDiagnostic{{Tool: "t" + evil, Phase: "failed", Code: "mcp_connect_failed", Message: "stderr: " + evil}}}})
	out := b.String()
	for _, c := range []string{"\x1b", "\x07", "\r"} {
		if strings.Contains(out, c) {
			t.Fatalf("the table carries %q:\n%q", c, out)
		}
	}
	if !strings.Contains(out, "review") || !strings.Contains(out, "stderr:") {
		t.Fatalf("the text is gone:\n%s", out)
	}
}
