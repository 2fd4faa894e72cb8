package toolset

import (
	"github.com/zuno-run/zuno/domain/tools"
)

// CapResult puts another package's tool result through this session's tool_output caps (the
// web and MCP tools): output over a cap is stored whole as the call's artifact and the model
// gets the notice instead, with outputPaths and withheldOutput added to the metadata the
// result already had. A result within the caps is returned as it is; one whose artifact cannot
// be stored becomes an artifact_failed error, since its output cannot be shown.
func (s *Set) CapResult(callID, tool string, r tools.Result) tools.Result {
	data := []byte(r.Output)
	w := s.art.over(data)
	if w == nil {
		return r
	}
	h, err := s.art.withhold(callID, tool, data, w, "")
	if err != nil {
		return tools.Result{Outcome: tools.OutcomeError, ErrorCode: string(CodeArtifactFailed), Metadata: r.Metadata,
			Output: "The output is over the tool_output caps and could not be stored: " + err.Error()}
	}
	r.Output = h.notice
	r.Metadata.OutputPaths, r.Metadata.WithheldOutput = h.meta.OutputPaths, h.meta.WithheldOutput
	return r
}
