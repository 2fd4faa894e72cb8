package toolset

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/zuno-run/zuno/adapters/tools/schema"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/patch"
	"github.com/zuno-run/zuno/domain/tools"
)

type applyPatchTool struct{ s *Set }

type applyPatchArgs struct {
	Patch string `json:"patch"`
}

var applyPatchSchema = schema.MustCompile(tools.NameApplyPatch, schema.Compact(`{
  "type": "object",
  "properties": {
    "patch": {"type": "string", "description": "the whole patch, from \"*** Begin Patch\" to \"*** End Patch\"", "minLength": 1}
  },
  "required": ["patch"],
  "additionalProperties": false
}`), schema.Rules{StrictText: true, Fields: map[string]schema.Field{"patch": {AllowNUL: true}},
	Example: `{"patch": "*** Begin Patch\n*** Update File: src/app.py\n@@ def main():\n-    print(\"hi\")\n+    print(\"hello\")\n*** End Patch\n"}`})

func (t *applyPatchTool) Declaration() tools.Declaration {
	return tools.Declaration{Name: tools.NameApplyPatch, Policy: mutatingPolicy}
}

func (t *applyPatchTool) Spec() tools.Spec {
	return tools.Spec{Name: tools.NameApplyPatch, Schema: applyPatchSchema.Raw(), Description: "Edit files with a patch in this format:\n" +
		"*** Begin Patch\n" +
		"*** Update File: path/to/file\n" +
		"@@ optional context line, e.g. a function header\n" +
		" unchanged line\n" +
		"-removed line\n" +
		"+added line\n" +
		"*** Add File: path/new.txt\n" +
		"+every line of the new file\n" +
		"*** Delete File: path/old.txt\n" +
		"*** End Patch\n" +
		"An Update may be followed by \"*** Move to: new/path\". Paths are relative to the workspace root. " +
		"Each existing file changed must have been read in this session and be unchanged since (read_required, " +
		"stale_read). Give about 3 unique lines of context per change; on context_mismatch re-read near it and send a " +
		"smaller patch; never resend a refused patch unchanged. A refused patch writes nothing. Line endings, a BOM " +
		"and a missing final newline are kept; do not type them."}
}

func (t *applyPatchTool) WritesWorkspace() bool { return true }

func (t *applyPatchTool) Validate(args json.RawMessage) (tools.Parsed, error) {
	a, err := t.parse(args)
	return tools.Parsed{Args: a}, err
}

// parse decodes the arguments and parses the patch: a patch that does not parse is an
// invalid argument, blocked as invalid_arguments before anything runs, like any other.
func (t *applyPatchTool) parse(args json.RawMessage) (applyPatchArgs, error) {
	var a applyPatchArgs
	if err := applyPatchSchema.Decode(args, &a); err != nil {
		return a, err
	}
	if _, err := patch.Parse(a.Patch); err != nil {
		var pe *patch.Error
		if errors.As(err, &pe) {
			msg := pe.Message
			if pe.Line > 0 {
				msg = "patch line " + strconv.Itoa(pe.Line) + ": " + msg
			}
			fix := pe.Fix
			if fix == "" {
				fix = "send a patch that starts with \"*** Begin Patch\" and ends with \"*** End Patch\""
			}
			return a, domain.Invalid("patch", msg, fix)
		}
		return a, domain.Invalid("patch", err.Error(), "send a patch in the apply_patch format")
	}
	return a, nil
}

func (t *applyPatchTool) Execute(ctx context.Context, inv tools.Invocation) tools.Result {
	a, ok := inv.Args.(applyPatchArgs)
	if !ok {
		return notValidated(inv)
	}
	if r, done := cancelledBefore(ctx); done {
		return r
	}
	if r, refused := t.s.readOnlyRefusal(tools.NameApplyPatch); refused {
		return r
	}
	res, err := t.s.ws.ApplyPatchIn(ctx, inv.ExternalRoot, a.Patch)
	if err != nil {
		return failure(tools.NameApplyPatch, err, true)
	}
	var b strings.Builder
	b.WriteString("Patch applied.")
	if len(res.WrittenPaths) > 0 {
		b.WriteString("\nWritten: " + strings.Join(res.WrittenPaths, ", "))
		if res.Editor {
			b.WriteString(" (through the editor)")
		}
	}
	if len(res.DeletedPaths) > 0 {
		b.WriteString("\nDeleted: " + strings.Join(res.DeletedPaths, ", "))
	}
	b.WriteString("\nWhat you wrote counts as read: further patches to these files need no new read.")
	creds := map[string]credentialFacts{}
	for p, c := range res.Credentials {
		creds[p] = credentialFacts{Digest: c.Digest.String(), Generation: c.Generation}
	}
	// The attempts are recorded so that a later process of the session (Restore) still
	// refuses this patch resent unchanged (identical_replay): the credentials alone would
	// let it apply a second time.
	attempts := []attemptFacts{}
	for _, a := range res.Attempts {
		attempts = append(attempts, attemptFacts{Path: a.Path, Op: a.Op.String(), Content: a.Content.String()})
	}
	facts := map[string]any{"writtenPaths": nonNil(res.WrittenPaths), "deletedPaths": nonNil(res.DeletedPaths),
		"credentials": creds, "attempts": attempts}
	if res.Editor {
		facts["via"] = tools.ViaEditor
	}
	return completed(b.String(), tools.Metadata{WrittenPaths: res.WrittenPaths, Details: details(facts)})
}
