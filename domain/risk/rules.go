package risk

import (
	"path"
	"regexp"
	"strconv"
	"strings"
)

// findFilters are find tests that narrow what its actions touch.
var findFilters = []string{"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename",
	"-regex", "-iregex", "-newer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin",
	"-size", "-user", "-group", "-perm", "-links", "-inum", "-samefile", "-empty", "-lname",
	"-ilname", "-uid", "-gid", "-nouser", "-nogroup", "-used", "-newermt", "-fstype"}

// find START… EXPRESSION: -delete deletes what it finds, -exec/-execdir/-ok/-okdir run a
// command on it. Without a narrowing test that is every path under START, so START is the
// target; with one it is some path under START, and also each protected location under
// START that its name tests match (`find ~ -name "*" -delete` deletes ~, `-name '.*'` ~/.ssh).
func (a *assessor) find(_ string, argv []arg, stdin []string, depth int) {
	starts, expr := findStarts(argv[1:])
	if findFollows(argv[1:]) {
		starts = followedStarts(starts)
	}
	deletes := false
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
		}
	}
	if from, ok := findFilesFrom(expr); ok {
		// -files0-from FILE: starting points the gate cannot read, or what is piped in
		starts = append(starts, a.namesFrom(from, stdin))
	}
	found := a.found(starts, expr)
	if deletes {
		for _, g := range found {
			a.destroy("find -delete", g, "deletes")
		}
	}
	for _, cmd := range execs {
		a.findExec(cmd, found, depth)
	}
}

// findFollows says find follows symbolic links given as starting points (-H, -L before them).
func findFollows(args []arg) bool {
	for _, g := range args {
		t, _ := g.exact()
		switch {
		case t == "-H" || t == "-L":
			return true
		case !strings.HasPrefix(t, "-") || t == "-" || t == "--":
			return false
		}
	}
	return false
}

// followedStarts marks starting points find enters through a link: a descriptor's link
// (`find -H /dev/fd/3 -delete`) is then what the descriptor is open on.
func followedStarts(starts []arg) []arg {
	out := make([]arg, len(starts))
	for i, g := range starts {
		out[i] = append(arg(nil), g...)
		for k, r := range out[i] {
			if descriptorLink.MatchString(cleanPath(r.text)) {
				out[i][k].text = cleanPath(r.text) + "/"
			}
		}
	}
	return out
}

