package risk

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// wrapper is a program that runs the command that follows its own options and operands.
type wrapper struct {
	shortVal   string   // short options that take a value
	longVal    []string // long options that take a value unless written --name=value
	positional int      // operands before the command (timeout's DURATION, chroot's NEWROOT)
	plain      bool     // options stop at the first argument that is not one (busybox rm)
	// chdir names the option whose value is the directory the command runs in (sudo -D,
	// unshare --wd): a short letter, 0 for none, and a long name.
	chdirShort byte
	chdirLong  string
}

// dir returns the directory a wrapper's own arguments (argv up to the command) move the
// command to; nil when they do not.
func (w wrapper) dir(argv []arg) arg {
	if w.chdirShort == 0 && w.chdirLong == "" {
		return nil
	}
	g, _ := optArg(argv[1:], w.chdirShort, w.chdirLong, w.shortVal, w.longVal)
	return g
}

// inDir runs read with the working directory moved to dir, as `env -C DIR` or `sudo -D DIR`
// starts the command there; nil leaves it where it is.
func (a *assessor) inDir(dir arg, read func()) {
	if dir == nil {
		read()
		return
	}
	cwd, old := a.cwd, a.oldCwd
	a.cd("cd", []arg{{{text: "cd", exact: true}}, dir}, nil, 0)
	read()
	a.cwd, a.oldCwd = cwd, old
}

var wrappers = map[string]wrapper{
	"sudo": {shortVal: "ugpCDrtTUhR", longVal: []string{"--user", "--group", "--prompt",
		"--close-from", "--chdir", "--role", "--type", "--command-timeout", "--other-user",
		"--host", "--chroot"}, chdirShort: 'D', chdirLong: "--chdir"},
	"doas":     {shortVal: "uC"},
	"nice":     {shortVal: "n", longVal: []string{"--adjustment"}},
	"nohup":    {},
	"timeout":  {shortVal: "sk", longVal: []string{"--signal", "--kill-after"}, positional: 1},
	"exec":     {shortVal: "a"},
	"builtin":  {},
	"busybox":  {plain: true},
	"toybox":   {plain: true},
	"setsid":   {},
	"stdbuf":   {shortVal: "ioe", longVal: []string{"--input", "--output", "--error"}},
	"ionice":   {shortVal: "cnp", longVal: []string{"--class", "--classdata", "--pid"}},
	"time":     {shortVal: "fo", longVal: []string{"--format", "--output"}},
	"chroot":   {longVal: []string{"--userspec", "--groups"}, positional: 1},
	"unbuffer": {},
	"nocache":  {},
	"then":     {},
	// taskset [-a] [-c] MASK|LIST COMMAND (-p acts on a pid and runs nothing).
	"taskset": {positional: 1},
	// chrt [options] PRIORITY COMMAND.
	"chrt": {shortVal: "TPD", longVal: []string{"--sched-runtime", "--sched-period", "--sched-deadline"}, positional: 1},
	// prlimit [--resource=LIMITS]… COMMAND; resource values are attached.
	"prlimit": {shortVal: "po", longVal: []string{"--pid", "--output"}},
	"numactl": {shortVal: "imNCpPwb", longVal: []string{"--interleave", "--membind", "--cpunodebind",
		"--physcpubind", "--preferred", "--preferred-many", "--weighted-interleave", "--cpubind"}},
	"unshare": {shortVal: "SGRw", longVal: []string{"--setuid", "--setgid", "--root", "--wd",
		"--propagation", "--setgroups", "--map-user", "--map-group", "--map-users", "--map-groups",
		"--monotonic", "--boottime"}, chdirShort: 'w', chdirLong: "--wd"},
	"strace": {shortVal: "abeEIoOpPsSuUX", longVal: []string{"--output", "--attach", "--string-limit",
		"--user", "--env", "--trace-path", "--summary-sort-by", "--columns", "--const-print-style",
		"--trace", "--signal", "--status", "--quiet", "--decode-fds", "--absolute-timestamps", "--seccomp-bpf"}},
	"ltrace": {shortVal: "aADeFlnopsuwxX", longVal: []string{"--output", "--library", "--config", "--indent", "--align"}},
	"systemd-run": {shortVal: "upHMEs", longVal: []string{"--unit", "--property", "--host", "--machine",
		"--description", "--slice", "--setenv", "--uid", "--gid", "--nice", "--working-directory",
		"--on-active", "--on-boot", "--on-startup", "--on-unit-active", "--on-unit-inactive",
		"--on-calendar", "--path-property", "--socket-property", "--timer-property", "--service-type"}, chdirLong: "--working-directory"},
	"catchsegv":  {},
	"faketime":   {positional: 1},
	"fakeroot":   {shortVal: "ls", longVal: []string{"--lib", "--faked", "-i", "-s"}},
	"proot":      {shortVal: "rbmwvq", longVal: []string{"--rootfs", "--bind", "--mount", "--cwd", "--verbose", "--qemu"}, chdirShort: 'w', chdirLong: "--cwd"},
	"cgexec":     {shortVal: "g"},
	"firejail":   {},
	"nsenter":    {shortVal: "tSGwr", longVal: []string{"--target", "--setuid", "--setgid", "--wd", "--root"}, chdirShort: 'w', chdirLong: "--wd"},
	"setpriv":    {longVal: []string{"--reuid", "--regid", "--groups", "--inh-caps", "--ambient-caps", "--bounding-set", "--securebits", "--pdeathsig", "--selinux-label", "--apparmor-profile", "--landlock-access", "--landlock-rule"}},
	"caffeinate": {shortVal: "tw"},
	"pkexec":     {longVal: []string{"--user"}},
	"ssh-agent":  {shortVal: "aEPt"},
	"sshpass":    {shortVal: "pfdP"},
}

