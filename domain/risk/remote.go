package risk

import "strings"

// Remote shells run their command words, joined with blanks, as shell text in the remote
// user's home directory: `ssh host 'rm -rf /'` and `ssh host rm -rf '~/*'` are read as the
// remote shell reads them. ssh's -o ProxyCommand, LocalCommand and KnownHostsCommand run
// locally, through a shell.

// sshValues are ssh's options that take a value (autossh adds -M).
const sshValues = "BbcDEeFIiJLlmOoPpQRSWwM"

func (a *assessor) ssh(name string, argv []arg, stdin []string, depth int) {
	i := 1
	for ; i < len(argv); i++ {
		t, ok := argv[i].exact()
		if !ok || !strings.HasPrefix(t, "-") {
			break
		}
		if t == "--" {
			i++
			break
		}
		for j := 1; j < len(t); j++ {
			if strings.IndexByte(sshValues, t[j]) < 0 {
				continue
			}
			v := t[j+1:]
			if v == "" && i+1 < len(argv) {
				i++
				v, _ = argv[i].exact()
			}
			if t[j] == 'o' {
				a.sshOption(v, depth)
			}
			break
		}
	}
	if i+1 >= len(argv) { // no destination, or no command: a login, whose shell reads standard input
		for _, text := range stdin {
			if text == fileInput || strings.Contains(text, unknownMark) {
				a.note(Catastrophic, name, "", name+" runs commands from standard input the gate cannot read on the remote host")
				continue
			}
			a.remote(name, []arg{{{text: text, exact: true}}}, depth)
		}
		return
	}
	a.remote(name, argv[i+1:], depth)
}

// sshOption reads -o Key=Value or -o "Key Value" when the key runs a local command.
func (a *assessor) sshOption(o string, depth int) {
	k, v, found := strings.Cut(o, "=")
	if !found {
		k, v, _ = strings.Cut(o, " ")
	}
	switch strings.ToLower(strings.TrimSpace(k)) {
	case "proxycommand", "localcommand", "knownhostscommand":
		a.text(strings.TrimSpace(v), depth+1)
	}
}

// remote reads a remote command: its words joined with blanks are shell text that starts in
// the remote home directory. A word the gate cannot read is unreadable there too.
func (a *assessor) remote(name string, words []arg, depth int) {
	var parts []string
	for _, g := range words {
		t, ok := g.exact()
		if !ok {
			t = unreadText
		}
		parts = append(parts, t)
	}
	cwd, old := a.cwd, a.oldCwd
	a.cwd = &reading{text: a.home, exact: true}
	a.text(strings.Join(parts, " "), depth+1)
	a.cwd, a.oldCwd = cwd, old
}

// mosh [options] HOST -- COMMAND…
func (a *assessor) mosh(name string, argv []arg, _ []string, depth int) {
	for i := 1; i < len(argv); i++ {
		if t, _ := argv[i].exact(); t == "--" && i+1 < len(argv) {
			a.remote(name, argv[i+1:], depth)
			return
		}
	}
}
