package risk

import "strings"

// findFilters are find tests that narrow what its actions touch.
var findFilters = []string{"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename",
	"-regex", "-iregex", "-newer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin",
	"-size", "-user", "-group", "-perm", "-links", "-inum", "-samefile", "-empty", "-lname",
	"-ilname", "-uid", "-gid", "-nouser", "-nogroup", "-used", "-newermt", "-fstype"}

// find START… EXPRESSION: -delete deletes what it finds, -exec/-execdir/-ok/-okdir run a
// command on it. Without a narrowing test that is every path under START, so START is the
// target; with one it is some path under START, which is still catastrophic inside a
// credential store or the operating system.
func (a *assessor) find(_ string, argv []arg, _ []string, depth int) {
	starts, expr := findStarts(argv[1:])
	narrowed, loose, deletes := false, false, false
	var execs [][]arg
	for i := 0; i < len(expr); i++ {
		t, _ := expr[i].exact()
		switch {
		case t == "-delete":
			deletes = true
		case t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir":
			j := i + 1
			for ; j < len(expr); j++ {
				if e, _ := expr[j].exact(); e == ";" || e == "+" {
					break
				}
			}
			execs = append(execs, expr[i+1:j])
			i = j
		case contains(findFilters, t):
			narrowed = true
		case t == "-o" || t == "-or" || t == "," || t == "!" || t == "-not":
			loose = true // an action may run on what a test did not match
		}
	}
	found := a.found(starts, narrowed && !loose)
	if deletes {
		for _, g := range found {
			a.destroy("find -delete", g, "deletes")
		}
	}
	for _, cmd := range execs {
		a.findExec(cmd, found, depth)
	}
}

// findStarts splits find's arguments into its starting points ("." when none) and its
// expression, skipping the options before them (-H -L -P -D debugopts -O3).
func findStarts(args []arg) (starts, expr []arg) {
	i := 0
	for ; i < len(args); i++ {
		t, _ := args[i].exact()
		if t == "-D" {
			i++
		} else if !(t == "-H" || t == "-L" || t == "-P" || strings.HasPrefix(t, "-O")) {
			break
		}
	}
	for ; i < len(args); i++ {
		t, ok := args[i].exact()
		if ok && (strings.HasPrefix(t, "-") || t == "(" || t == "!" || t == ")" || t == ",") {
			break
		}
		starts = append(starts, args[i])
	}
	if len(starts) == 0 {
		starts = []arg{{{text: ".", exact: true}}}
	}
	return starts, args[min(i, len(args)):] // "-D" may have been last
}

// found is what find hands to its actions: each start itself, or some unknown path under it
// when a test narrows the search.
func (a *assessor) found(starts []arg, filtered bool) []arg {
	if !filtered {
		return starts
	}
	var out []arg
	for _, g := range starts {
		var rs arg
		for _, r := range g {
			rs = append(rs, reading{text: strings.TrimSuffix(r.text, "/") + "/" + unknownMark, exact: r.exact})
		}
		out = append(out, rs)
	}
	return out
}

// findExec assesses an -exec command once per found path, with {} replaced by it.
func (a *assessor) findExec(cmd []arg, found []arg, depth int) {
	for _, f := range found {
		var argv []arg
		for _, g := range cmd {
			var rs arg
			for _, r := range g {
				if !strings.Contains(r.text, "{}") {
					rs = append(rs, r)
					continue
				}
				for _, fr := range f {
					rs = append(rs, reading{text: strings.ReplaceAll(r.text, "{}", fr.text),
						exact: r.exact && fr.exact, glob: r.glob || fr.glob})
				}
			}
			argv = append(argv, rs)
		}
		a.command(argv, nil, depth)
	}
}

