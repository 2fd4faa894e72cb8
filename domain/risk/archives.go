package risk

import "strings"

// Archivers that delete what they archive: tar --remove-files, zip -m (--move), 7z -sdel.
// Each deleted operand is graded like an rm operand (docs/risk.md, "The destructive command
// table"); tar's -C DIR places the operands after it.

// tarValues are tar's short options that take a value, and its long ones.
const tarValues = "bCfFgHIKLNTVX"

var tarLongValues = []string{"--file", "--directory", "--files-from", "--exclude-from", "--exclude",
	"--transform", "--xform", "--owner", "--group", "--mode", "--mtime", "--newer", "--after-date",
	"--newer-mtime", "--listed-incremental", "--use-compress-program", "--format", "--label",
	"--blocking-factor", "--record-size", "--tape-length", "--info-script", "--new-volume-script",
	"--volno-file", "--rsh-command", "--rmt-command", "--suffix", "--checkpoint-action",
	"--exclude-tag", "--exclude-tag-all", "--exclude-tag-under", "--strip-components", "--sort",
	"--starting-file", "--to-command", "--owner-map", "--group-map", "--xattrs-include",
	"--xattrs-exclude", "--warning", "--quoting-style", "--index-file", "--pax-option", "--level"}

// tarItem is one of tar's arguments after its options are told apart: an option with its
// value, or an operand (opt "").
type tarItem struct {
	opt   string
	value arg
}

// tarItems reads tar's arguments: the traditional first cluster without a dash (tar cf x.tar
// dir, whose value letters take the following arguments in order), short clusters, long
// options with = or a separate value, and operands.
func tarItems(args []arg) []tarItem {
	var items []tarItem
	if len(args) > 0 {
		if t, ok := args[0].exact(); ok && t != "" && !strings.HasPrefix(t, "-") {
			args = args[1:]
			for _, c := range t {
				it := tarItem{opt: "-" + string(c)}
				if strings.ContainsRune(tarValues, c) && len(args) > 0 {
					it.value, args = args[0], args[1:]
				}
				items = append(items, it)
			}
		}
	}
	for i := 0; i < len(args); i++ {
		t, ok := args[i].exact()
		switch {
		case !ok || !strings.HasPrefix(t, "-") || t == "-":
			items = append(items, tarItem{value: args[i]})
		case t == "--":
			for _, g := range args[i+1:] {
				items = append(items, tarItem{value: g})
			}
			return items
		case strings.HasPrefix(t, "--"):
			name, v, attached := strings.Cut(t, "=")
			it := tarItem{opt: name}
			if attached {
				it.value = arg{{text: v, exact: true}}
			} else if contains(tarLongValues, name) && i+1 < len(args) {
				i++
				it.value = args[i]
			}
			items = append(items, it)
		default:
			for j := 1; j < len(t); j++ {
				it := tarItem{opt: "-" + t[j:j+1]}
				if strings.IndexByte(tarValues, t[j]) >= 0 {
					if j+1 < len(t) {
						it.value = arg{{text: t[j+1:], exact: true}}
					} else if i+1 < len(args) {
						i++
						it.value = args[i]
					}
					items = append(items, it)
					break
				}
				items = append(items, it)
			}
		}
	}
	return items
}

// tar: --remove-files deletes each file once it is archived; --to-command, -I and
// --checkpoint-action=exec= run commands.
func (a *assessor) tar(name string, argv []arg, stdin []string, depth int) {
	items := tarItems(argv[1:])
	removes := false
	for _, it := range items {
		// GNU tar takes any unambiguous prefix of a long option (--remove for --remove-files).
		removes = removes || (len(it.opt) >= 5 && strings.HasPrefix("--remove-files", it.opt))
		t, _ := it.value.exact()
		switch {
		case it.opt == "--to-command" || it.opt == "-I" || it.opt == "--use-compress-program":
			a.nested(it.value, depth, name+" "+it.opt)
		case it.opt == "--checkpoint-action" && strings.HasPrefix(t, "exec="):
			a.text(strings.TrimPrefix(t, "exec="), depth+1)
		}
	}
	extracts, into := false, arg(nil)
	for _, it := range items {
		extracts = extracts || it.opt == "-x" || it.opt == "--extract" || it.opt == "--get"
		if it.opt == "-C" || it.opt == "--directory" {
			into = it.value
		}
	}
	if extracts && into != nil {
		a.extractInto(name, into)
	}
	if !removes {
		return
	}
	dir := arg(nil)
	for _, it := range items {
		switch {
		case it.opt == "-C" || it.opt == "--directory":
			dir = it.value
		case it.opt == "-T" || it.opt == "--files-from":
			// names from a file, or from standard input with -T -
			a.destroy(name+" --remove-files", a.namesFrom(it.value, stdin), "deletes")
		case it.opt == "":
			a.destroy(name+" --remove-files", inDir(dir, it.value), "deletes")
		}
	}
}

