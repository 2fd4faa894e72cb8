package main

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// demodata is the demo's scratch project (a shell helper with a truncating division and its
// failing test) and the scripted model turns that fix it.
//
//go:embed demodata
var demodata embed.FS

// demoPrompt is what the demo asks the agent.
const demoPrompt = "divide 7 2 prints 3 in calc.sh; it should print 3.50. Fix it and run the tests."

func newDemoCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "demo [--dir D]",
		Short: "Run a scripted agent session in a scratch workspace (no server, no API key)",
		Long: `Copies a small project with a failing test into D/workspace and runs the build agent on it
with the scripted provider: it reproduces the failure, greps, reads, patches the file and
runs the test again, every step recorded as events. Then it prints how to inspect the
session: the prompt receipts, the tool parts, the evidence SQL.

The session is recorded in a database of the demo's own, D/zuno.db, never the configured
one (ZUNO_DB, ZUNO_EVENTSTORE_URL, the configuration files), unless --use-configured-db.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, _ := cmd.Flags().GetString("dir")
			if dir == "" {
				var err error
				if dir, err = os.MkdirTemp("", "zuno-demo-"); err != nil {
					return err
				}
			}
			ws := filepath.Join(dir, "workspace")
			if _, err := os.Stat(ws); err == nil {
				return usagef("%s exists: remove it or give another --dir; the demo needs a fresh copy of its project", ws)
			}
			if err := copyDemo(ws); err != nil {
				return err
			}
			script := filepath.Join(dir, "session.json")
			b, err := demodata.ReadFile("demodata/session.json")
			if err != nil {
				return err
			}
			if err := os.WriteFile(script, b, 0o644); err != nil {
				return err
			}
			env := demoDatabase(cmd, dir)
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Workspace: %s\nPrompt:    %s\n\n", ws, demoPrompt)
			var sessionID string
			err = withApp(cmd, func(ctx context.Context, a *app) error {
				fmt.Fprintf(out, "Event store: %s\n\n", a.describeStorage())
				sessionID, err = runTurn(ctx, out, a, runOptions{Format: "text", Prompt: demoPrompt,
					Model: "scripted:" + script, Agent: "build", Title: "demo: fix divide", Dir: ws, Stderr: cmd.ErrOrStderr()})
				return err
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, `
Inspect the session (%[3]s):
  zuno debug prompt --session %[1]s            # the last prompt, re-verified byte for byte
  zuno debug prompt --session %[1]s --step 1   # the first one
  zuno db "SELECT json_extract(data, '$.tool') AS tool, COUNT(*) AS calls FROM part WHERE session_id = '%[1]s' AND json_extract(data, '$.type') = 'tool' GROUP BY tool ORDER BY tool"
  zuno db "SELECT COUNT(*) AS provider_calls FROM event WHERE aggregate_id = '%[1]s' AND type = 'session.provider.request.1' AND json_extract(data, '$.status') = 'started'"
  zuno db "SELECT d.call_id, d.tool, d.action, d.source, d.rule, d.layer, json_extract(p.data, '$.sandbox.resolutionKind') AS confinement FROM permission_decision d JOIN part p ON p.session_id = d.session_id AND p.id = d.call_id WHERE d.session_id = '%[1]s' ORDER BY d.position"   # who allowed each call, under which confinement
  zuno events read --stream session-%[1]s
  zuno run --session %[1]s --model scripted:<file> "..."   # continue it
  (cd %[2]s && sh test.sh)
`, sessionID, ws, env)
			return nil
		},
	}
	cmd.Flags().String("dir", "", "directory for the scratch workspace and the demo's database (default: a new temporary directory)")
	cmd.PersistentFlags().Bool("use-configured-db", false, "record into the configured event store (ZUNO_DB, ZUNO_EVENTSTORE_URL, the configuration) instead of the demo's own database")
	cmd.AddCommand(newDemoWorkCmd())
	return cmd
}

// demoDatabase points this invocation at a database of the demo's own, dir/zuno.db, unless
// --use-configured-db: a demo never writes into the user's real log (docs/cli.md, "zuno
// demo"). It is the CLI layer of the storage keys, so ZUNO_DB, ZUNO_EVENTSTORE_URL and the
// files are overridden for this invocation only. It returns what to say before the commands
// that inspect the demo (they read the configured store otherwise).
func demoDatabase(cmd *cobra.Command, dir string) string {
	if own, _ := cmd.Flags().GetBool("use-configured-db"); own {
		return "in the configured database (--use-configured-db)"
	}
	db, err := filepath.Abs(filepath.Join(dir, "zuno.db"))
	if err != nil {
		db = filepath.Join(dir, "zuno.db")
	}
	js, _ := json.Marshal(db)
	cliSettings = append(cliSettings, cliSetting{"zuno demo", "db", js})
	for _, key := range []string{"eventstore_url", "readmodel_url", "readmodel_reader_url", "bus_url"} {
		cliSettings = append(cliSettings, cliSetting{"zuno demo", key, json.RawMessage(`""`)})
	}
	prefix := "ZUNO_DB=" + db
	for _, v := range []string{"ZUNO_EVENTSTORE_URL", "ZUNO_READMODEL_URL", "ZUNO_BUS_URL"} {
		if os.Getenv(v) != "" { // set, it would point the inspecting command elsewhere
			prefix += " " + v + "="
		}
	}
	return fmt.Sprintf("in the demo's own database: prefix each command with %s, or run the demo with --use-configured-db", prefix)
}

func copyDemo(ws string) error {
	sub, err := fs.Sub(demodata, "demodata/workspace")
	if err != nil {
		return err
	}
	return os.CopyFS(ws, sub)
}
