package risk

import (
	"path"
	"strings"
)

// Writers: commands that replace or empty the file they are given, graded like a `>`
// redirection onto it: onto a disk or a credential store catastrophic, onto another
// protected location destructive, elsewhere an ordinary write.

// writeOnto judges dest, which prog replaces or empties. When dest is a directory the gate
// knows as one (a home directory, /, ~/.config), the write lands inside it, under the name of
// each source.
func (a *assessor) writeOnto(prog string, dest arg, sources []arg, verb string) {
	for _, r := range dest {
		p, _, ok := a.target(r)
		if !ok {
			continue
		}
		switch c := a.classify(p); c {
		case home, root, userConfig:
			for _, s := range sources {
				for _, sr := range s {
					if contentsOf(sr.text) && c == home {
						// dotfiles/. or dir/ copies what the directory holds, whose names the
						// gate does not read: a .bashrc among them runs at the next login.
						a.note(Catastrophic, prog, p, prog+" copies the contents of "+a.display(sr.text)+" into the home directory "+a.display(p)+", which may replace its startup files or credentials; refused in every permission mode — copy the files by name")
						continue
					}
					if sr.text != "" && !strings.HasPrefix(sr.text, unknownMark) {
						a.writeOne(prog, strings.TrimSuffix(p, "/")+"/"+path.Base(sr.text), verb)
					}
				}
			}
		default:
			a.writeOne(prog, p, verb)
		}
	}
}

func (a *assessor) writeOne(prog, p, verb string) {
	switch c := a.classify(p); c {
	case none:
	case device:
		a.note(Catastrophic, prog, p, prog+" writes over the disk "+a.display(p)+", destroying its file systems; refused in every permission mode")
	case credential, startup, zunoData:
		a.note(Catastrophic, prog, p, prog+" "+verb+" "+a.display(p)+" ("+c.String()+"); refused in every permission mode")
	default:
		a.note(Destructive, prog, p, prog+" "+verb+" "+a.display(p)+" ("+c.String()+")")
	}
}

// appendOnto judges an append to dest: refused into a credential store, a startup file or
// Zuno's data, an ordinary write anywhere else.
func (a *assessor) appendOnto(prog string, dest arg) {
	for _, r := range dest {
		if p, _, ok := a.target(r); ok {
			if c := a.classify(p); writeRefused(c) || c == zunoData {
				a.note(Catastrophic, prog, p, prog+" appends to "+a.display(p)+" ("+c.String()+"); refused in every permission mode")
			}
		}
	}
}

// copyTo: cp, install, mv and tee replace their destination (tee every file operand, unless
// -a appends; cp -n never overwrites; install -d only creates directories).
func (a *assessor) copyTo(name string, argv []arg, stdin []string, depth int) {
	shortVal, longVal := "", []string(nil)
	switch name {
	case "cp", "mv":
		shortVal, longVal = "St", []string{"--suffix", "--target-directory"}
	case "install":
		shortVal, longVal = "gmoStZ", []string{"--group", "--mode", "--owner", "--suffix", "--target-directory", "--strip-program"}
	}
	flags, operands := opts(argv[1:], shortVal, longVal...)
	if name == "mv" {
		a.mv(name, argv, stdin, depth)
	}
	switch {
	case name == "tee" || name == "sponge":
		if flags["-a"] || flags["--append"] {
			// An append keeps what was there, but into a credential store or a startup file it
			// adds a key or a line that runs on the host (review 25c).
			for _, g := range operands {
				a.appendOnto(name, g)
			}
			return
		}
		for _, g := range operands {
			a.writeOnto(name, g, nil, "empties")
		}
		return
	case flags["-n"] || flags["--no-clobber"] || (name == "install" && (flags["-d"] || flags["--directory"])):
		return
	}
	verb := "overwrites"
	if name == "mv" {
		verb = "replaces"
	}
	if dir, ok := optArg(argv[1:], 't', "--target-directory", shortVal, longVal); ok {
		for _, r := range dir {
			if p, _, ok := a.target(r); ok {
				for _, g := range operands {
					for _, sr := range g {
						if sr.text != "" && !strings.HasPrefix(sr.text, unknownMark) {
							a.writeOne(name, p+"/"+path.Base(sr.text), verb)
						}
					}
				}
			}
		}
		return
	}
	if len(operands) < 2 {
		return
	}
	a.writeOnto(name, operands[len(operands)-1], operands[:len(operands)-1], verb)
}