// skip returns the index of the wrapped command in argv, false when there is none.
func (w wrapper) skip(argv []arg) (int, bool) {
	pos := w.positional
	for i := 1; i < len(argv); i++ {
		t, ok := argv[i].exact()
		switch {
		case !ok || w.plain || t == "-" || !strings.HasPrefix(t, "-"):
			if pos > 0 && ok {
				pos--
				continue
			}
			return i, true
		case t == "--":
			return i + 1, i+1 < len(argv)
		case strings.HasPrefix(t, "--"):
			name, _, attached := strings.Cut(t, "=")
			if !attached && contains(w.longVal, name) {
				i++
			}
		default:
			for j := 1; j < len(t); j++ {
				if strings.IndexByte(w.shortVal, t[j]) >= 0 {
					if j == len(t)-1 {
						i++
					}
					break
				}
			}
		}
	}
	return 0, false
}

// env [-i] [-u NAME] [-C DIR] [-S STRING] [NAME=VALUE]… COMMAND. -S splits its string into
// arguments, so `env -S 'rm -rf /'` runs rm.
func (a *assessor) envCmd(_ string, argv []arg, stdin []string, depth int) {
	var dir arg // -C DIR: the command starts in DIR (`env -C ~ rm -rf -- *`)
	for i := 1; i < len(argv); i++ {
		t, ok := argv[i].exact()
		if !ok {
			a.inDir(dir, func() { a.command(argv[i:], stdin, depth) })
			return
		}
		if s, found := cutSplitString(t); found {
			if s == "" && i+1 < len(argv) {
				i++
				s, _ = argv[i].exact()
			}
			a.inDir(dir, func() { a.command(append(a.split(s, depth), argv[i+1:]...), stdin, depth) })
			return
		}
		switch {
		case (t == "-C" || t == "--chdir") && i+1 < len(argv):
			i++
			dir = argv[i]
		case strings.HasPrefix(t, "--chdir="):
			dir = arg{{text: strings.TrimPrefix(t, "--chdir="), exact: true}}
		case strings.HasPrefix(t, "-C") && len(t) > 2:
			dir = arg{{text: t[2:], exact: true}}
		case t == "-u" || t == "--unset":
			i++
		case t == "--":
		case strings.HasPrefix(t, "-"):
		case strings.Contains(t, "=") && !strings.HasPrefix(t, "="):
		default:
			a.inDir(dir, func() { a.command(argv[i:], stdin, depth) })
			return
		}
	}
}

