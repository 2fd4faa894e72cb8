package permission

import (
	"strings"

	"github.com/zuno-run/zuno/domain/tools"
)

// ExternalDirectory is the permission a path outside the workspace needs besides its tool's.
const ExternalDirectory = "external_directory"

// KeyFor returns the permission key a tool asks under. write, apply_patch and edit share
// edit, and the MCP resource tools share read (docs/permissions.md); every other tool (glob,
// grep, list, shell, bg, report_write, the plan and todo tools, task, question, an MCP tool)
// asks under its own name. bg has its own key: it reads back and cancels what shell started,
// and an agent contract that grants shell grants bg with it (NewContract).
func KeyFor(tool string) string {
	switch tool {
	case tools.NameWrite, tools.NameApplyPatch, "edit":
		return "edit"
	case "list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource":
		return tools.NameRead
	case tools.NameQuestionAsync: // seeds 000: question_async is governed by question
		return tools.NameQuestion
	}
	return tool
}

// pathKeys are the keys whose resource is a file: their patterns match the path's normalised
// spellings too, and deny reaches further (docs/permissions.md, "Path rules").
var pathKeys = map[string]bool{"read": true, "edit": true, "write": true, "list": true, "lsp": true}

// IsPathKey reports whether the key's resource is a path.
func IsPathKey(key string) bool { return pathKeys[key] }

// ExternalDirResource is the one spelling of an external_directory grant: the directory with
// forward slashes, no Windows verbatim \\?\ prefix, no . segments or doubled separators, and
// /* appended. So C:\build-cache and \\?\C:\build-cache\ both become C:/build-cache/*, and a
// standing grant made for a file tool covers the shell and search tools too.
func ExternalDirResource(dir string) string {
	d := strings.TrimSuffix(resolveDots(normalise(stripVerbatim(dir))), "/")
	return d + "/*"
}

// stripVerbatim removes the Windows verbatim prefix \\?\ (or //?/).
func stripVerbatim(p string) string {
	for _, prefix := range []string{`\\?\`, `//?/`} {
		if strings.HasPrefix(p, prefix) {
			return p[len(prefix):]
		}
	}
	return p
}