// namesFrom is the names a -T FILE list gives: what is statically piped in for "-", else
// unreadable.
func (a *assessor) namesFrom(file arg, stdin []string) arg {
	if t, _ := file.exact(); t == "-" {
		var out arg
		for _, s := range stdin {
			if unreadInput(s) {
				return arg{{unread: true}} // `zip -m -@ x.zip < list`
			}
			for _, f := range strings.Fields(s) {
				out = append(out, printed(f))
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return arg{{unread: true}}
}

// inDir places a relative operand under dir (tar -C DIR, 7z -w): each reading of both.
func inDir(dir, g arg) arg {
	if dir == nil {
		return g
	}
	var out arg
	for _, r := range g {
		if strings.HasPrefix(r.text, "/") {
			out = append(out, r)
			continue
		}
		for _, d := range dir {
			out = append(out, reading{text: strings.TrimSuffix(d.text, "/") + "/" + r.text,
				exact: r.exact && d.exact, glob: r.glob, unread: r.unread || d.unread})
		}
	}
	return out
}

// zip [options] ARCHIVE FILE…: -m (--move) deletes each FILE once it is in the archive;
// -TT (--unzip-command) runs a command to test the archive.
func (a *assessor) zip(name string, argv []arg, stdin []string, depth int) {
	moves, fromStdin := false, false
	var operands []arg
	for i := 1; i < len(argv); i++ {
		t, ok := argv[i].exact()
		switch {
		case !ok || !strings.HasPrefix(t, "-") || t == "-":
			operands = append(operands, argv[i])
		case t == "--":
			operands = append(operands, argv[i+1:]...)
			i = len(argv)
		case t == "-TT" || t == "--unzip-command":
			if i+1 < len(argv) {
				i++
				a.nested(argv[i], depth, name+" -TT")
			}
		case t == "--move":
			moves = true
		case t == "-x" || t == "-i" || t == "--exclude" || t == "--include":
			for i+1 < len(argv) { // patterns up to the next option
				if n, _ := argv[i+1].exact(); strings.HasPrefix(n, "-") {
					break
				}
				i++
			}
		case strings.HasPrefix(t, "--"):
			if contains([]string{"--output-file", "--temp-path", "--suffixes", "--password", "--compression-method", "--split-size", "--from-date", "--before-date", "--archive-comment"}, t) {
				i++
			}
		default:
			for j := 1; j < len(t); j++ {
				moves = moves || t[j] == 'm'
				fromStdin = fromStdin || t[j] == '@' // -@: the names come from standard input
				if strings.IndexByte("bnPZstO", t[j]) >= 0 {
					if j == len(t)-1 {
						i++
					}
					break
				}
			}
		}
	}
	if moves && fromStdin {
		a.destroy(name+" -m", a.namesFrom(arg{{text: "-", exact: true}}, stdin), "deletes")
	}
	if !moves || len(operands) < 2 {
		return
	}
	for _, g := range operands[1:] {
		a.destroy(name+" -m", g, "deletes")
	}
}

// sevenZip: 7z COMMAND [-SWITCH…] ARCHIVE [FILE…] with -sdel deletes the files once they are
// in the archive; without FILE it takes everything in the working directory. Switches are
// attached (-w DIR is -wDIR) and may come anywhere until --.
func (a *assessor) sevenZip(name string, argv []arg, stdin []string, depth int) {
	sdel := false
	var operands []arg
	for i := 1; i < len(argv); i++ {
		t, ok := argv[i].exact()
		switch {
		case ok && t == "--":
			operands = append(operands, argv[i+1:]...)
			i = len(argv)
		case ok && strings.HasPrefix(t, "-") && len(t) > 1:
			sdel = sdel || strings.EqualFold(t, "-sdel")
		default:
			operands = append(operands, argv[i])
		}
	}
	if !sdel || len(operands) < 2 { // the command and the archive
		return
	}
	files := operands[2:]
	if len(files) == 0 {
		files = []arg{{{text: ".", exact: true}}}
	}
	for _, g := range files {
		for _, r := range g {
			if strings.HasPrefix(r.text, "@") { // a list file
				r = reading{unread: true}
			}
			a.destroy(name+" -sdel", arg{r}, "deletes")
		}
	}
}
