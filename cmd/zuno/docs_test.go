package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The CLI reference, docs/cli.md, is generated from the cobra command tree that newRootCmd
// builds, so it cannot drift from the commands: TestDocs fails when the committed page differs
// from what the tree says, and -update rewrites it.

var update = flag.Bool("update", false, "rewrite the generated docs page (docs/cli.md) and the receipt vectors (docs/formats/vectors/receipts)")

const cliDocPath = "../../docs/cli.md"

func TestDocs(t *testing.T) {
	checkGenerated(t, cliDocPath, renderCLIDoc(newRootCmd()), "go test ./cmd/zuno -run TestDocs -update")
}

// checkGenerated compares a generated page with the committed file, or writes it with -update.
func checkGenerated(t *testing.T, path string, got []byte, regenerate string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%s: %v; generate it with: %s", path, err, regenerate)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("%s is out of date (first difference at line %d); regenerate it with: %s",
			path, firstDiffLine(want, got), regenerate)
	}
}

func firstDiffLine(a, b []byte) int {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

// docCommands returns the documented commands in tree order (depth first, cobra's order of
// subcommands), without cobra's own help and completion commands and hidden ones.
func docCommands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		if sub.Name() == "help" || sub.Name() == "completion" || sub.Hidden || sub.Deprecated != "" {
			continue
		}
		out = append(out, docCommands(sub)...)
	}
	return out
}

func renderCLIDoc(root *cobra.Command) []byte {
	var b bytes.Buffer
	b.WriteString("# CLI reference\n\n")
	b.WriteString("<!-- Generated from the cobra commands of cmd/zuno; do not edit. " +
		"Regenerate: go test ./cmd/zuno -run TestDocs -update -->\n\n")
	b.WriteString("Every `zuno` command and subcommand with its flags, in command-tree order. " +
		"Exit status: 0 done, 1 the command was refused or failed, 2 the command line was wrong. " +
		"An error is printed on stderr as `zuno: <code>: <message>; <fix>`, its code stated once; " +
		"with `--format json`, errors are printed on stderr as `{\"error\":{\"code\":…,\"message\":…}}`; " +
		"the codes are listed in [errors.md](errors.md).\n\n")
	cmds := docCommands(root)
	for _, c := range cmds {
		depth := strings.Count(c.CommandPath(), " ")
		fmt.Fprintf(&b, "%s- [%s](#%s)\n", strings.Repeat("  ", depth), c.CommandPath(), anchor(c.CommandPath()))
	}
	b.WriteString("\n")
	for _, c := range cmds {
		renderCommand(&b, c)
	}
	return append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
}

func renderCommand(b *bytes.Buffer, c *cobra.Command) {
	fmt.Fprintf(b, "## %s\n\n", c.CommandPath())
	use := c.Use
	if c.HasParent() {
		use = c.Parent().CommandPath() + " " + c.Use
	}
	fmt.Fprintf(b, "```\n%s\n```\n\n", use)
	if c.Short != "" {
		fmt.Fprintf(b, "%s\n\n", mdEscape(c.Short))
	}
	if long := strings.TrimSpace(c.Long); long != "" {
		fmt.Fprintf(b, "```text\n%s\n```\n\n", long)
	}
	if len(c.Aliases) > 0 {
		fmt.Fprintf(b, "Aliases: %s\n\n", mdCode(strings.Join(c.Aliases, ", ")))
	}
	if ex := strings.TrimSpace(c.Example); ex != "" {
		fmt.Fprintf(b, "Examples:\n\n```sh\n%s\n```\n\n", ex)
	}
	var subs []string
	for _, sub := range c.Commands() {
		if sub.Name() == "help" || sub.Name() == "completion" || sub.Hidden || sub.Deprecated != "" {
			continue
		}
		subs = append(subs, fmt.Sprintf("[%s](#%s)", sub.Name(), anchor(sub.CommandPath())))
	}
	if len(subs) > 0 {
		fmt.Fprintf(b, "Subcommands: %s\n\n", strings.Join(subs, ", "))
	}
	renderFlags(b, "Flags", c.LocalFlags())
	renderFlags(b, "Inherited flags", c.InheritedFlags())
}

func renderFlags(b *bytes.Buffer, title string, fs *pflag.FlagSet) {
	var rows []string
	fs.VisitAll(func(f *pflag.Flag) { // VisitAll visits in name order
		if f.Name == "help" || f.Hidden || f.Deprecated != "" {
			return
		}
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand + ", " + name
		}
		def := "—"
		if f.DefValue != "" {
			def = mdCode(f.DefValue)
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s |", mdCode(name), f.Value.Type(), def, mdEscape(f.Usage)))
	})
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n\n| flag | type | default | usage |\n|---|---|---|---|\n%s\n\n", title, strings.Join(rows, "\n"))
}

// anchor is the heading id GitHub derives from a command path: lower case, spaces to dashes.
func anchor(path string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(path) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdEscape makes text safe in a paragraph or a table cell.
var mdEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`,
	"<", "&lt;", ">", "&gt;", "|", `\|`, "\n", " ")

func mdEscape(s string) string { return mdEscaper.Replace(s) }

// mdCode renders s as inline code; a pipe is escaped so the cell survives in a table.
func mdCode(s string) string { return "`" + strings.ReplaceAll(s, "|", `\|`) + "`" }
