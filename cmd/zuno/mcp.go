package main

import (
	"github.com/zuno-run/zuno/adapters/mcp"
	"github.com/zuno-run/zuno/adapters/tools/catalog"
)

// mcpCatalog is the configured MCP servers for the catalogue (docs/mcp.md). The entries were
// checked when the configuration loaded (config.validate), so a fault here leaves them out.
func mcpCatalog(cfg config) catalog.MCP {
	servers, err := mcp.ParseServers(cfg.MCP)
	if err != nil {
		return catalog.MCP{}
	}
	return catalog.MCP{Servers: servers, Connections: cfg.Concurrency.MCPConnections, Record: cfg.mcpRecord}
}
