package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/adapters/tools/schema"
)

// MaxSchemaBytes bounds one tool's input schema: every admitted schema may be resent with
// every request, and a server is not trusted to keep it small.
const MaxSchemaBytes = 64 << 10

// compileSchema brings a server's input schema into the catalogue's one schema language
// (adapters/tools/schema). The server is untrusted, so before the validator sees the schema:
// it is bounded in size, and every reference must stay inside it ("#…"): the validator would
// otherwise load a "$ref": "file:///…" or an "$id"-relative one from this machine's disk.
// What the validator then refuses (not an object, not a schema) is refused as it says.
func compileSchema(name string, input any) (*schema.Schema, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("it cannot be encoded: %v", err)
	}
	if string(raw) == "null" {
		raw = []byte(`{"type":"object"}`) // a tool without arguments
	}
	if len(raw) > MaxSchemaBytes {
		return nil, fmt.Errorf("it is %d bytes, over %d", len(raw), MaxSchemaBytes)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("it is not JSON: %v", err)
	}
	if err := localRefs(doc, "inputSchema"); err != nil {
		return nil, err
	}
	return schema.Compile(name, raw, schema.Rules{EmptyIsObject: true, NullIsEmpty: true})
}

// localRefs refuses a reference that leaves the document and an identifier that would move
// its base (so a relative reference could leave it).
func localRefs(v any, at string) error {
	switch n := v.(type) {
	case map[string]any:
		for k, c := range n {
			switch k {
			case "$ref", "$dynamicRef":
				if s, ok := c.(string); !ok || !strings.HasPrefix(s, "#") {
					return fmt.Errorf("%s.%s is %v: only references inside the schema (#…) are followed", at, k, c)
				}
			case "$id", "$schema":
				if err := localID(k, c, at); err != nil {
					return err
				}
			}
			if err := localRefs(c, at+"."+k); err != nil {
				return err
			}
		}
	case []any:
		for i, c := range n {
			if err := localRefs(c, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// knownDrafts are the meta-schemas the validator carries itself (it never fetches them).
var knownDrafts = map[string]bool{
	"https://json-schema.org/draft/2020-12/schema": true, "https://json-schema.org/draft/2019-09/schema": true,
	"http://json-schema.org/draft-07/schema#": true, "http://json-schema.org/draft-07/schema": true,
	"http://json-schema.org/draft-06/schema#": true, "http://json-schema.org/draft-04/schema#": true,
}

func localID(k string, c any, at string) error {
	s, _ := c.(string)
	if k == "$schema" && knownDrafts[s] {
		return nil
	}
	if k == "$id" && strings.HasPrefix(s, "#") {
		return nil
	}
	return fmt.Errorf("%s.%s is %v: only the known drafts and ids inside the schema are accepted", at, k, c)
}
