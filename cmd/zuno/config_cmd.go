package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	adconfig "github.com/zuno-run/zuno/adapters/config"
)

// zuno config: discover the configuration (issue 12 item 16). show reads the same layers every
// command reads (docs/config.md); init writes a starter file that loads.

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show the merged configuration and where each key came from, or write a starter file",
	}
	cmd.AddCommand(newConfigShowCmd(), newConfigInitCmd())
	return cmd
}

// configEntry is one key set by some layer: its merged value and the layer that won.
type configEntry struct {
	Key    string          `json:"key"`
	Value  json.RawMessage `json:"value"`
	Layer  string          `json:"layer"`
	Source string          `json:"source"`
}

func newConfigShowCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show [--format json|table]",
		Short: "Show every configured key, its merged value, and the layer and file (or variable, or flag) it came from",
		Long: `Prints each key a layer sets (global file, project file, --config or ZUNO_CONFIG, ZUNO_*
variables, flags, managed policy), with the value that wins and where it came from. Values
of keys whose name says key, token, secret or password, and the password of a URL, are
masked. Keys no layer sets keep their built-in defaults and are not listed; zuno config init
writes a file that names them. The configuration is then checked as every command checks it:
one they refuse (an unknown key, a bad value, a rule the project may not write) is refused
here too, after the table, with the same error and exit status 1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			// Checked as every command checks it (loadConfigFrom): what the layers set is
			// shown, and a configuration the other commands refuse is refused here too, with
			// the same error, after it (docs/config.md, "zuno config show").
			cfg, invalid := loadConfigFrom(configOptions())
			if cfg.Layers == nil {
				return invalid
			}
			entries := configEntries(cfg.Layers)
			if format == "json" {
				if err := writeJSON(cmd.OutOrStdout(), entries); err != nil {
					return err
				}
			} else {
				printConfigEntries(cmd.OutOrStdout(), entries)
			}
			return invalid
		},
	}
	addFormatFlag(cmd, "table")
	return cmd
}

// configEntries walks the merged configuration to its leaves (arrays are one value) and finds,
// for each, the last layer that set it: the one that won (docs/config.md, later layers win).
func configEntries(set *adconfig.Set) []configEntry {
	var out []configEntry
	var walk func(path []string, n adconfig.Node)
	walk = func(path []string, n adconfig.Node) {
		if n.IsObject() && (len(n.Members) > 0 || len(path) == 0) {
			for _, m := range n.Members {
				walk(append(path[:len(path):len(path)], m.Key), m.Value)
			}
			return
		}
		b, _ := n.MarshalJSON()
		e := configEntry{Key: strings.Join(path, "."), Value: json.RawMessage(maskValue(path[len(path)-1], string(b)))}
		e.Layer, e.Source = winningLayer(set, path)
		out = append(out, e)
	}
	walk(nil, set.Merged())
	return out
}

func winningLayer(set *adconfig.Set, path []string) (layer, source string) {
	for _, d := range set.Docs {
		if nodeHas(d.Node, path) {
			layer, source = string(d.Layer), d.Source
			if narrow := valueSource(layer, strings.Join(path, ".")); narrow != "" {
				source = narrow
			}
		}
	}
	return layer, source
}

func nodeHas(n adconfig.Node, path []string) bool {
	for _, k := range path {
		var ok bool
		if n, ok = n.Get(k); !ok {
			return false
		}
	}
	return true
}

// valueSource names the variable or flag behind a key of the env or CLI layer, whose Source
// lists all of them.
func valueSource(layer, key string) string {
	switch layer {
	case "env":
		for _, e := range adconfig.EnvKeys {
			if e.Key == key {
				return e.Var
			}
		}
	case "cli":
		for _, s := range cliSettings {
			if s.Key == key {
				return s.Flag
			}
		}
	}
	return ""
}

const masked = "****"

// maskValue hides secrets from a screen or a pasted bug report: the value of a key named like
// a credential, and the password of a URL (a *_url key such as eventstore_url may carry one).
func maskValue(key, value string) string {
	k := strings.ToLower(key)
	for _, w := range []string{"key", "token", "secret", "password", "authorization"} {
		if strings.Contains(k, w) {
			return `"` + masked + `"`
		}
	}
	if !strings.HasSuffix(k, "url") || !strings.HasPrefix(value, `"`) {
		return value
	}
	u, err := url.Parse(strings.Trim(value, `"`))
	if err != nil || u.User == nil {
		return value
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx") // letters: userinfo escapes '*'
	}
	return `"` + u.String() + `"`
}

