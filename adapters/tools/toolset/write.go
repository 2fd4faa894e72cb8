package toolset

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/domain/tools"
)

type writeTool struct{ s *Set }

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

var writeSchema = schema.MustCompile(tools.NameWrite, schema.Compact(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "relative to the workspace root", "minLength": 1},
    "content": {"type": "string", "description": "the whole new file"}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`), schema.Rules{StrictText: true, Fields: map[string]schema.Field{"content": {AllowNUL: true}},
	Example: `{"path": "notes/todo.md", "content": "# Todo\n"}`})

func (t *writeTool) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameWrite, Policy: mutatingPolicy}
}

func (t *writeTool) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameWrite, Schema: writeSchema.Raw(), Description: "Create a file, or replace a whole one, with " +
		"exactly content (parent directories are created). Replacing needs a read of the file in this session, unchanged " +
		"since (read_required, stale_read). For local edits prefer apply_patch."}
}

func (t *writeTool) WritesWorkspace() bool { return true }

func (t *writeTool) Validate(args json.RawMessage) (tools.Parsed, error) {
	var a writeArgs
	err := writeSchema.Decode(args, &a)
	return tools.Parsed{Args: a}, err
}

func (t *writeTool) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	a, ok := inv.Args.(writeArgs)
	if !ok {
		return notValidated(inv)
	}
	if r, done := cancelledBefore(ctx); done {
		return r
	}
	if r, refused := t.s.readOnlyRefusal(tools.NameWrite); refused {
		return r
	}
	res, err := t.s.ws.WriteIn(ctx, inv.ExternalRoot, a.Path, []byte(a.Content))
	if err != nil {
		return failure(tools.NameWrite, err, true)
	}
	verb := "Replaced"
	if res.Created {
		verb = "Created"
	}
	facts := map[string]any{"path": res.Path, "created": res.Created, "bytes": res.Bytes,
		"credential": credentialFacts{Digest: res.Credential.Digest.String(), Generation: res.Credential.Generation}}
	out := fmt.Sprintf("%s %s (%d bytes).", verb, res.Path, res.Bytes)
	if res.Editor {
		facts["via"] = tools.ViaEditor
		out = fmt.Sprintf("%s %s (%d bytes) through the editor.", verb, res.Path, res.Bytes)
	}
	return completed(out, tools.Metadata{WrittenPaths: res.WrittenPaths, Details: details(facts)})
}