// cutSplitString recognises env's -S / --split-string, attached or not.
func cutSplitString(t string) (string, bool) {
	for _, p := range []string{"--split-string=", "-S"} {
		if s, ok := strings.CutPrefix(t, p); ok {
			return s, true
		}
	}
	if t == "--split-string" {
		return "", true
	}
	return "", false
}

// split reads a string as the arguments of one simple command, the way env -S does; any
// other shape of text is read as shell text instead.
func (a *assessor) split(s string, depth int) []arg {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	if err == nil && len(f.Stmts) == 1 {
		if call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr); ok && len(call.Assigns) == 0 {
			return a.args(call.Args)
		}
	}
	a.text(s, depth+1)
	return nil
}

// xargs runs its command with arguments read from standard input; what is statically piped
// in is appended, otherwise one unknown argument is.
func (a *assessor) xargs(_ string, argv []arg, stdin []string, depth int) {
	w := wrapper{shortVal: "adEIeLnPs", longVal: []string{"--arg-file", "--delimiter", "--eof",
		"--replace", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}}
	inner := []arg{{{text: "echo", exact: true}}}
	i, ok := w.skip(argv)
	if ok {
		inner = append([]arg(nil), argv[i:]...)
	} else {
		i = len(argv)
	}
	if file, ok := optArg(argv[1:i], 'a', "--arg-file", w.shortVal, w.longVal); ok {
		// -a FILE replaces standard input: read when it is <(…), unreadable otherwise.
		stdin = []string{unknownMark}
		if texts, ok := a.scriptTexts(file, nil); ok && len(texts) > 0 {
			stdin = texts
		}
	}
	extra, unread := false, len(stdin) > 0
	for _, s := range stdin {
		if unreadInput(s) {
			continue
		}
		unread = false
		for _, f := range strings.Fields(s) {
			inner = append(inner, arg{{text: f, exact: !strings.ContainsAny(f, unknownMark+allMark)}})
			extra = true
		}
	}
	if !extra {
		// What an unreadable command pipes in (`curl … | xargs rm -rf`) is unreadable; with
		// nothing piped, xargs reads the terminal.
		inner = append(inner, arg{{text: "", unread: unread}})
	}
	a.command(inner, nil, depth)
}

// flock [options] FILE COMMAND…, or flock -c TEXT.
func (a *assessor) flock(_ string, argv []arg, stdin []string, depth int) {
	for i := 1; i < len(argv); i++ {
		if t, _ := argv[i].exact(); (t == "-c" || t == "--command") && i+1 < len(argv) {
			a.nested(argv[i+1], depth, "flock -c")
			return
		}
	}
	w := wrapper{shortVal: "wEo", longVal: []string{"--timeout", "--conflict-exit-code"}, positional: 1}
	if i, ok := w.skip(argv); ok {
		a.command(argv[i:], stdin, depth)
	}
}

// command -v and -V only look a name up; otherwise command runs it.
func (a *assessor) commandBuiltin(_ string, argv []arg, stdin []string, depth int) {
	w := wrapper{}
	for _, g := range argv[1:] {
		if t, _ := g.exact(); strings.HasPrefix(t, "-") && strings.ContainsAny(t, "vV") {
			return
		}
	}
	if i, ok := w.skip(argv); ok {
		a.command(argv[i:], stdin, depth)
	}
}

// nested reads an argument as shell text one level deeper. Text the gate cannot read
// (`bash -c "$X"`) is catastrophic: under allow_all it would run unasked (docs/risk.md).
func (a *assessor) nested(g arg, depth int, via string) {
	t, ok := g.exact()
	if !ok {
		a.note(Catastrophic, via, "", via+" runs shell text the gate cannot read statically; refused in every permission mode — run the command directly")
		return
	}
	a.text(t, depth+1)
}

