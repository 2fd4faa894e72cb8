package mcp

import (
	"fmt"
	"strings"
)

// MaxToolName is the longest tool name the providers accept.
const MaxToolName = 64

// Normalise maps a name onto the characters every provider accepts in a tool name: a-z,
// A-Z, 0-9 and _; every other character (a hyphen, a dot, a space, any non-ASCII rune)
// becomes _. Rules such as mcp_github_* name the normalised form.
func Normalise(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ToolName is the name the model calls a server's tool by: mcp_<server>_<tool>. A tool name
// that is empty, or too long once prefixed, is refused with CodeToolName.
func ToolName(server, tool string) (string, error) {
	if strings.TrimSpace(tool) == "" {
		return "", fmt.Errorf("the tool name is empty")
	}
	name := "mcp_" + server + "_" + Normalise(tool)
	if len(name) > MaxToolName {
		return "", fmt.Errorf("%s is %d characters, over the %d providers accept", name, len(name), MaxToolName)
	}
	return name, nil
}
