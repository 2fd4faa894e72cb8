package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// mcpReach are the members of an MCP server entry that decide where it connects and what it
// runs with. Layers merge member by member (Merge), so a project layer writing them under a
// server a trusted layer declares would send the user's headers (an Authorization key) to
// the checkout's url, or load the checkout's code into the user's server through its env
// (NODE_OPTIONS, LD_PRELOAD) with the user's tokens beside it (docs/mcp.md, "Configuration").
var mcpReach = []string{"url", "headers", "env"}

// trustedMCPServers are the server names the trusted layers declare under mcp, lower-cased:
// two names that differ only in case are one server to adapters/mcp (a name collision).
func trustedMCPServers(docs []Document) []string {
	var names []string
	for _, d := range docs {
		if !d.Layer.Trusted() {
			continue
		}
		for _, s := range memberValue(d.Node, "mcp").Members {
			names = append(names, strings.ToLower(s.Key))
		}
	}
	return names
}

// checkProjectMCP refuses url, headers and env (in any case: encoding/json reads them so)
// under a server a trusted layer declares, admitted checkout or not: admitting host commands
// is not handing over the user's credentials.
func checkProjectMCP(d Document, trusted []string, p Paths) error {
	for _, s := range memberValue(d.Node, "mcp").Members {
		if !slices.Contains(trusted, strings.ToLower(s.Key)) {
			continue
		}
		for _, m := range s.Value.Members {
			if slices.ContainsFunc(mcpReach, func(k string) bool { return strings.EqualFold(k, m.Key) }) {
				return untrusted(d, m.Offset, "mcp."+s.Key+"."+strings.ToLower(m.Key),
					"the server is declared in a trusted layer with the user's credentials, and a checked-in file may not change where it connects or what it runs with",
					fmt.Sprintf("change the server in the global file %s, or declare the project's own server under another name", filepath.Join(p.GlobalDir, "zuno.json")))
			}
		}
	}
	return nil
}
