package risk

import (
	"path"
	"strings"
)

// progName is the program a command word names: the base name of an absolute or relative
// program path (/bin/rm, /usr/bin/rm, ./rm, 'C:\Windows\System32\rm.exe'), without a
// Windows .exe suffix.
func progName(s string) string {
	n := path.Base(strings.ReplaceAll(s, `\`, "/"))
	if len(n) > 4 && strings.EqualFold(n[len(n)-4:], ".exe") {
		n = n[:len(n)-4]
	}
	return n
}

// command assesses one command line, already split into arguments. stdin holds the texts it
// statically reads on standard input.
func (a *assessor) command(argv []arg, stdin []string, depth int) {
	if len(argv) == 0 {
		return
	}
	for _, r := range argv[0] { // every possible program name (p=ls; … p=rm; $p -rf /)
		if !r.exact {
			a.unknownProgram(argv)
			continue
		}
		a.program(progName(r.text), argv, stdin, depth)
	}
}

// program dispatches on the program name: wrappers are looked through, shells and eval are
// read again, and the destructive command table is applied.
func (a *assessor) program(name string, argv []arg, stdin []string, depth int) {
	if a.onCall != nil {
		a.onCall(name, argv)
	}
	if len(stdin) > 0 {
		// Shell text the program runs (sh -c, eval, a function, code's system()) inherits its
		// standard input: `sh -c 'xargs rm -rf' < list`, `f < list`.
		outer := a.shellStdin
		a.shellStdin = stdin
		defer func() { a.shellStdin = outer }()
	}
	if body, ok := a.funcs[name]; ok {
		a.call(body, argv[1:], depth) // a function shadows the program of the same name
	}
	if text, ok := a.aliases[name]; ok {
		a.aliasCall(name, text, argv[1:], depth)
	}
	if w, ok := wrappers[name]; ok {
		if i, ok := w.skip(argv); ok {
			a.inDir(w.dir(argv[:i]), func() { a.command(argv[i:], stdin, depth) })
		}
		return
	}
	if !plainReader(name) {
		a.zunoOperands(name, argv)
	}
	if rule, ok := table[name]; ok {
		rule(a, name, argv, stdin, depth)
		return
	}
	switch {
	case strings.HasPrefix(name, "mkfs."), strings.HasPrefix(name, "mke2fs"):
		a.format(name, argv, stdin, depth)
	case strings.HasPrefix(name, "python"), strings.HasPrefix(name, "perl5"):
		a.interpreter(name, argv, stdin, depth)
	case !dataPrograms[name]:
		a.unknownWrapper(name, argv, stdin, depth)
	}
}

// dataPrograms treat their arguments as data, never as a command to run: `echo rm -rf /`
// prints, `grep -r rm /` searches.
var dataPrograms = map[string]bool{
	"echo": true, "print": true, "grep": true, "egrep": true, "fgrep": true, "rg": true,
	"ag": true, "ack": true, "man": true, "info": true, "help": true, "whatis": true,
	"apropos": true, "which": true, "whereis": true, "type": true, "hash": true, "tldr": true,
	":": true, "true": true, "false": true, "test": true, "[": true, "[[": true, "let": true,
	"unset": true, "complete": true, "compgen": true, "history": true, "export": true,
	"declare": true, "local": true, "readonly": true, "typeset": true, "shift": true,
}

// readers only read the files they are given (or, cd, enter a directory): naming Zuno's own
// data to them is not a write (docs/risk.md, "Zuno's own data").
var readers = map[string]bool{
	"cat": true, "less": true, "more": true, "head": true, "tail": true, "wc": true, "ls": true,
	"stat": true, "file": true, "du": true, "df": true, "md5sum": true, "sha1sum": true,
	"sha256sum": true, "sha512sum": true, "b2sum": true, "cksum": true, "diff": true, "cmp": true,
	"od": true, "hexdump": true, "xxd": true, "strings": true, "realpath": true, "readlink": true,
	"dirname": true, "basename": true, "printf": true, "tree": true, "bat": true, "nl": true,
	"cd": true, "pushd": true,
}

func plainReader(name string) bool { return readers[name] || dataPrograms[name] }

// zunoOperands: a program that is not a plain reader and names Zuno's own data (the data
// directory, the event database with its -wal and -shm files) as an argument, or as the
// value of an --option=, is catastrophic: `sqlite3 zuno.db 'delete …'`, `chmod 777
// auth.json` change what the agent must not touch, and the gate cannot know each program's
// writes.
func (a *assessor) zunoOperands(name string, argv []arg) {
	if len(a.zuno) == 0 {
		return
	}
	for _, g := range argv[1:] {
		for _, r := range g {
			for _, t := range []string{r.text, optionValueOf(r.text)} {
				if t == "" {
					continue
				}
				p, _, ok := a.target(reading{text: t, glob: r.glob})
				if ok && a.inZuno(p) {
					a.note(Catastrophic, name, p, name+" names "+a.display(p)+" (Zuno's own data: the event log, the auth file), which only Zuno may change; refused in every permission mode")
					return
				}
			}
		}
	}
}

// optionValueOf returns VALUE of --name=VALUE, else "".
func optionValueOf(t string) string {
	if !strings.HasPrefix(t, "-") {
		return ""
	}
	_, v, _ := strings.Cut(t, "=")
	return v
}

// inZuno says p is one of Zuno's own directories or files, or inside one.
func (a *assessor) inZuno(p string) bool {
	for _, z := range a.zuno {
		if under(p, z) {
			return true
		}
	}
	return false
}

// maxNet bounds the arguments the safety net reads as commands in one call.
const maxNet = 8

// unknownWrapper is the safety net for a program the gate does not know: an argument that
// names a program of the destructive table or a wrapper is read, with what follows it, as
// a command the program may run (`ssh host rm -rf /`, a wrapper the gate has not met). Only
// a catastrophic reading counts: a destructive one would ask about everyday commands
// (`apt-get install parted`), and the catastrophic denial is what allow_all keeps.
func (a *assessor) unknownWrapper(name string, argv []arg, stdin []string, depth int) {
	seen := 0
	for i := 1; i < len(argv) && seen < maxNet; i++ {
		t, ok := argv[i].exact()
		if !ok {
			continue
		}
		p := progName(t)
		if _, known := table[p]; !known && !strings.HasPrefix(p, "mkfs") {
			if _, wraps := wrappers[p]; !wraps {
				continue
			}
		}
		seen++
		c := *a
		c.worst = Verdict{Level: Safe}
		// An unreadable operand is not promoted here: `docker rm $(docker ps -aq)` names
		// containers, not paths, and only what the net reads as a path it knows counts.
		c.netted = true
		c.command(argv[i:], stdin, depth)
		a.texts, a.calls = c.texts, c.calls
		if c.worst.Level == Catastrophic {
			a.note(Catastrophic, c.worst.Program, c.worst.Target, name+" is not a program the gate knows and may run its arguments as a command: "+c.worst.Reason)
		}
	}
}

type rule func(a *assessor, name string, argv []arg, stdin []string, depth int)

// table is the destructive command table (docs/risk.md lists each entry and why).
var table map[string]rule

func init() {
	table = map[string]rule{}
	for _, e := range []struct {
		rule  rule
		names []string
	}{
		{(*assessor).rm, []string{"rm", "unlink", "shred", "srm", "rimraf", "trash", "trash-put", "gvfs-trash", "gvfs-rm"}},
		{(*assessor).gio, []string{"gio"}},
		{(*assessor).truncate, []string{"truncate"}},
		{(*assessor).find, []string{"find"}},
		{(*assessor).xargs, []string{"xargs"}},
		{(*assessor).dd, []string{"dd"}},
		{(*assessor).format, []string{"mkfs", "mkswap", "wipefs", "blkdiscard", "sfdisk", "sgdisk"}},
		{(*assessor).partition, []string{"fdisk", "parted", "gdisk", "cfdisk"}},
		{(*assessor).perm, []string{"chmod", "chown", "chgrp"}},
		{(*assessor).copyTo, []string{"cp", "install", "tee", "mv", "sponge"}},
		{(*assessor).rsync, []string{"rsync"}},
		{(*assessor).git, []string{"git"}},
		{(*assessor).kill, []string{"kill"}},
		{(*assessor).power, []string{"shutdown", "reboot", "halt", "poweroff", "systemctl", "init", "telinit"}},
		{(*assessor).crontab, []string{"crontab"}},
		{(*assessor).cd, []string{"cd", "pushd"}},
		{(*assessor).shell, []string{"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish"}},
		{(*assessor).eval, []string{"eval"}},
		{(*assessor).trap, []string{"trap"}},
		{(*assessor).alias, []string{"alias"}},
		{(*assessor).watch, []string{"watch"}},
		{(*assessor).su, []string{"su"}},
		{(*assessor).envCmd, []string{"env"}},
		{(*assessor).flock, []string{"flock"}},
		{(*assessor).commandBuiltin, []string{"command"}},
		{(*assessor).runuser, []string{"runuser"}},
		{(*assessor).set, []string{"set"}},
		{(*assessor).printf, []string{"printf"}},
		{(*assessor).read, []string{"read"}},
		{(*assessor).mapfile, []string{"mapfile", "readarray"}},
		{(*assessor).ln, []string{"ln"}},
		{(*assessor).sed, []string{"sed"}},
		{(*assessor).source, []string{"source", "."}},
		{(*assessor).sg, []string{"sg"}},
		{(*assessor).script, []string{"script"}},
		{(*assessor).parallel, []string{"parallel", "sem"}},
		{(*assessor).tar, []string{"tar", "gtar", "bsdtar"}},
		{(*assessor).zip, []string{"zip"}},
		{(*assessor).sevenZip, []string{"7z", "7za", "7zr", "7zz"}},
		{(*assessor).ssh, []string{"ssh", "slogin", "autossh"}},
		{(*assessor).mosh, []string{"mosh"}},
		{(*assessor).editor, []string{"vim", "vi", "nvim", "gvim", "ex", "view", "vimdiff", "evim"}},
		{(*assessor).awk, []string{"awk", "gawk", "mawk", "nawk"}},
		{(*assessor).perl, []string{"perl"}},
		{(*assessor).tclsh, []string{"tclsh", "wish", "expect"}},
		{(*assessor).interpreter, []string{"ruby", "node", "nodejs", "bun", "php", "lua", "pypy", "pypy3"}},
	} {
		for _, n := range e.names {
			table[n] = e.rule
		}
	}
	for _, e := range runners {
		for _, n := range e.names {
			table[n] = e.rule
		}
	}
}

// opts splits arguments GNU style: options may come anywhere until "--"; a short option in
// shortVal and a long option in longVal take the next argument as their value unless it is
// attached. flags holds each option once per letter ("-rf" gives "-r" and "-f").
func opts(args []arg, shortVal string, longVal ...string) (flags map[string]bool, operands []arg) {
	flags = map[string]bool{}
	for i := 0; i < len(args); i++ {
		t, ok := args[i].exact()
		if !ok || t == "-" || !strings.HasPrefix(t, "-") {
			operands = append(operands, args[i])
			continue
		}
		if t == "--" {
			return flags, append(operands, args[i+1:]...)
		}
		if strings.HasPrefix(t, "--") {
			name, _, attached := strings.Cut(t, "=")
			flags[name] = true
			if !attached && contains(longVal, name) {
				i++
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			flags["-"+t[j:j+1]] = true
			if strings.IndexByte(shortVal, t[j]) >= 0 {
				if j == len(t)-1 {
					i++
				}
				break
			}
		}
	}
	return flags, operands
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// destroy judges one operand a command deletes or overwrites: catastrophic when it is a
// protected location, destructive otherwise.
func (a *assessor) destroy(prog string, g arg, verb string) {
	for _, r := range g {
		p, contents, ok := a.target(r)
		c := none
		if ok {
			c = a.classify(p)
		}
		shown := a.display(p)
		if contents {
			shown = strings.TrimSuffix(shown, "/") + "/*"
		}
		if !a.netted && a.viaDescriptor(r) {
			a.note(Catastrophic, prog, "…", prog+" "+verb+" a path through an open descriptor ("+a.display(r.text)+"), which is whatever the descriptor is open on and the gate cannot read; refused in every permission mode — name the path literally")
			continue
		}
		if c == none && a.unreadable(r) {
			a.note(Catastrophic, prog, "…", prog+" "+verb+" a path the gate cannot read (what a command prints, or a directory entered from it); refused in every permission mode — name the path literally")
			continue
		}
		if c == none {
			a.note(Destructive, prog, a.display(r.text), prog+" "+verb+" "+a.display(orUnknown(r.text)))
			continue
		}
		why := prog + " " + verb + " " + shown + " (" + c.String() + ")"
		if !r.exact {
			why += ", which is what it names when its unknown parts are empty, as an unset variable is"
		}
		a.note(Catastrophic, prog, shown, why+"; refused in every permission mode")
	}
}

// unreadable says a deletion's target is not known to the gate in a way that matters: a part
// of it is what a command prints that the gate cannot read (`rm -rf "$(… | base64 -d)"`), or
// it is relative to a directory entered that way. Under allow_all a destructive verdict runs
// unasked, so such a deletion is catastrophic (docs/risk.md, "Unreadable input").
func (a *assessor) unreadable(r reading) bool {
	if a.netted {
		return false
	}
	if !strings.HasPrefix(r.text, "/") && a.cwd != nil && a.cwd.unread {
		return true
	}
	return !r.exact && r.unread
}

func orUnknown(s string) string {
	if s == "" {
		return "a path the gate cannot read"
	}
	return s
}

// rm, unlink, shred: deleting (or shredding) a protected location is catastrophic whatever
// the flags; --no-preserve-root is catastrophic on its own, having no other use.
func (a *assessor) rm(name string, argv []arg, _ []string, _ int) {
	// No option takes a value here: a value misread as an operand can only over-report.
	flags, operands := opts(argv[1:], "")
	if flags["--no-preserve-root"] {
		a.note(Catastrophic, name, "/", name+" --no-preserve-root exists only to delete /; refused in every permission mode")
	}
	verb := "deletes"
	if name == "shred" {
		verb = "shreds"
	}
	for _, g := range operands {
		a.destroy(name, g, verb)
	}
}

func (a *assessor) truncate(name string, argv []arg, _ []string, _ int) {
	_, operands := opts(argv[1:], "sr", "--size", "--reference")
	for _, g := range operands {
		a.destroy(name, g, "truncates")
	}
}

// dd writes over what of= names.
func (a *assessor) dd(name string, argv []arg, _ []string, _ int) {
	for _, g := range argv[1:] {
		for _, r := range g {
			if of, ok := strings.CutPrefix(r.text, "of="); ok {
				a.destroy(name, arg{{text: of, exact: r.exact, glob: false}}, "writes over")
			}
		}
	}
}

// format: mkfs and its kin destroy the file system of the device they are given.
func (a *assessor) format(name string, argv []arg, _ []string, _ int) {
	_, operands := opts(argv[1:], "") // option values (-L label) read as ordinary operands
	for _, g := range operands {
		a.destroy(name, g, "formats")
	}
	if len(operands) == 0 {
		a.note(Destructive, name, "", name+" rewrites a file system or a partition table")
	}
}

// partition editors are interactive but rewrite partition tables; -l only lists.
func (a *assessor) partition(name string, argv []arg, _ []string, _ int) {
	flags, _ := opts(argv[1:], "bcCHSuL")
	if flags["-l"] || flags["--list"] {
		return
	}
	a.note(Destructive, name, "", name+" can rewrite a disk's partition table")
}

// perm: chmod, chown and chgrp; recursive on a protected location breaks the system or
// the home directory (ssh refuses keys with wrong modes, sudo refuses a world-writable /etc).
func (a *assessor) perm(name string, argv []arg, _ []string, _ int) {
	var flags map[string]bool
	var operands []arg
	if name == "chmod" {
		flags, operands = chmodOpts(argv[1:])
	} else {
		flags, operands = opts(argv[1:], "", "--from")
	}
	if !flags["--reference"] && len(operands) > 0 {
		operands = operands[1:] // the mode or the owner
	}
	if !flags["-R"] && !flags["--recursive"] {
		return
	}
	for _, g := range operands {
		a.destroy(name+" -R", g, "changes every file under")
	}
}

// chmodOpts is opts for chmod, whose modes may start with "-" (chmod -x file): a cluster
// with letters other than chmod's own options is the mode.
func chmodOpts(args []arg) (map[string]bool, []arg) {
	var kept []arg
	for _, g := range args {
		if t, ok := g.exact(); ok && strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") &&
			strings.Trim(t[1:], "Rcfv") != "" {
			kept = append(kept, arg{{text: "./" + t, exact: true}}) // a mode, not a path
			continue
		}
		kept = append(kept, g)
	}
	return opts(kept, "")
}

// mv of a protected location moves the system, a home directory or credentials away.
func (a *assessor) mv(name string, argv []arg, _ []string, _ int) {
	flags, operands := opts(argv[1:], "")
	if !flags["-t"] && !flags["--target-directory"] && len(operands) > 0 {
		operands = operands[:len(operands)-1]
	}
	a.movesAway(name, operands)
}
