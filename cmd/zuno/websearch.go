package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/zuno-run/zuno/adapters/tools/web/search"
)

// openWebSearch opens web_search's provider from the merged web_search key (docs/web.md): nil
// when the key is absent, so web_search is not offered; a key that cannot be used is a
// configuration error at load, naming the fault, never a tool that fails at its first call.
func openWebSearch(raw json.RawMessage) (search.Provider, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var c search.Config
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, &configError{"web_search: " + err.Error() + `; write {"url": "https://search.example/search", "apiKey": "{env:ZUNO_SEARCH_KEY}"}`}
	}
	if !c.Configured() {
		return nil, nil
	}
	p, err := search.Open(c, os.Getenv)
	if err != nil {
		return nil, &configError{err.Error()}
	}
	return p, nil
}

// dropUnconfiguredWebSearch takes tools.web_search out when no web_search provider is
// configured: the tool is then not in the catalogue, and the entry would reach the registry as
// an unknown tool. It is said in a note.
func dropUnconfiguredWebSearch(tools map[string]bool, raw json.RawMessage) []string {
	v, ok := tools["web_search"]
	if !ok || (len(raw) > 0 && string(raw) != "null") {
		return nil
	}
	delete(tools, "web_search")
	return []string{fmt.Sprintf("tools.web_search: %v is ignored: web_search has no provider configured (web_search.url, docs/web.md)", v)}
}