// shell: bash, sh, zsh … with -c read their command string; with neither -c nor a script
// they read standard input. A script file is not read (the gate reads text, not files).
func (a *assessor) shell(name string, argv []arg, stdin []string, depth int) {
	cmd, fromStdin, i := false, false, 1
	for ; i < len(argv); i++ {
		t, ok := argv[i].exact()
		if !ok || t == "-" || t == "--" || !(strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+")) {
			if ok && (t == "-" || t == "--") {
				i++
			}
			break
		}
		if strings.HasPrefix(t, "--") {
			if t == "--rcfile" || t == "--init-file" {
				i++
			}
			continue
		}
		cmd = cmd || strings.ContainsRune(t, 'c')
		fromStdin = fromStdin || strings.ContainsRune(t[1:], 's')
		if strings.ContainsAny(t[1:], "oO") {
			i++
		}
	}
	switch {
	case cmd && i < len(argv):
		if i+1 < len(argv) {
			a.assign("0", argv[i+1]) // `sh -c 'rm -rf $0' ~`
		}
		a.positional(argv[min(i+2, len(argv)):]) // after the text come $0, $1, …
		a.nested(argv[i], depth, name+" -c")
	case cmd:
		// -c without text
	case fromStdin || i >= len(argv): // -O may have taken the last argument
		a.positional(argv[min(i, len(argv)):]) // -s: the operands are $1, $2, …
		a.runTexts(name, stdin, depth)
	default:
		// A script: read when the text decides it (bash <(echo …), bash /dev/stdin <<< …);
		// a script file is not read.
		if texts, ok := a.scriptTexts(argv[i], stdin); ok {
			a.positional(argv[i+1:])
			a.runTexts(name, texts, depth)
		}
	}
}

// source FILE [ARGS] (and .) runs FILE in the current shell: read when the text decides it
// (source <(echo …), . /dev/stdin <<< …); a script file is not read.
func (a *assessor) source(name string, argv []arg, stdin []string, depth int) {
	i := 1
	if t, _ := argv[min(i, len(argv)-1)].exact(); t == "--" {
		i++
	}
	if i >= len(argv) {
		return
	}
	if texts, ok := a.scriptTexts(argv[i], stdin); ok {
		a.positional(argv[i+1:])
		a.runTexts(name, texts, depth)
	}
}

// eval joins its arguments and runs them as shell text.
func (a *assessor) eval(name string, argv []arg, _ []string, depth int) {
	var parts []string
	for _, g := range argv[1:] {
		t, ok := g.exact()
		if !ok {
			a.note(Catastrophic, name, "", "eval runs text the gate cannot read statically; refused in every permission mode — run the command directly")
			return
		}
		parts = append(parts, t)
	}
	a.text(strings.Join(parts, " "), depth+1)
}

// trap ACTION SIGNAL…: the action is shell text run later.
func (a *assessor) trap(name string, argv []arg, _ []string, depth int) {
	if len(argv) > 2 {
		if t, _ := argv[1].exact(); !strings.HasPrefix(t, "-") {
			a.nested(argv[1], depth, name)
		}
	}
}

// alias NAME=TEXT: the text may run later. Aliases are off in bash -c until `shopt -s
// expand_aliases`, which a text can say, so a later call of NAME is read as TEXT followed by
// its arguments (`alias r='rm -rf'; r ~`).
func (a *assessor) alias(name string, argv []arg, _ []string, depth int) {
	for _, g := range argv[1:] {
		if t, ok := g.exact(); ok {
			if n, v, found := strings.Cut(t, "="); found {
				a.text(v, depth+1)
				a.aliases[n] = v
			}
		}
	}
}

