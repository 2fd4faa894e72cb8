package catalog

import (
	"errors"
	"testing"

	"github.com/zuno-run/zuno/domain/sandbox"
	"github.com/zuno-run/zuno/domain/tools"
)

// The editor's file system is kept only where no confined command of the session can move a
// name under it (docs/acp.md, "Only where no confined command can move a name").
func TestEditorBeside(t *testing.T) {
	e := &tools.Editor{}
	confined := sandbox.Resolution{Enforced: true}
	for _, row := range []struct {
		name    string
		res     sandbox.Resolution
		refused error
		mode    string
		kept    bool
	}{
		{"confined, the workspace writable", confined, nil, sandbox.ModeWorkspaceWrite, false},
		{"confined, no mode given (workspace-write)", confined, nil, "", false},
		{"confined read-only: no command writes", confined, nil, sandbox.ModeReadOnly, true},
		{"native backend: commands unconfined", sandbox.Resolution{}, nil, sandbox.ModeWorkspaceWrite, true},
		{"danger-full-access", sandbox.Resolution{ForcesAllowAll: true}, nil, sandbox.ModeDangerFullAccess, true},
		{"a refused sandbox: no command runs", sandbox.Resolution{}, errors.New("refused"), sandbox.ModeWorkspaceWrite, true},
	} {
		if got := editorBeside(e, row.res, row.refused, row.mode); (got != nil) != row.kept {
			t.Errorf("%s: editor kept %v, want %v", row.name, got != nil, row.kept)
		}
	}
	if editorBeside(nil, sandbox.Resolution{}, nil, "") != nil {
		t.Error("no editor offered, one used")
	}
}