// findFilesFrom returns the value of GNU find's -files0-from, which names a file (or - for
// standard input) of starting points.
func findFilesFrom(expr []arg) (arg, bool) {
	for i := 0; i+1 < len(expr); i++ {
		if t, _ := expr[i].exact(); t == "-files0-from" {
			return expr[i+1], true
		}
	}
	return nil, false
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

// nameTest is one of find's tests on a path's name: -name, -path, -regex and their
// case-insensitive forms.
type nameTest struct {
	whole bool // the whole path as find prints it, not its last name
	re    *regexp.Regexp
}

// findTests reads find's expression: whether a test narrows what the actions get (an -o, !
// or , lets an action run on what a test did not match, so nothing narrows), and the tests on
// names, which decide whether a protected location under START is among what is found.
func findTests(expr []arg, compile bool) (narrowed bool, tests []nameTest) {
	loose := false
	for i := 0; i < len(expr); i++ {
		t, _ := expr[i].exact()
		switch {
		case contains(findFilters, t):
			narrowed = true
			if compile && i+1 < len(expr) {
				if nt, ok := findNameTest(t, expr[i+1]); ok {
					tests = append(tests, nt)
				}
			}
		case t == "-o" || t == "-or" || t == "," || t == "!" || t == "-not":
			loose = true
		}
	}
	return narrowed && !loose, tests
}

// findNameTest compiles a name test; a pattern that is not known, or a regular expression
// Go cannot read, matches everything, which can only over-report.
func findNameTest(test string, pattern arg) (nameTest, bool) {
	fold := strings.HasPrefix(test, "-i")
	kind := strings.TrimPrefix(strings.TrimPrefix(test, "-"), "i")
	if kind != "name" && kind != "path" && kind != "wholename" && kind != "regex" {
		return nameTest{}, false
	}
	nt := nameTest{whole: kind != "name"}
	p, ok := pattern.exact()
	expr := ".*"
	if ok {
		if kind == "regex" {
			expr = p
		} else {
			expr = fnmatchRegexp(p)
		}
	}
	if fold {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile("^(?:" + expr + ")$")
	if err != nil {
		re = regexp.MustCompile(".*")
	}
	nt.re = re
	return nt, true
}

// fnmatchRegexp translates a find pattern (fnmatch without FNM_PATHNAME: * and ? match a
// slash too) to a regular expression.
func fnmatchRegexp(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			b.WriteString("(?s:.*)")
		case '?':
			b.WriteString("(?s:.)")
		case '\\':
			if i+1 < len(p) {
				i++
				b.WriteString(regexp.QuoteMeta(p[i : i+1]))
			}
		case '[':
			j := strings.IndexByte(p[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := p[i+1 : i+1+j]
			if j == 0 { // []…] : the ] is in the class
				k := strings.IndexByte(p[i+2:], ']')
				if k < 0 {
					b.WriteString(`\[`)
					continue
				}
				class, j = p[i+1:i+2+k], k+1
			}
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// found is what find hands to its actions: each start itself, or, when a test narrows the
// search, some unknown path under it and each protected location under it that the name
// tests match.
func (a *assessor) found(starts, expr []arg) []arg {
	if narrowed, _ := findTests(expr, false); !narrowed {
		return starts
	}
	var tests []nameTest
	compiled := false
	var out []arg
	for _, g := range starts {
		var rs arg
		for _, r := range g {
			rs = append(rs, reading{text: strings.TrimSuffix(r.text, "/") + "/" + unknownMark, exact: r.exact, unread: r.unread})
			p, _, ok := a.target(r)
			if !ok {
				continue
			}
			for _, c := range a.protectedUnder(p) {
				if !compiled { // only a start above a protected location needs the name tests
					_, tests = findTests(expr, true)
					compiled = true
				}
				// Tests on anything but the name (-size, -mtime, -user, …) cannot tell a
				// protected location below START from any other path: `find ~ -size -100G
				// -delete` reaches ~/.ssh (START itself, /var/log, is pruned, not destroyed).
				if (len(tests) == 0 && c != p) || (len(tests) > 0 && matchAll(tests, r.text+strings.TrimPrefix(c, p))) {
					rs = append(rs, reading{text: c, exact: r.exact})
				}
			}
		}
		out = append(out, rs)
	}
	return out
}

func matchAll(tests []nameTest, printed string) bool {
	for _, t := range tests {
		s := printed
		if !t.whole {
			s = path.Base(printed)
		}
		if !t.re.MatchString(s) {
			return false
		}
	}
	return true
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
						exact: r.exact && fr.exact, glob: r.glob || fr.glob, unread: r.unread || fr.unread})
				}
			}
			argv = append(argv, rs)
		}
		a.command(argv, nil, depth)
	}
}

