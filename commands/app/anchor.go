package app

import (
	"context"
	"path/filepath"

	"github.com/zuno-run/zuno/domain/sandbox"
)

// CheckAnchor refuses an anchor file inside the workspace of any recorded session
// (log_in_workspace): the agent working there could rewrite the anchor together with the
// log, and zuno verify would then compare the log with what the agent left (docs/sandbox.md,
// "The log outside the agent's reach"). anchor is absolute, its links resolved.
func (c *Commands) CheckAnchor(ctx context.Context, anchor string) error {
	dirs, err := c.queries.Workspaces(ctx)
	if err != nil {
		return err
	}
	own := sandbox.Locations{Anchor: filepath.ToSlash(anchor)}
	for _, d := range dirs {
		if err := own.OutsideWorkspace(filepath.ToSlash(d)); err != nil {
			return err
		}
	}
	return nil
}
