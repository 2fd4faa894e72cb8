package catalog

import (
	"os"

	"github.com/zuno-run/zuno/adapters/tools/toolset"
	"github.com/zuno-run/zuno/adapters/tools/web"
	"github.com/zuno-run/zuno/adapters/tools/web/fetch"
	"github.com/zuno-run/zuno/domain/tools"
)

// webTools are webfetch, always (the tools config may switch it off), and web_search when a
// provider is configured (docs/web.md). Both are bound by the sandbox's network policy and
// put their results through the session's output caps. The proxy variables are the process's,
// read at each fetch (seeds 000).
func (c *Catalog) webTools(set *toolset.Set) []tools.Tool {
	network := web.NetworkOf(c.Sandbox)
	out := []tools.Tool{web.NewFetch(fetch.New(nil, os.Getenv), network, set.CapResult)}
	if c.WebSearch != nil {
		out = append(out, web.NewSearch(c.WebSearch, network, set.CapResult))
	}
	return out
}