func printConfigEntries(w io.Writer, entries []configEntry) {
	if len(entries) == 0 {
		fmt.Fprintln(w, "no layer sets any key: every setting has its built-in default (zuno config init writes a starter file)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tLAYER\tSOURCE")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Key, e.Value, e.Layer, e.Source)
	}
	tw.Flush()
}

func newConfigInitCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "init [--global | --project] [--force]",
		Short: "Write a commented starter zuno.jsonc to the repository root (default) or the global config directory",
		Long: `Writes zuno.jsonc with the main keys (permission with example rules, sandbox,
concurrency; in the global file also model, which only a trusted layer may set, and
tool_output, which the project layer may only lower), their defaults and a comment each: to the repository root with --project (the
default; the current directory outside a repository), or to the global configuration
directory with --global. An existing file is kept unless --force.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			global, _ := cmd.Flags().GetBool("global")
			project, _ := cmd.Flags().GetBool("project")
			force, _ := cmd.Flags().GetBool("force")
			if global && project {
				return usagef("--global and --project name different files: give one")
			}
			path, err := initPath(global)
			if err != nil {
				return err
			}
			if err := writeStarter(path, starter(global), force); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s; zuno config show lists what is in effect\n", path)
			return nil
		},
	}
	cmd.Flags().Bool("global", false, "write to the global configuration directory ($XDG_CONFIG_HOME/zuno or ~/.config/zuno)")
	cmd.Flags().Bool("project", false, "write to the repository root (the default)")
	cmd.Flags().Bool("force", false, "replace an existing zuno.jsonc")
	return cmd
}

func initPath(global bool) (string, error) {
	if global {
		dir := adconfig.GlobalDir(os.Getenv)
		if dir == "" {
			return "", usagef("no global configuration directory: set HOME or XDG_CONFIG_HOME")
		}
		return filepath.Join(dir, "zuno.jsonc"), nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	if root := adconfig.ProjectRoot(cwd); root != "" {
		cwd = root
	}
	return filepath.Join(cwd, "zuno.jsonc"), nil
}

// configExistsError refuses to replace a file the user may have edited.
type configExistsError struct{ path string }

func (e *configExistsError) Error() string {
	return e.path + " exists: keep it, or pass --force to replace it with the starter"
}
func (e *configExistsError) Code() string { return "config_exists" }

func writeStarter(path, content string, force bool) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return &configExistsError{path}
	}
	if err != nil {
		return err
	}
	if _, err := io.WriteString(f, content); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// starter is the file config init writes; TestScripts/config_init loads both. The project
// starter holds only keys the project layer may set, so it loads where it is written; the
// model and the output limits are trusted-layer keys (docs/config.md, "Trust") and appear in
// the global starter only.
func starter(global bool) string {
	if global {
		return starterHead + starterModel + starterBody + starterToolOutput + starterTail
	}
	return starterHead + starterBody + starterTail
}

const starterHead = `// Zuno configuration (JSONC: comments and trailing commas allowed). Later layers win key by
// key: global, project, --config or ZUNO_CONFIG, ZUNO_* variables, flags, managed policy.
// zuno config show lists what is in effect and where each key came from.
{
`

const starterModel = `  // The model zuno run uses without --model: openai/<model>, anthropic/<model> or
  // scripted:<file>. No default: uncomment it, or give --model or set ZUNO_MODEL.
  // "model": "anthropic/claude-sonnet-4-5",

`

const starterBody = `  // Who allows a tool call: mode standard (the default), strict or allow_all; rules map a
  // permission to allow, ask or deny. Order is policy: the last matching rule wins, so "*"
  // comes first. A project file may not set allow_all, nor relax a global strict.
  "permission": {
    // "mode": "standard",
    "rules": {
      "read": "allow",
      "edit": "ask",
      "shell": { "*": "ask", "git *": "allow", "git push*": "deny", "rm -rf*": "deny" },
    },
  },

  // What a shell command can physically do: read-only, workspace-write or
  // danger-full-access (docs/sandbox.md has network, backend, writableRoots and more).
  "sandbox": {
    "mode": "workspace-write",
  },

  // How many tool calls of one step run at once; 0 is the built-in default.
  "concurrency": {
    "tool_calls": 0,
  },
`

const starterToolOutput = `
  // Tool output over either cap is withheld from the model and saved whole as an artifact;
  // a shell command whose output passes max_artifact_bytes on disk is stopped, and a
  // session's saved output is bounded by max_session_artifact_bytes. Each has a ceiling no
  // layer lifts, and a project file may only lower them (docs/config.md, "Bounds").
  "tool_output": {
    "max_bytes": 51200,
    "max_lines": 2000,
    "max_artifact_bytes": 1073741824,
    "max_session_artifact_bytes": 4294967296,
  },
`

const starterTail = `}
`
