package main

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	adconfig "github.com/zuno-run/zuno/adapters/config"
)

// pathsReport is what zuno debug paths shows: where every layer is looked for, what exists
// and is read, and where the data lives. Variables are named, never their values: a URL can
// carry a password.
type pathsReport struct {
	adconfig.Paths
	Env      []envLocation `json:"env"`
	DataDir  string        `json:"dataDir"`
	DB       string        `json:"db"`
	Warnings []string      `json:"warnings"`
	Notes    []string      `json:"notes"`
	// Error is why the configuration does not load, when it does not; the paths still show.
	Error string `json:"error,omitempty"`
}

type envLocation struct {
	Layer string `json:"layer"` // always "env"
	Var   string `json:"var"`
	Key   string `json:"key"`
	Set   bool   `json:"set"`
}

func newDebugPathsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "paths [--format json|table]",
		Short: "Show where each configuration layer is read from, which are in effect, and the data paths",
		Long: `Lists every place a configuration layer is looked for, in layer order (global, project,
--config or ZUNO_CONFIG, ZUNO_* variables, managed policy), whether each exists and is in
effect, and the data directory and database. A configuration that does not load is shown
with its error (and the command exits 1); the paths are still listed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			rep, loadErr := debugPaths()
			if format == "json" {
				err = writeJSON(cmd.OutOrStdout(), rep)
			} else {
				printPaths(cmd.OutOrStdout(), rep)
			}
			if loadErr != nil {
				return loadErr
			}
			return err
		},
	}
	addFormatFlag(cmd, "table")
	return cmd
}

func debugPaths() (pathsReport, error) {
	set, err := adconfig.Load(configOptions())
	rep := pathsReport{Paths: set.Paths, Warnings: set.Warnings, Notes: []string{}}
	if rep.Warnings == nil {
		rep.Warnings = []string{}
	}
	for _, e := range adconfig.EnvKeys {
		rep.Env = append(rep.Env, envLocation{Layer: "env", Var: e.Var, Key: e.Key, Set: os.Getenv(e.Var) != ""})
	}
	cfg := config{DB: os.Getenv("ZUNO_DB")}
	if err == nil {
		cfg, err = loadConfig()
		rep.Notes = append(rep.Notes, cfg.Notes...)
	}
	if err != nil {
		rep.Error = err.Error()
	}
	if cfg.DB == "" {
		cfg.DB = defaultDB()
	}
	rep.DB, rep.DataDir = cfg.DB, dataDir(cfg)
	return rep, err
}

func printPaths(w io.Writer, r pathsReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tPATH\tEXISTS\tIN EFFECT")
	for _, l := range r.Locations {
		path := l.Path
		if l.Legacy {
			path += " (legacy)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", l.Layer, path, yesNo(l.Exists), yesNo(l.InEffect))
	}
	for _, e := range r.Env {
		fmt.Fprintf(tw, "%s\t%s → %s\t%s\t%s\n", e.Layer, e.Var, e.Key, yesNo(e.Set), yesNo(e.Set))
	}
	tw.Flush()
	root := r.ProjectRoot
	if root == "" {
		root = "(none: no .git above the working directory, so no project layer)"
	}
	fmt.Fprintf(w, "\nproject root: %s\ndata dir:     %s\ndatabase:     %s\n", root, r.DataDir, r.DB)
	for _, s := range r.Warnings {
		fmt.Fprintln(w, "warning: "+s)
	}
	for _, s := range r.Notes {
		fmt.Fprintln(w, "note: "+s)
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