// aliasCall reads a call of an alias the text defined: its text, then the call's arguments.
// As in bash, an alias is not expanded again inside its own text (`alias ls='ls -la'`).
func (a *assessor) aliasCall(name, text string, args []arg, depth int) {
	delete(a.aliases, name)
	defer func() { a.aliases[name] = text }()
	a.positional(args)
	a.text(text+` "$@"`, depth+1)
}

// watch runs its arguments through sh -c unless -x is given.
func (a *assessor) watch(name string, argv []arg, stdin []string, depth int) {
	w := wrapper{shortVal: "nq", longVal: []string{"--interval", "--equexit"}}
	i, ok := w.skip(argv)
	if !ok {
		return
	}
	flags, _ := opts(argv[1:i], "nq")
	if flags["-x"] || flags["--exec"] {
		a.command(argv[i:], stdin, depth)
		return
	}
	a.eval(name, append([]arg{argv[0]}, argv[i:]...), nil, depth)
}

// su -c TEXT runs TEXT as shell text.
func (a *assessor) su(name string, argv []arg, _ []string, depth int) {
	for i := 1; i < len(argv); i++ {
		t, _ := argv[i].exact()
		if v, ok := strings.CutPrefix(t, "--command="); ok {
			a.text(v, depth+1)
		} else if (t == "-c" || t == "--command") && i+1 < len(argv) {
			a.nested(argv[i+1], depth, name+" -c")
		}
	}
}

// optArg returns the value of the option short (a letter, 0 for none) or long among args,
// GNU style: in a cluster (-qc TEXT, -qcTEXT), --long=VALUE or --long VALUE. shortVal and
// longVal list every option of the program that takes a value, so a value is never read as
// an option. Options may come anywhere until "--".
func optArg(args []arg, short byte, long, shortVal string, longVal []string) (arg, bool) {
	for i := 0; i < len(args); i++ {
		t, ok := args[i].exact()
		if !ok || t == "-" || !strings.HasPrefix(t, "-") {
			continue
		}
		if t == "--" {
			return nil, false
		}
		if strings.HasPrefix(t, "--") {
			name, v, attached := strings.Cut(t, "=")
			switch {
			case name == long && attached:
				return arg{{text: v, exact: true}}, true
			case name == long && i+1 < len(args):
				return args[i+1], true
			case !attached && contains(longVal, name):
				i++
			}
			continue
		}
		for j := 1; j < len(t); j++ {
			if t[j] == short || strings.IndexByte(shortVal, t[j]) >= 0 {
				switch {
				case j < len(t)-1 && t[j] == short:
					return arg{{text: t[j+1:], exact: true}}, true
				case t[j] == short && i+1 < len(args):
					return args[i+1], true
				case j == len(t)-1:
					i++
				}
				break
			}
		}
	}
	return nil, false
}

// runuser -u USER [--] COMMAND runs COMMAND; runuser [options] USER [-c TEXT] runs TEXT as
// shell text, like su.
func (a *assessor) runuser(name string, argv []arg, stdin []string, depth int) {
	shortVal, longVal := "ugGswc", []string{"--user", "--group", "--supp-group", "--shell",
		"--whitelist-environment", "--command", "--session-command"}
	if text, ok := optArg(argv[1:], 'c', "--command", shortVal, longVal); ok {
		a.nested(text, depth, name+" -c")
		return
	}
	if text, ok := optArg(argv[1:], 0, "--session-command", shortVal, longVal); ok {
		a.nested(text, depth, name+" --session-command")
		return
	}
	if _, ok := optArg(argv[1:], 'u', "--user", shortVal, longVal); ok {
		w := wrapper{shortVal: shortVal, longVal: longVal}
		if i, ok := w.skip(argv); ok {
			a.command(argv[i:], stdin, depth)
		}
	}
}

// sg [-] GROUP [-c] TEXT runs TEXT with /bin/sh -c.
func (a *assessor) sg(name string, argv []arg, _ []string, depth int) {
	rest := argv[1:]
	if len(rest) > 0 {
		if t, _ := rest[0].exact(); t == "-" {
			rest = rest[1:]
		}
	}
	if len(rest) < 2 { // the group alone: an interactive shell
		return
	}
	rest = rest[1:]
	if t, _ := rest[0].exact(); t == "-c" {
		rest = rest[1:]
	}
	if len(rest) > 0 {
		a.nested(rest[0], depth, name)
	}
}

