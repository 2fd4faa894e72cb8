package permission

// DecideExternal evaluates external_directory alone, for a directory outside the workspace
// that a call names without it being the call's own path: a shell command's argument
// (docs/permissions.md, "Shell commands outside the workspace"). It is the check Decide adds
// for a path tool's outside path (Policy.external), so one grant covers the file, search and
// shell tools.
// req.Resource is the directory as ExternalDirResource spells it (or, for an argument the
// text does not spell, the argument as written); req.Always is the pattern an "always"
// saves, empty for a one-off.
func (p Policy) DecideExternal(req Request) Decision {
	ext := p.external(req, req.Resource)
	ext.Always = req.Always
	return Decision{Tool: req.Tool, Check: ext, Mode: p.mode, Checks: []Check{ext}}
}