// sedScripts reads each script sed is given (-e, --expression, or the first operand) for the
// commands that run a shell.
func (a *assessor) sedScripts(name string, argv, operands []arg, depth int) {
	var scripts []arg
	for i := 1; i < len(argv); i++ {
		t, _ := argv[i].exact()
		switch {
		case (t == "-e" || t == "--expression") && i+1 < len(argv):
			i++
			scripts = append(scripts, argv[i])
		case strings.HasPrefix(t, "--expression="):
			scripts = append(scripts, arg{{text: strings.TrimPrefix(t, "--expression="), exact: true}})
		case strings.HasPrefix(t, "-e") && len(t) > 2 && !strings.HasPrefix(t, "--"):
			scripts = append(scripts, arg{{text: t[2:], exact: true}})
		}
	}
	if _, hasF := optArg(argv[1:], 'f', "--file", "efl", []string{"--expression", "--file", "--line-length"}); len(scripts) == 0 && !hasF && len(operands) > 0 {
		scripts = append(scripts, operands[0])
	}
	for _, s := range scripts {
		a.programArg(name, s, func(t string) { a.sedCommands(name, t, depth) })
	}
}

// sed -i rewrites its files in place; with a backup suffix (-i.bak) the original is kept.
func (a *assessor) sed(name string, argv []arg, _ []string, depth int) {
	shortVal, longVal := "efl", []string{"--expression", "--file", "--line-length"}
	flags, operands := opts(argv[1:], shortVal, longVal...)
	a.sedScripts(name, argv, operands, depth)
	inPlace := flags["--in-place"]
	for _, g := range argv[1:] {
		if t, ok := g.exact(); ok && strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") {
			// -i, -Ei, -ni: -i with nothing attached after it keeps no backup
			if k := strings.IndexByte(t, 'i'); k > 0 && k == len(t)-1 && strings.Trim(t[1:k], "EnrsuzE") == "" {
				inPlace = true
			}
		}
		if t, ok := g.exact(); ok && t == "--" {
			break
		}
	}
	if !inPlace {
		return
	}
	_, hasE := optArg(argv[1:], 'e', "--expression", shortVal, longVal)
	_, hasF := optArg(argv[1:], 'f', "--file", shortVal, longVal)
	if !hasE && !hasF && len(operands) > 0 {
		operands = operands[1:] // the script
	}
	for _, g := range operands {
		a.writeOnto(name+" -i", g, nil, "rewrites")
	}
}

// contentsOf reports a copy source spelled as a directory's contents (dir/. for cp, dir/ for
// rsync).
func contentsOf(src string) bool {
	return strings.HasSuffix(src, "/.") || (strings.HasSuffix(src, "/") && len(src) > 1)
}

// downloadTo: curl -o FILE and wget -O FILE write what they fetch over FILE.
func (a *assessor) downloadTo(name string, argv []arg, _ []string, _ int) {
	for i := 1; i < len(argv); i++ {
		t, _ := argv[i].exact()
		var dest arg
		switch {
		case (t == "-o" || t == "--output" || t == "-O" && name == "wget" || t == "--output-document") && i+1 < len(argv):
			i++
			dest = argv[i]
		case strings.HasPrefix(t, "--output=") || strings.HasPrefix(t, "--output-document="):
			_, v, _ := strings.Cut(t, "=")
			dest = arg{{text: v, exact: true}}
		default:
			continue
		}
		a.writeOnto(name, dest, nil, "downloads over")
	}
}

// editsFile: patch FILE, ed FILE and ex/vim run non-interactively on FILE change it in place.
func (a *assessor) editsFile(name string, operands []arg) {
	for _, g := range operands {
		for _, r := range g {
			if p, _, ok := a.target(r); ok {
				if c := a.classify(p); writeRefused(c) || c == zunoData {
					a.note(Catastrophic, name, p, name+" edits "+a.display(p)+" ("+c.String()+"); refused in every permission mode")
				}
			}
		}
	}
}

// patchFile: patch [options] [FILE [PATCHFILE]] changes FILE (or the files the patch names,
// which the gate does not read when it comes from standard input).
func (a *assessor) patchFile(name string, argv []arg, _ []string, _ int) {
	_, operands := opts(argv[1:], "BbdDFgiopVYz", "--directory", "--input", "--output", "--strip", "--prefix", "--suffix")
	if len(operands) > 0 {
		a.editsFile(name, operands[:1])
	}
}

// edFile: ed [options] FILE edits FILE with commands from standard input.
func (a *assessor) edFile(name string, argv []arg, _ []string, _ int) {
	_, operands := opts(argv[1:], "p")
	a.editsFile(name, operands)
}
