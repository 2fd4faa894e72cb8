package tools

// Subject is what one call touches, as the permission gate evaluates it before the call runs
// (docs/permissions.md).
type Subject struct {
	// Path is a path argument as the model wrote it. Target, when the path leads somewhere
	// else (through a final symbolic link, followed once, or outside the workspace), is the
	// file it reaches, absolute; ExternalDir, when the target lies outside the
	// workspace, is the directory an external_directory grant has to name.
	Path, Target, ExternalDir string
	// Command is a shell command's text.
	Command string
	// Resource is what a tool that names neither a path nor a command touches, matched as
	// written against its permission key's patterns (webfetch's URL); Always is the pattern
	// an "always" answer saves (webfetch: the URL's origin with /*), Resource when empty.
	Resource, Always string
}

// Subjecter is a tool whose calls touch paths or run commands: the gate asks it what a call
// touches. An error refuses the call before it runs (a path that cannot be authorised).
type Subjecter interface {
	Subjects(p Parsed) ([]Subject, error)
}
