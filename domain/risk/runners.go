package risk

import "strings"

// Programs that run what they are given as shell text, or as code in a language the gate does
// not read (docs/risk.md, "Programs that run commands"; review 25c): a debugger's shell
// command, a terminal multiplexer's or emulator's command, a scheduler fed on standard input,
// a remote shell fed on standard input, and code for R, Julia, Emacs Lisp, Scheme, Erlang,
// Groovy, PowerShell and AppleScript.

// runners are the table's entries for these programs (init in programs.go adds them).
var runners = []struct {
	rule  rule
	names []string
}{
	{(*assessor).gdb, []string{"gdb", "gdb-multiarch"}},
	{(*assessor).makeFromStdin, []string{"make", "gmake"}},
	{(*assessor).tmux, []string{"tmux"}},
	{(*assessor).screen, []string{"screen"}},
	{(*assessor).scheduler, []string{"at", "batch"}},
	{(*assessor).terminal, []string{"xterm", "uxterm", "urxvt", "gnome-terminal", "konsole", "kitty", "alacritty", "terminator", "xfce4-terminal"}},
	{(*assessor).downloadTo, []string{"curl", "wget"}},
	{(*assessor).patchFile, []string{"patch"}},
	{(*assessor).edFile, []string{"ed", "red"}},
	{(*assessor).unzipTo, []string{"unzip"}},
	{(*assessor).foreignCode, []string{"Rscript", "R", "julia", "emacs", "guile", "racket", "erl", "groovy", "pwsh", "powershell", "osascript"}},
}

// gdb -ex 'shell CMD' (also !CMD) runs CMD in a shell; python and pipe run what the gate does
// not read.
func (a *assessor) gdb(name string, argv []arg, _ []string, depth int) {
	for i := 1; i < len(argv); i++ {
		t, _ := argv[i].exact()
		var cmd string
		switch {
		case (t == "-ex" || t == "--ex" || t == "-eval-command" || t == "--eval-command") && i+1 < len(argv):
			i++
			c, ok := argv[i].exact()
			if !ok {
				a.note(Catastrophic, name, "", name+" runs a debugger command the gate cannot read")
				continue
			}
			cmd = c
		case strings.HasPrefix(t, "--eval-command=") || strings.HasPrefix(t, "-eval-command="):
			_, cmd, _ = strings.Cut(t, "=")
		default:
			continue
		}
		cmd = strings.TrimSpace(cmd)
		switch {
		case strings.HasPrefix(cmd, "shell "), strings.HasPrefix(cmd, "!"):
			a.text(strings.TrimPrefix(strings.TrimPrefix(cmd, "shell "), "!"), depth+1)
		case strings.HasPrefix(cmd, "python"), strings.HasPrefix(cmd, "pi "), strings.HasPrefix(cmd, "pipe"), strings.HasPrefix(cmd, "|"):
			a.note(Catastrophic, name, "", name+" runs code or a shell pipe the gate does not read ("+cmd+")")
		}
	}
}

// make -f - reads its makefile, whose recipes are shell commands, from standard input;
// --eval adds makefile text.
func (a *assessor) makeFromStdin(name string, argv []arg, stdin []string, _ int) {
	for i := 1; i < len(argv); i++ {
		t, _ := argv[i].exact()
		stdinFile := (t == "-f" || t == "--file" || t == "--makefile") && i+1 < len(argv) && exactIs(argv[i+1], "-")
		if stdinFile || t == "-f-" || t == "--file=-" || t == "--makefile=-" {
			if len(stdin) > 0 {
				a.note(Catastrophic, name, "", name+" runs the recipes of a makefile read from standard input, which the gate does not read as make")
			}
		}
		if strings.HasPrefix(t, "--eval") {
			a.note(Catastrophic, name, "", name+" --eval adds makefile text the gate does not read")
		}
	}
}

func exactIs(g arg, s string) bool {
	t, ok := g.exact()
	return ok && t == s
}

// tmuxValues are tmux options that take a value, global and of the commands that start one.
const tmuxValues = "cefFnstxylNwhST"