// git: the subcommands that throw away work that exists nowhere else (uncommitted changes,
// untracked files, remote history) are destructive.
func (a *assessor) git(name string, argv []arg, _ []string, depth int) {
	w := wrapper{shortVal: "Cc", longVal: []string{"--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}}
	i, ok := w.skip(argv)
	for k := 1; k+1 < len(argv) && (k < i || !ok); k++ {
		if t, _ := argv[k].exact(); t == "-c" {
			a.gitConfig(name, argv[k+1], arg{}, depth)
		}
	}
	a.gitConfigEnv(name, depth)
	if !ok {
		return
	}
	sub, _ := argv[i].exact()
	if expansion, ok := gitAlias(argv[1:i], sub); ok {
		// `git -c alias.c='clean -fdx' c`: the alias names git's own subcommand and options.
		if a.texts++; a.texts <= maxTexts {
			a.git(name, append(append(append([]arg(nil), argv[:i]...), expansion...), argv[i+1:]...), nil, depth)
		}
		return
	}
	flags, operands := opts(argv[i+1:], "", "--file", "--blob", "--type", "--default", "--comment")
	if sub == "config" && len(operands) >= 2 { // git config [--global] KEY VALUE
		a.gitConfig(name, operands[0], operands[1], depth)
		k, _ := operands[0].exact()
		v, _ := operands[1].exact()
		a.requireForceOff = a.requireForceOff || falseSetting(k+"="+v)
	}
	why := ""
	switch sub {
	case "clean":
		a.gitClean(argv[1:i], argv[i+1:])
		return
	case "reset":
		if flags["--hard"] {
			why = "discards uncommitted changes"
		}
	case "rm":
		if !flags["--cached"] {
			_, pathspecs := opts(argv[i+1:], "", "--pathspec-from-file")
			if _, ok := optArg(argv[i+1:], 0, "--pathspec-from-file", "", nil); ok {
				pathspecs = append(pathspecs, arg{{unread: true}})
			}
			a.gitDeletes("git rm", argv[1:i], pathspecs, "deletes the tracked files of")
			return
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
		if flags["-u"] || flags["--include-untracked"] || flags["-a"] || flags["--all"] {
			// The untracked files leave the work tree for the stash, a drop away from gone:
			// in the home directory that is its contents.
			// The stash keeps them, so elsewhere it is not a loss: only a catastrophic reading
			// counts.
			a.onlyCatastrophic(func(c *assessor) {
				c.gitDeletes("git stash -u", argv[1:i], []arg{{{text: ".", exact: true}}}, "moves the untracked files of")
			})
		}
	}
	if why != "" {
		a.note(Destructive, "git "+sub, "", "git "+sub+" "+why)
	}
}

// gitClean: git clean deletes the untracked files (with -d directories, with -x the ignored
// ones too) in the directory it runs in, or in its pathspecs, once forced (-f, -i, or
// clean.requireForce off). The directory is where the command runs after git's own -C DIR
// and --work-tree DIR: in the home directory or above it (`cd ~ && git init && git clean
// -ffdx`, `git -C .. clean -ffdx` from ~/proj) it empties the home directory.
func (a *assessor) gitClean(global, args []arg) {
	flags, pathspecs := opts(args, "e", "--exclude")
	forced := flags["-f"] || flags["--force"] || flags["-i"] || flags["--interactive"] || a.gitRequireForceOff(global)
	if !forced || flags["-n"] || flags["--dry-run"] {
		return
	}
	if len(pathspecs) == 0 {
		pathspecs = []arg{{{text: ".", exact: true}}}
	}
	a.gitDeletes("git clean", global, pathspecs, "deletes the untracked files in")
}

// gitDeletes grades what git clean or git rm deletes: each pathspec in the directory git
// runs in (git's -C and --work-tree), and in $GIT_WORK_TREE when the text assigns it. In the
// home directory or above it that is the home directory (`cd ~ && git init && git add -A &&
// git commit -m x && git rm -r .`).
func (a *assessor) gitDeletes(prog string, global, pathspecs []arg, verb string) {
	each := func() {
		for _, g := range pathspecs {
			a.destroy(prog, g, verb)
		}
	}
	a.inDirs(gitDirs(global), each)
	if tree, ok := a.vars["GIT_WORK_TREE"]; ok {
		a.inDir(arg(tree), each)
	}
}

// gitAlias returns the words of a git alias for a subcommand (-c alias.NAME=VALUE, VALUE not
// starting with !, which is shell text read by gitConfig), to be read in its place.
func gitAlias(global []arg, sub string) ([]arg, bool) {
	for k := 0; k+1 < len(global); k++ {
		if t, _ := global[k].exact(); t != "-c" {
			continue
		}
		kv, _ := global[k+1].exact()
		key, value, _ := strings.Cut(kv, "=")
		if sub != "" && strings.EqualFold(key, "alias."+sub) && !strings.HasPrefix(value, "!") {
			fields := strings.Fields(value)
			if len(fields) == 0 || strings.EqualFold(fields[0], sub) {
				return nil, false // an alias of itself is not expanded again
			}
			var out []arg
			for _, f := range fields {
				out = append(out, arg{{text: f, exact: true}})
			}
			return out, true
		}
	}
	return nil, false
}

// gitDirs lists, in order, the directories git's own options move it to: -C DIR (each
// relative to the one before) and --work-tree DIR.
func gitDirs(global []arg) []arg {
	var dirs []arg
	for k := 0; k < len(global); k++ {
		t, _ := global[k].exact()
		switch {
		case (t == "-C" || t == "--work-tree") && k+1 < len(global):
			k++
			dirs = append(dirs, global[k])
		case strings.HasPrefix(t, "--work-tree="):
			dirs = append(dirs, arg{{text: strings.TrimPrefix(t, "--work-tree="), exact: true}})
		case t == "-c" || t == "--git-dir" || t == "--namespace" || t == "--exec-path" || t == "--config-env":
			k++
		}
	}
	return dirs
}

// inDirs runs read with the working directory moved through each of dirs in turn.
func (a *assessor) inDirs(dirs []arg, read func()) {
	if len(dirs) == 0 {
		read()
		return
	}
	a.inDir(dirs[0], func() { a.inDirs(dirs[1:], read) })
}

// gitRequireForceOff says clean.requireForce is turned off on the command line (-c) or by
// `git config` or GIT_CONFIG_KEY_n in the text, so git clean deletes without -f.
func (a *assessor) gitRequireForceOff(global []arg) bool {
	for k := 0; k+1 < len(global); k++ {
		if t, _ := global[k].exact(); t == "-c" {
			if v, _ := global[k+1].exact(); falseSetting(v) {
				return true
			}
		}
	}
	for n := 0; n < 8; n++ {
		for _, k := range a.vars["GIT_CONFIG_KEY_"+strconv.Itoa(n)] {
			for _, v := range a.vars["GIT_CONFIG_VALUE_"+strconv.Itoa(n)] {
				if falseSetting(k.text + "=" + v.text) {
					return true
				}
			}
		}
	}
	return a.requireForceOff
}

// falseSetting says a KEY=VALUE turns clean.requireForce off.
func falseSetting(kv string) bool {
	k, v, _ := strings.Cut(kv, "=")
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0":
		return strings.EqualFold(k, "clean.requireForce")
	}
	return false
}

// gitShellKeys are configuration keys whose value git runs as a shell command (lower case;
// * is one subsection name): `git -c core.pager='rm -rf ~' log` runs it.
var gitShellKeys = []string{"core.pager", "core.editor", "core.sshcommand", "core.fsmonitor",
	"core.askpass", "core.gitproxy", "sequence.editor", "diff.external", "credential.helper",
	"gpg.program", "gpg.ssh.program", "gpg.x509.program", "gpg.openpgp.program",
	"uploadpack.packobjectshook", "interactive.difffilter", "sendemail.sendmailcmd",
	"pager.*", "alias.*", "filter.*.clean", "filter.*.smudge", "filter.*.process",
	"diff.*.textconv", "diff.*.command", "merge.*.driver", "mergetool.*.cmd", "difftool.*.cmd",
	"remote.*.receivepack", "remote.*.uploadpack", "browser.*.cmd", "credential.*.helper"}

// gitConfig reads a configuration entry given as -c KEY=VALUE (value nil) or as git config
// KEY VALUE: an alias starting with ! and a command-valued key run their value in a shell
// (`git -c alias.x='!rm -rf ~' x`).
func (a *assessor) gitConfig(name string, key, value arg, depth int) {
	k, ok := key.exact()
	if !ok {
		return
	}
	v, vok := value.exact()
	if value == nil || len(value) == 0 {
		k, v, vok = strings.Cut(k, "=")
	}
	k = strings.ToLower(k)
	runs := false
	for _, pattern := range gitShellKeys {
		if m, _ := path.Match(pattern, k); m {
			runs = true
		}
	}
	if !runs || !vok {
		return
	}
	if strings.HasPrefix(k, "alias.") {
		if !strings.HasPrefix(v, "!") {
			return // an alias of git subcommands
		}
		v = v[1:]
	}
	a.text(strings.TrimPrefix(v, "!"), depth+1)
}

// gitConfigEnv reads configuration given through GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n
// assigned in the text (`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!…'
// git x`).
func (a *assessor) gitConfigEnv(name string, depth int) {
	for n := 0; n < 8; n++ {
		keys := a.vars["GIT_CONFIG_KEY_"+strconv.Itoa(n)]
		values := a.vars["GIT_CONFIG_VALUE_"+strconv.Itoa(n)]
		for _, k := range keys {
			for _, v := range values {
				a.gitConfig(name, arg{k}, arg{v}, depth)
			}
		}
	}
	for _, env := range gitShellEnv {
		for _, v := range a.vars[env] {
			a.gitConfig(name, arg{{text: "core.editor", exact: true}}, arg{v}, depth)
		}
	}
}

// gitShellEnv are the variables whose value git runs as a shell command, as it does the
// keys they stand for (`GIT_EDITOR='rm -rf ~;:' git commit`, review 25c).
var gitShellEnv = []string{"GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXTERNAL_DIFF",
	"GIT_PAGER", "GIT_ASKPASS", "SSH_ASKPASS", "EDITOR", "VISUAL", "PAGER"}

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
		"--temp-dir", "--partial-dir", "--backup-dir", "--suffix", "--chmod", "--chown", "--log-file",
		"--files-from", "--exclude-from", "--include-from")
	del := false
	for f := range flags {
		del = del || strings.HasPrefix(f, "--del")
	}
	if len(operands) < 2 {
		return
	}
	if flags["--remove-source-files"] { // the sources' files go once they are copied
		for _, g := range operands[:len(operands)-1] {
			a.destroy("rsync --remove-source-files", g, "deletes the files of")
		}
		if flags["--files-from"] { // which files, a list the gate does not read
			a.destroy("rsync --remove-source-files", arg{{unread: true}}, "deletes the files of")
		}
	}
	if del {
		a.destroy("rsync --delete", operands[len(operands)-1], "deletes what is not in the source from")
	}
	if !flags["--append"] && !flags["--ignore-existing"] && !flags["--append-verify"] {
		// rsync replaces its destination like cp: `rsync /dev/null ~/.ssh/authorized_keys`.
		a.writeOnto(name, operands[len(operands)-1], operands[:len(operands)-1], "overwrites")
	}
}

