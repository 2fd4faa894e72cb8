package toolset

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/adapters/tools/search"
	"github.com/zuno-run/zuno/domain/tools"
)

// maxResultLimit bounds glob's and grep's limit argument. Output past the caps is withheld
// to an artifact anyway; the bound only keeps one call from asking rg for everything.
const maxResultLimit = 10000

type globTool struct{ s *Set }

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
	Limit   int    `json:"limit"`
}

var globSchema = schema.MustCompile(tools.NameGlob, schema.Compact(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "gitignore syntax, relative to path: \"*.go\" matches at any depth, \"cmd/*.go\" only directly in cmd/", "minLength": 1},
    "path": {"type": "string", "description": "directory, relative to the workspace root; default the root", "minLength": 1},
    "limit": {"type": "integer", "description": "default %[2]d", "minimum": 1, "maximum": %[1]d}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`, maxResultLimit, search.DefaultLimit)), schema.Rules{StrictText: true,
	Example: `{"pattern": "**/*.go", "path": "src"}`})

func (t *globTool) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameGlob, Policy: readOnlyPolicy}
}

func (t *globTool) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameGlob, Schema: globSchema.Raw(), Description: "Find files by path pattern with ripgrep: " +
		"sorted workspace-relative paths, at most limit; a cut list says so. Hidden and .gitignore'd files are skipped " +
		"unless the pattern names them."}
}

func (t *globTool) WritesWorkspace() bool { return false }

func (t *globTool) Validate(args json.RawMessage) (tools.Parsed, error) {
	var a globArgs
	err := globSchema.Decode(args, &a)
	return tools.Parsed{Args: a}, err
}

func (t *globTool) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	a, ok := inv.Args.(globArgs)
	if !ok {
		return notValidated(inv)
	}
	if r, done := cancelledBefore(ctx); done {
		return r
	}
	res, err := t.s.search.Glob(ctx, search.GlobRequest{Pattern: a.Pattern, Path: a.Path, ExternalRoot: inv.ExternalRoot, Limit: a.Limit})
	if err != nil {
		return failure(tools.NameGlob, err, false)
	}
	return t.s.searchResult(inv.CallID, tools.NameGlob, res)
}

type grepTool struct{ s *Set }

type grepArgs struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path"`
	Include         string `json:"include"`
	CaseInsensitive bool   `json:"caseInsensitive"`
	Context         int    `json:"context"`
	Limit           int    `json:"limit"`
}

var grepSchema = schema.MustCompile(tools.NameGrep, schema.Compact(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Rust regex, matched line by line", "minLength": 1},
    "path": {"type": "string", "description": "directory or file, relative to the workspace root; default the root", "minLength": 1},
    "include": {"type": "string", "description": "file glob, e.g. \"*.{ts,tsx}\"", "minLength": 1},
    "caseInsensitive": {"type": "boolean"},
    "context": {"type": "integer", "description": "lines around each match; default 0", "minimum": 0, "maximum": %[3]d},
    "limit": {"type": "integer", "description": "matching lines; default %[2]d", "minimum": 1, "maximum": %[1]d}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`, maxResultLimit, search.DefaultLimit, search.MaxContext)), schema.Rules{StrictText: true,
	Example: `{"pattern": "func main", "include": "*.go"}`})

func (t *grepTool) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameGrep, Policy: readOnlyPolicy}
}

func (t *grepTool) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameGrep, Schema: grepSchema.Raw(), Description: "Search file contents with ripgrep. Matches " +
		`are grouped by file, sorted, as "Line N: text" (context: "Line N- text"), at most limit; a cut result says ` +
		"so. An invalid pattern or include is an error, not an empty result."}
}

func (t *grepTool) WritesWorkspace() bool { return false }

func (t *grepTool) Validate(args json.RawMessage) (tools.Parsed, error) {
	var a grepArgs
	err := grepSchema.Decode(args, &a)
	return tools.Parsed{Args: a}, err
}

func (t *grepTool) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	a, ok := inv.Args.(grepArgs)
	if !ok {
		return notValidated(inv)
	}
	if r, done := cancelledBefore(ctx); done {
		return r
	}
	res, err := t.s.search.Grep(ctx, search.GrepRequest{Pattern: a.Pattern, Path: a.Path, ExternalRoot: inv.ExternalRoot, Include: a.Include,
		CaseInsensitive: a.CaseInsensitive, Context: a.Context, Limit: a.Limit})
	if err != nil {
		return failure(tools.NameGrep, err, false)
	}
	return t.s.searchResult(inv.CallID, tools.NameGrep, res)
}

type searchFacts struct {
	Returned       int  `json:"returned"`
	Found          int  `json:"found"`
	Truncated      bool `json:"truncated"`
	ExcludedNames  int  `json:"excludedNames,omitempty"`
	SkippedRecords int  `json:"skippedRecords,omitempty"`
	// Outside counts files left out because the check after the search did not find them
	// beneath the searched directory (docs/tools.md, "Path authority").
	Outside int `json:"outside,omitempty"`
}

// searchResult renders a glob or grep result. The adapter measured its own rendered output
// against the same caps; the artifact holds that output byte for byte.
func (s *Set) searchResult(callID, tool string, r search.Result) tools.Result {
	facts := details(searchFacts{Returned: r.Returned, Found: r.Found, Truncated: r.Truncated,
		ExcludedNames: r.ExcludedNames, SkippedRecords: r.SkippedRecords, Outside: r.Outside})
	if r.Withheld == nil {
		return completed(r.Output, tools.Metadata{Details: facts})
	}
	w := &tools.WithheldOutput{Bytes: int64(r.Withheld.Bytes), Lines: r.Withheld.Lines, Limit: r.Withheld.Exceeded,
		MaxBytes: r.Withheld.MaxBytes, MaxLines: r.Withheld.MaxLines}
	h, err := s.art.withhold(callID, tool, []byte(r.Output), w, "Or narrow the pattern, path or include.")
	if err != nil {
		return artifactFailure(tool, err)
	}
	h.meta.Details = facts
	return completed(h.notice, h.meta)
}
