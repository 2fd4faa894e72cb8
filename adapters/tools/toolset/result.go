package toolset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/zuno-run/zuno/domain"
	"strings"

	"github.com/zuno-run/zuno/adapters/tools/files"
	"github.com/zuno-run/zuno/adapters/tools/search"
	"github.com/zuno-run/zuno/adapters/tools/shell"

	"github.com/zuno-run/zuno/domain/patch"
	"github.com/zuno-run/zuno/domain/tools"
)

// details marshals a tool's facts for Metadata.Details. The values are plain structs and
// maps, so marshalling cannot fail.
func details(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("toolset: details: %v", err))
	}
	return b
}

func completed(out string, meta tools.Metadata) tools.Result {
	return tools.Result{Outcome: tools.OutcomeCompleted, Output: out, Metadata: meta}
}

// notValidated answers an Execute handed arguments its Validate did not produce.
func notValidated(inv tools.Invocation) tools.Result { return tools.NotValidated(inv) }

// cancelledBefore answers a call whose context ended before it started.
func cancelledBefore(ctx context.Context) (tools.Result, bool) {
	if err := ctx.Err(); err != nil {
		return tools.Result{Outcome: tools.OutcomeCancelled, ErrorCode: string(CodeCancelled),
			Output: "The call was cancelled before it started (" + err.Error() + "); nothing was done."}, true
	}
	return tools.Result{}, false
}

// coded is the stable-code method the files and patch errors share.
// conflictFacts is one apply_patch/write conflict as clients read it.
type conflictFacts struct {
	Kind           string `json:"kind"`
	Path           string `json:"path"`
	Op             int    `json:"op,omitempty"`
	OpDigest       string `json:"opDigest"`
	ContentDigest  string `json:"contentDigest,omitempty"`
	Hunk           int    `json:"hunk,omitempty"`
	HunkHeader     string `json:"hunkHeader,omitempty"`
	RequiredAction string `json:"requiredAction,omitempty"`
}

func conflictsOf(err error) []conflictFacts {
	var list []*patch.Conflict
	var ce *patch.ConflictError
	var c *patch.Conflict
	switch {
	case errors.As(err, &ce):
		list = ce.Conflicts
	case errors.As(err, &c):
		list = []*patch.Conflict{c}
	}
	var out []conflictFacts
	for _, c := range list {
		f := conflictFacts{Kind: string(c.Kind), Path: c.Path, Op: c.Op, OpDigest: c.OpDigest.String(),
			Hunk: c.Hunk, HunkHeader: c.HunkHeader, RequiredAction: c.RequiredAction}
		if !c.ContentDigest.IsZero() {
			f.ContentDigest = c.ContentDigest.String()
		}
		out = append(out, f)
	}
	return out
}

// failure maps an adapter error to a result. changes says whether the tool changes the
// workspace, so the text can promise the model that a refusal changed nothing.
//
//   - context ended: OutcomeCancelled (the adapters check the context only where nothing
//     has been done yet, or, for search, where only reading was under way);
//   - *files.UncertainError: OutcomeUncertain, writtenPaths from its Written list;
//   - an error with a stable code (files, patch, search, shell): OutcomeError with it;
//   - anything else: OutcomeError "failed".
func failure(tool string, err error, changes bool) tools.Result {
	var u *files.UncertainError
	if errors.As(err, &u) {
		return tools.Result{
			Outcome:   tools.OutcomeUncertain,
			ErrorCode: u.Code(),
			Output:    tool + " may have changed the workspace partly: " + err.Error(),
			Metadata: tools.Metadata{
				WrittenPaths: append([]string(nil), u.Written...),
				Details: details(map[string]any{
					"written": nonNil(u.Written), "failed": u.Failed, "notWritten": nonNil(u.NotWritten),
				}),
			},
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return tools.Result{Outcome: tools.OutcomeCancelled, ErrorCode: string(CodeCancelled),
			Output: tool + " was cancelled before it had any effect (" + err.Error() + ")."}
	}
	code := string(CodeFailed)
	var se *search.Error
	var she *shell.Error
	switch {
	case errors.As(err, &se):
		code = string(se.Code)
	case errors.As(err, &she):
		code = string(she.Code)
	case domain.CodeOf(err) != "":
		code = domain.CodeOf(err)
	}
	var b strings.Builder
	msg := err.Error()
	if !strings.HasPrefix(msg, tool+" ") {
		b.WriteString(tool + ": ")
	}
	b.WriteString(msg)
	if changes {
		b.WriteString("\nNothing was changed.")
	}
	res := tools.Result{Outcome: tools.OutcomeError, ErrorCode: code, Output: b.String()}
	if cs := conflictsOf(err); len(cs) > 0 {
		res.Metadata.Details = details(map[string]any{"conflicts": cs})
	}
	return res
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