// cd: the directory becomes the base of later relative paths (`cd / && rm -rf *`). An
// unknown directory is read like any unknown value, as empty: unquoted, the word vanishes
// and cd goes home (`cd $BUILD && rm -rf *` empties home when BUILD is unset); quoted, `cd ""`
// stays where it is; "$X/out" is /out.
func (a *assessor) cd(_ string, argv []arg, _ []string, _ int) {
	back := a.oldCwd
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
	if len(g) == 1 && g[0].text == "-" {
		// cd - returns to OLDPWD: the directory before the last static cd, or, before the
		// text's own cd, one the environment brought, which the gate cannot read.
		a.cwd = back
		if back == nil {
			a.cwd = &reading{text: unknownMark, unread: true}
		}
		return
	}
	if len(g) != 1 {
		a.cwd = nil
		return
	}
	if g[0].unread && !g[0].exact {
		a.cwd = &reading{text: unknownMark, unread: true} // `cd "$(cd ..; curl …)"`
		return
	}
	if g[0].text == "" {
		return
	}
	if a.viaDescriptor(reading{text: strings.TrimSuffix(g[0].text, "/") + "/"}) {
		// `cd /dev/fd/3`: the directory the descriptor is open on, which the gate cannot read
		// (`pwd -P` prints it).
		a.cwd = &reading{text: unknownMark, unread: true}
		return
	}
	p, _, ok := a.target(reading{text: g[0].text}) // `cd ..` resolves against the directory it leaves
	a.cwd = nil
	if ok {
		a.cwd = &reading{text: p, exact: g[0].exact}
	}
}