// git: the subcommands that throw away work that exists nowhere else (uncommitted changes,
// untracked files, remote history) are destructive.
func (a *assessor) git(name string, argv []arg, _ []string, _ int) {
	w := wrapper{shortVal: "Cc", longVal: []string{"--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}}
	i, ok := w.skip(argv)
	if !ok {
		return
	}
	sub, _ := argv[i].exact()
	flags, operands := opts(argv[i+1:], "")
	why := ""
	switch sub {
	case "clean":
		if (flags["-f"] || flags["--force"]) && !flags["-n"] && !flags["--dry-run"] {
			why = "deletes untracked files"
		}
	case "reset":
		if flags["--hard"] {
			why = "discards uncommitted changes"
		}
	case "rm":
		if !flags["--cached"] {
			why = "deletes tracked files from the working tree"
		}
	case "checkout", "restore":
		if (sub == "restore" && !flags["--staged"]) || flags["-f"] || flags["--force"] || hasOperand(operands, ".") || hasDoubleDash(argv[i+1:]) {
			why = "overwrites uncommitted changes"
		}
	case "push":
		if flags["-f"] || flags["--force"] || flags["--force-with-lease"] || flags["--mirror"] || flags["--delete"] || flags["-d"] || refspecForces(operands) {
			why = "rewrites or deletes remote history"
		}
	case "branch":
		if flags["-D"] {
			why = "deletes an unmerged branch"
		}
	case "stash":
		if hasOperand(operands, "drop") || hasOperand(operands, "clear") {
			why = "drops stashed changes"
		}
	}
	if why != "" {
		a.note(Destructive, "git "+sub, "", "git "+sub+" "+why)
	}
}

func hasOperand(operands []arg, s string) bool {
	for _, g := range operands {
		if t, ok := g.exact(); ok && t == s {
			return true
		}
	}
	return false
}

func hasDoubleDash(args []arg) bool { return hasOperand(args, "--") }

func refspecForces(operands []arg) bool {
	for _, g := range operands {
		if t, ok := g.exact(); ok && (strings.HasPrefix(t, "+") || strings.HasPrefix(t, ":")) {
			return true
		}
	}
	return false
}

// kill -9 -1 signals every process the user can reach (as root: all of them); pid 1 is init.
func (a *assessor) kill(name string, argv []arg, _ []string, _ int) {
	i := 1
	if t, _ := argv[1%len(argv)].exact(); len(argv) > 1 && strings.HasPrefix(t, "-") && t != "--" {
		switch t {
		case "-l", "-L", "--list":
			return
		case "-s", "-n":
			i++ // the signal is the next argument
		}
		i++
	}
	for ; i < len(argv); i++ {
		t, _ := argv[i].exact()
		if t == "-1" || t == "1" {
			a.note(Catastrophic, name, t, name+" "+t+" signals every process (or init) and takes the host down; refused in every permission mode")
		}
	}
}

// power: shutting down or rebooting the host is destructive to everything running on it.
func (a *assessor) power(name string, argv []arg, _ []string, _ int) {
	switch name {
	case "systemctl":
		_, operands := opts(argv[1:], "")
		for _, s := range []string{"poweroff", "reboot", "halt", "kexec", "emergency", "rescue"} {
			if hasOperand(operands, s) {
				a.note(Destructive, name, "", "systemctl "+s+" stops the host")
			}
		}
	case "init", "telinit":
		if hasOperand(argv[1:], "0") || hasOperand(argv[1:], "6") {
			a.note(Destructive, name, "", name+" changes the runlevel to halt or reboot the host")
		}
	default:
		a.note(Destructive, name, "", name+" stops the host")
	}
}

// rsync --delete makes the destination a copy of the source, deleting everything else in it:
// `rsync -a --delete empty/ /` empties /.
func (a *assessor) rsync(name string, argv []arg, _ []string, _ int) {
	flags, operands := opts(argv[1:], "eBfT", "--rsh", "--filter", "--exclude", "--include",
		"--temp-dir", "--partial-dir", "--backup-dir", "--suffix", "--chmod", "--chown", "--log-file")
	del := false
	for f := range flags {
		del = del || strings.HasPrefix(f, "--del") || f == "--remove-source-files"
	}
	if !del || len(operands) < 2 {
		return
	}
	a.destroy("rsync --delete", operands[len(operands)-1], "deletes what is not in the source from")
}

// cd: the directory becomes the base of later relative paths (`cd / && rm -rf *`). An
// unknown directory is read like any unknown value, as empty: unquoted, the word vanishes
// and cd goes home (`cd $BUILD && rm -rf *` empties home when BUILD is unset); quoted, `cd ""`
// stays where it is; "$X/out" is /out.
func (a *assessor) cd(_ string, argv []arg, _ []string, _ int) {
	a.oldCwd = a.cwd
	_, operands := opts(argv[1:], "")
	if len(operands) > 0 && len(operands[0]) == 1 && operands[0][0].text == "" && operands[0][0].split {
		operands = operands[1:]
	}
	if len(operands) == 0 {
		a.cwd = nil
		if hs, _ := a.value("HOME"); len(hs) == 1 {
			a.cwd = &hs[0]
		}
		return
	}
	g := operands[0]
	if len(g) != 1 || g[0].text == "-" {
		a.cwd = nil
		return
	}
	if g[0].text == "" {
		return
	}
	a.cwd = nil
	if p, _, ok := a.target(reading{text: g[0].text}); ok {
		a.cwd = &reading{text: p, exact: g[0].exact}
	}
}

// unknownProgram: the program's name is not known statically ($RM, $(which rm)). It is
// destructive; catastrophic when it is given a recursive option and a protected location,
// which is how rm -rf spells it.
func (a *assessor) unknownProgram(argv []arg) {
	recursive := false
	for _, g := range argv[1:] {
		t, ok := g.exact()
		recursive = recursive || (ok && (t == "--recursive" || t == "--no-preserve-root" ||
			(strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsAny(t, "rR"))))
	}
	if recursive {
		for _, g := range argv[1:] {
			for _, r := range g {
				if p, _, ok := a.target(r); ok && a.classify(p) != none {
					a.destroy("an unknown program", arg{r}, "with a recursive option may delete")
				}
			}
		}
	}
	a.note(Destructive, "", "", "the program's name is not known statically, so the gate cannot tell what it does")
}

// crontab -r deletes the user's crontab without a copy.
func (a *assessor) crontab(name string, argv []arg, _ []string, _ int) {
	if flags, _ := opts(argv[1:], "u", "--user"); flags["-r"] {
		a.note(Destructive, name, "", "crontab -r deletes the crontab without a copy")
	}
}