// script [options] [FILE] with -c TEXT runs TEXT with the user's shell.
func (a *assessor) script(name string, argv []arg, _ []string, depth int) {
	if text, ok := optArg(argv[1:], 'c', "--command", "cEIOBTm",
		[]string{"--echo", "--log-in", "--log-out", "--log-io", "--log-timing", "--logging-format", "--output-limit"}); ok {
		a.nested(text, depth, name+" -c")
	}
}

// parallel [options] COMMAND ::: ARGS… runs COMMAND once per argument, with {} replaced by it
// or the argument appended; without COMMAND each argument is shell text; without ::: the
// arguments come from standard input, as with xargs. parallel runs its commands through a
// shell, so a COMMAND of one word with blanks is shell text.
func (a *assessor) parallel(name string, argv []arg, stdin []string, depth int) {
	w := wrapper{shortVal: "aCdEIjLlnNsSX", longVal: []string{"--arg-file", "--colsep", "--delimiter",
		"--eof", "--replace", "--jobs", "--max-lines", "--max-args", "--max-chars", "--sshlogin",
		"--results", "--joblog", "--tmpdir", "--workdir", "--wd", "--timeout", "--delay", "--retries",
		"--load", "--memfree", "--nice", "--basefile", "--return", "--env", "--tag-string", "--tagstring",
		"--shebang-wrap", "--sshloginfile", "--slf", "--header", "--block", "--recstart", "--recend",
		"--termseq", "--transfer-file", "--tf", "--limit", "--ssh", "--ctag", "--plus", "--progress"}}
	var cmd []arg
	if i, ok := w.skip(argv); ok {
		cmd = argv[i:]
	}
	var inputs arg
	sep := false
	if _, ok := optArg(argv[1:len(argv)-len(cmd)], 'a', "--arg-file", w.shortVal, w.longVal); ok {
		inputs, sep = arg{{unread: true}}, true // arguments from a file the gate does not read
	}
	for k, g := range cmd {
		if t, ok := g.exact(); ok && strings.HasPrefix(t, ":::") {
			files := strings.HasPrefix(t, "::::") // :::: FILE… reads the arguments from files
			for _, h := range cmd[k+1:] {
				t, ok := h.exact()
				switch {
				case ok && strings.HasPrefix(t, "::"):
					files = strings.HasPrefix(t, "::::")
				case files:
					inputs = append(inputs, reading{unread: true})
				default:
					inputs = append(inputs, h...)
				}
			}
			cmd, sep = cmd[:k], true
			break
		}
	}
	if !sep {
		unread := false
		for _, s := range stdin {
			if unreadInput(s) {
				unread = true
				continue
			}
			for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
				inputs = append(inputs, reading{text: l, exact: true})
			}
		}
		if len(inputs) == 0 {
			inputs = arg{{text: "", unread: unread}}
		}
	}
	inputs = a.capReadings(inputs)
	if len(cmd) == 0 { // each input is a command line
		for _, r := range inputs {
			a.nested(arg{r}, depth, name)
		}
		return
	}
	if len(cmd) == 1 {
		if t, ok := cmd[0].exact(); ok && strings.ContainsAny(t, " \t\n;|&") {
			cmd = a.split(t, depth)
			if cmd == nil {
				return
			}
		}
	}
	a.findExec(appendPlaceholder(cmd), []arg{inputs}, depth)
}

// appendPlaceholder appends {} to a command that has none, as xargs-like runners append the
// argument.
func appendPlaceholder(cmd []arg) []arg {
	for _, g := range cmd {
		for _, r := range g {
			if strings.Contains(r.text, "{}") {
				return cmd
			}
		}
	}
	return append(append([]arg(nil), cmd...), arg{{text: "{}", exact: true}})
}
