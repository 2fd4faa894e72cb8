// Command zuno is the Zuno agent runtime's CLI: it runs commands against the event store,
// queries the read models, and inspects and rebuilds projections.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	zapp "github.com/zuno-run/zuno/commands/app"
)

func main() { os.Exit(run()) }

// run executes the CLI and returns the process exit code: 0 ok, 1 the command failed,
// 2 the command line was wrong.
func run() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	root.SetContext(ctx)
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	if cmd == root && strings.HasPrefix(err.Error(), "unknown command ") {
		err = &zapp.UsageError{Message: err.Error()} // a wrong command line, like a wrong flag
	}
	format, _ := cmd.Flags().GetString("format")
	printError(os.Stderr, format, err)
	var usage *zapp.UsageError
	if errors.As(err, &usage) {
		return 2
	}
	return 1
}

// usagef is a wrong command line (exit status 2); cobra's own flag errors become one too.
func usagef(format string, args ...any) error {
	return &zapp.UsageError{Message: fmt.Sprintf(format, args...)}
}

// printError writes err for a person, or as {"error":{"code","message"}} for --format json.
func printError(w io.Writer, format string, err error) {
	code := zapp.CodeOf(err)
	if code == "" {
		code = "error"
	}
	if format == "json" {
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": err.Error()}})
		return
	}
	fmt.Fprintf(w, "zuno: %s\n", withCode(code, err.Error()))
}

// withCode states a typed error's code once, in front of its message, whichever layer wrote
// the message (docs/errors.md); an untyped error has no code to state.
func withCode(code, message string) string {
	if code == "error" || strings.HasPrefix(message, code+": ") {
		return message
	}
	return code + ": " + message
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "zuno",
		Short: "Zuno: an event-sourced AI coding-agent runtime",
		Long: `Zuno records every action as an immutable event and serves read models built from them.

Storage: ZUNO_DB (embedded SQLite file, the default), ZUNO_EVENTSTORE_URL (postgres://… or
esdb://…), ZUNO_READMODEL_URL (postgres://…), or the same keys (db, eventstore_url,
readmodel_url) in a trusted configuration file: ~/.config/zuno/zuno.json[c], the file
--config (or $ZUNO_CONFIG) names, or the managed policy. The repository's zuno.json[c] may
not set them: the checkout does not choose where its audit log goes.
zuno debug paths shows every place and which are in effect.

A configuration that does not load is refused by every command that acts. The commands that
only read (session list and show, db, events read, debug) warn about a project file that does
not load and go on without it; zuno config show lists what the layers set, then refuses it.

At a terminal, zuno with no arguments runs zuno chat, the interactive session.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&configFlag, "config", "", "a configuration file (JSONC) laid over the global and project files; wins over $ZUNO_CONFIG")
	addSandboxFlags(root)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &zapp.UsageError{Message: err.Error()} })
	root.AddCommand(newDBCmd(), newProjectionsCmd(), newEventsCmd(), newSessionCmd(),
		newPlanCmd(), newTodoCmd(), newTaskContextCmd(), newJobCmd(), newDemoCmd(), newWorkerCmd(), newRunCmd(), newDebugCmd(), newModelsCmd(), newAuthCmd(), newVersionCmd(), newConfigCmd(), newVerifyCmd(), newAnchorCmd(), newReplayCmd(), newServeCmd())
	root.AddCommand(newQuestionCmd())
	root.Version = versionText()
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(newGoalCmd())
	root.AddCommand(newAuditCmd())
	root.AddCommand(newACPCmd())
	root.AddCommand(newMemoryCmd())
	root.AddCommand(newChatCmd())
	root.RunE = bareRun
	usageArgs(root)
	return root
}

// usageArgs makes a wrong number of arguments a usage error (exit status 2, code "usage"), as
// cobra's flag errors already are, on every command under c.
func usageArgs(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				var u *zapp.UsageError
				if errors.As(err, &u) {
					return err
				}
				return &zapp.UsageError{Message: err.Error() + " (see zuno " + cmd.Name() + " --help)"}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		usageArgs(sub)
	}
}

// withApp opens the runtime for one command and closes it afterwards.
func withApp(cmd *cobra.Command, fn func(ctx context.Context, a *app) error) error {
	ctx := cmd.Context()
	a, err := openApp(ctx)
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(ctx, a)
}

func addFormatFlag(cmd *cobra.Command, def string) {
	cmd.Flags().String("format", def, "output format: json or table")
}

func getFormat(cmd *cobra.Command) (string, error) {
	f, _ := cmd.Flags().GetString("format")
	if f != "json" && f != "table" {
		return "", usagef("--format %q: use json or table", f)
	}
	return f, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
