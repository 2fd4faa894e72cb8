package app

import (
	"slices"

	"github.com/zuno-run/zuno/commands/turn"
	"github.com/zuno-run/zuno/events"
)

// SessionConfig is the configuration resolved for one workspace: what a turn of a session
// working there runs with. The project layer is the workspace's, never the caller's working
// directory (docs/config.md, "Which files a turn read").
type SessionConfig struct {
	Settings  Settings
	OpenTools turn.OpenTools
	// Files are the configuration files read, recorded on the turn's start.
	Files []events.ConfigFile
	// Notes are the loader's warnings and notes about these files.
	Notes []string
}

// Configure resolves the configuration for a workspace directory.
type Configure func(workspace string) (SessionConfig, error)

// noticeNew says each of the session configuration's notes the process has not said already
// (the process said its own working directory's at start).
func (c *Commands) noticeNew(notice func(string), sc SessionConfig) {
	if notice == nil {
		return
	}
	for _, n := range sc.Notes {
		if !slices.Contains(c.said, n) {
			notice(n)
		}
	}
}
