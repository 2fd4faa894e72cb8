package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// versionText names this build: the module version, the commit it was built from (and whether
// the tree had changes), and the Go toolchain, as the Go linker recorded them.
func versionText() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "zuno (no build information)"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	parts := []string{"zuno " + info.Main.Version}
	if rev := settings["vcs.revision"]; rev != "" {
		commit := "commit " + rev
		if settings["vcs.modified"] == "true" {
			commit += " (modified)"
		}
		if t := settings["vcs.time"]; t != "" {
			commit += " of " + t
		}
		parts = append(parts, commit)
	}
	parts = append(parts, info.GoVersion, settings["GOOS"]+"/"+settings["GOARCH"])
	if settings["-race"] == "true" {
		parts = append(parts, "race detector")
	}
	return strings.Join(parts, ", ")
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go toolchain of this build",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), versionText())
			return err
		},
	}
}