// tmux runs a shell command given to new-session, new-window, split-window, respawn-*,
// run-shell and display-popup, and types send-keys into a shell.
func (a *assessor) tmux(name string, argv []arg, _ []string, depth int) {
	i := 1
	for ; i < len(argv); i++ { // global options
		t, ok := argv[i].exact()
		if !ok || !strings.HasPrefix(t, "-") {
			break
		}
		if len(t) == 2 && strings.IndexByte("LSfTc", t[1]) >= 0 {
			i++
		}
	}
	if i >= len(argv) {
		return
	}
	sub, _ := argv[i].exact()
	switch sub {
	case "new", "new-session", "neww", "new-window", "splitw", "split-window", "respawnp", "respawn-pane",
		"respawnw", "respawn-window", "run", "run-shell", "popup", "display-popup":
	case "send", "send-keys":
	default:
		return
	}
	var words []string
	j := i + 1
	for ; j < len(argv); j++ {
		t, ok := argv[j].exact()
		if !ok || !strings.HasPrefix(t, "-") || t == "-" {
			break
		}
		if t == "--" {
			j++
			break
		}
		if len(t) == 2 && strings.IndexByte(tmuxValues, t[1]) >= 0 {
			j++
		}
	}
	for ; j < len(argv); j++ {
		t, ok := argv[j].exact()
		if !ok {
			t = unreadText
		}
		if sub == "send" || sub == "send-keys" {
			switch t {
			case "Enter", "C-m", "KPEnter", "C-j":
				t = ";"
			}
		}
		words = append(words, t)
	}
	if len(words) > 0 {
		a.text(strings.Join(words, " "), depth+1)
	}
}

// screen -X stuff TEXT types TEXT into a window's shell; screen [options] CMD ARGS runs CMD.
func (a *assessor) screen(name string, argv []arg, stdin []string, depth int) {
	for i := 1; i < len(argv); i++ {
		t, ok := argv[i].exact()
		if !ok {
			return
		}
		switch {
		case t == "-X" && i+2 < len(argv) && exactIs(argv[i+1], "stuff"):
			if s, ok := argv[i+2].exact(); ok {
				a.text(strings.ReplaceAll(s, `\n`, "\n"), depth+1)
			} else {
				a.note(Catastrophic, name, "", name+" types text the gate cannot read into a shell")
			}
			return
		case t == "-S" || t == "-c" || t == "-p" || t == "-T" || t == "-e" || t == "-h" || t == "-s" || t == "-t":
			i++
		case strings.HasPrefix(t, "-"):
		default:
			a.command(argv[i:], stdin, depth+1)
			return
		}
	}
}

// at and batch run the commands of standard input (or of -f FILE, not read) later.
func (a *assessor) scheduler(name string, argv []arg, stdin []string, depth int) {
	for _, g := range argv[1:] {
		if t, _ := g.exact(); t == "-f" || t == "-l" || t == "-r" || t == "-d" || t == "-c" {
			return
		}
	}
	a.runTexts(name, stdin, depth)
}

// A terminal emulator runs -e COMMAND ARGS (or what follows --).
func (a *assessor) terminal(name string, argv []arg, stdin []string, depth int) {
	for i := 1; i < len(argv); i++ {
		t, _ := argv[i].exact()
		if (t == "-e" || t == "-x" || t == "--" || t == "--command" || t == "-c") && i+1 < len(argv) {
			if t == "--command" || t == "-c" { // one string of shell text
				if s, ok := argv[i+1].exact(); ok {
					a.text(s, depth+1)
					return
				}
			}
			a.command(argv[i+1:], stdin, depth+1)
			return
		}
	}
}

// foreignCodeOptions are the options by which these programs take code on the command line.
var foreignCodeOptions = map[string]bool{"-e": true, "--expr": true, "-E": true, "--eval": true, "-eval": true, "-c": true,
	"-Command": true, "-command": true, "--command": true, "-x": true}

// foreignCode: code given on the command line to an interpreter of a language the gate does
// not read runs what the gate cannot see.
func (a *assessor) foreignCode(name string, argv []arg, _ []string, _ int) {
	for _, g := range argv[1:] {
		t, _ := g.exact()
		if foreignCodeOptions[t] || strings.HasPrefix(t, "--eval=") || strings.HasPrefix(t, "--expr=") {
			a.note(Catastrophic, name, "", name+" runs code in a language the gate does not read; refused in every permission mode — write the code to a file in the workspace and run that")
			return
		}
	}
}

// unzipTo: unzip ARCHIVE -d DIR extracts names the gate does not read; into the home
// directory they may replace its startup files.
func (a *assessor) unzipTo(name string, argv []arg, _ []string, _ int) {
	for i := 1; i+1 < len(argv); i++ {
		if exactIs(argv[i], "-d") {
			a.extractInto(name, argv[i+1])
		}
	}
}

// extractInto refuses an archive extracted into a home directory as a whole.
func (a *assessor) extractInto(name string, dir arg) {
	for _, r := range dir {
		if p, _, ok := a.target(r); ok && a.classify(p) == home {
			a.note(Catastrophic, name, p, name+" extracts an archive the gate does not read into the home directory "+a.display(p)+", which may replace its startup files or credentials; refused in every permission mode — extract it elsewhere")
		}
	}
}
