package risk

import "strings"

// Deleters besides rm: the trash (trash-put, trash, gvfs-trash), rimraf (the node package,
// also run through npx, pnpm dlx, bunx: the unknown-program net reads it there) and gio, the
// GLib file tool. Moving the home directory to the trash empties it as surely as rm: each
// operand is graded like an rm operand (docs/risk.md, "The destructive command table").

// gio COMMAND [options] LOCATION…: remove and trash delete their locations, move moves its
// sources away and replaces its destination, copy and save replace their destination, rename
// moves its location away. Locations may be file:// URIs.
func (a *assessor) gio(name string, argv []arg, _ []string, _ int) {
	if len(argv) < 2 {
		return
	}
	sub, _ := argv[1].exact()
	flags, operands := opts(argv[2:], "")
	for i, g := range operands {
		operands[i] = fileURIs(g)
	}
	prog := name + " " + sub
	switch sub {
	case "remove", "trash":
		if flags["--empty"] {
			a.note(Destructive, prog, "", "gio trash --empty deletes everything in the trash")
		}
		for _, g := range operands {
			a.destroy(prog, g, "deletes")
		}
	case "move", "rename":
		sources, dest := operands, []arg(nil)
		if sub == "move" && len(operands) > 1 {
			sources, dest = operands[:len(operands)-1], operands[len(operands)-1:]
		} else if sub == "rename" && len(operands) > 1 {
			sources = operands[:1]
		}
		a.movesAway(prog, sources)
		for _, g := range dest {
			a.writeOnto(prog, g, sources, "replaces")
		}
	case "copy", "save":
		if len(operands) > 0 {
			a.writeOnto(prog, operands[len(operands)-1], operands[:len(operands)-1], "overwrites")
		}
	}
}

// movesAway grades sources a command moves elsewhere: a protected one is gone from where it
// was (mv ~/.ssh /tmp/x), an ordinary one is not a loss.
func (a *assessor) movesAway(prog string, sources []arg) {
	for _, g := range sources {
		for _, r := range g {
			if p, _, ok := a.target(r); ok && a.classify(p) != none {
				a.destroy(prog, arg{r}, "moves away")
			}
		}
	}
}

// fileURIs reads file:///path as /path (gio takes URIs and paths alike).
func fileURIs(g arg) arg {
	out := make(arg, len(g))
	for i, r := range g {
		if rest, ok := strings.CutPrefix(r.text, "file://"); ok && strings.HasPrefix(rest, "/") {
			r.text = rest
		}
		out[i] = r
	}
	return out
}

// onlyCatastrophic runs read on a copy of the assessor and keeps its finding only when it is
// catastrophic: for what is recoverable in ordinary places (git stash -u keeps the files) but
// not when it empties the home directory.
func (a *assessor) onlyCatastrophic(read func(c *assessor)) {
	c := *a
	c.worst = Verdict{Level: Safe}
	read(&c)
	a.texts, a.calls = c.texts, c.calls
	if c.worst.Level == Catastrophic {
		a.note(Catastrophic, c.worst.Program, c.worst.Target, c.worst.Reason)
	}
}