// unknownProgram: the program's name is not known statically ($RM, $(which rm),
// rm${IFS}-rf: the shell splits it only when it runs). The gate cannot read what runs, so it
// is catastrophic (docs/risk.md); with a recursive option and a protected location it also
// names the deletion it may be.
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
	a.note(Catastrophic, "", "", "the program's name is not known statically, so the gate cannot tell what it does")
}

// crontab -r deletes the user's crontab without a copy; crontab - installs the table of
// standard input, whose commands run on the host on schedule (each line's command read after
// its five time fields or its @keyword).
func (a *assessor) crontab(name string, argv []arg, stdin []string, depth int) {
	flags, operands := opts(argv[1:], "u", "--user")
	if flags["-r"] {
		a.note(Destructive, name, "", "crontab -r deletes the crontab without a copy")
	}
	if flags["-l"] || flags["-e"] || (len(operands) > 0 && !exactIs(operands[0], "-")) {
		return // listing, editing, or a table file (not read)
	}
	var commands []string
	for _, text := range stdin {
		for _, line := range strings.Split(text, "\n") {
			fields := strings.Fields(line)
			switch {
			case len(fields) == 0 || strings.HasPrefix(fields[0], "#") || strings.Contains(fields[0], "="):
			case strings.HasPrefix(fields[0], "@") && len(fields) > 1:
				commands = append(commands, strings.Join(fields[1:], " "))
			case len(fields) > 5:
				commands = append(commands, strings.Join(fields[5:], " "))
			case strings.Contains(line, unknownMark) || text == fileInput:
				commands = append(commands, line)
			}
		}
	}
	a.runTexts(name, commands, depth)
}
