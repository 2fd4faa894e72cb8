package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/commands/queries"
)

func newModelsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models [PROVIDER] [--verbose] [--format json|table]",
		Short: "List the models the configured providers serve",
		Long: `Lists provider/model ids usable with zuno run --model. Providers: openai (OPENAI_API_KEY,
OPENAI_BASE_URL: also Ollama, vLLM, llama.cpp), anthropic (ANTHROPIC_API_KEY), and
scripted:<file>. Without PROVIDER, every provider that has credentials configured is asked.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			verbose, _ := cmd.Flags().GetBool("verbose")
			var specs []string
			if len(args) == 1 {
				specs = []string{args[0]}
			} else {
				if os.Getenv("OPENAI_API_KEY") != "" || os.Getenv("OPENAI_BASE_URL") != "" {
					specs = append(specs, "openai")
				}
				if os.Getenv("ANTHROPIC_API_KEY") != "" {
					specs = append(specs, "anthropic")
				}
				if cfg, err := loadConfig(); err == nil && strings.HasPrefix(cfg.Model, "scripted:") {
					specs = append(specs, cfg.Model)
				}
				if len(specs) == 0 {
					return &queries.NotFoundError{Message: "no provider is configured: set OPENAI_API_KEY (or OPENAI_BASE_URL), ANTHROPIC_API_KEY, or name one: zuno models scripted:<file>"}
				}
			}
			rows, err := queries.Models(cmd.Context(), specs, provider.Open)
			if err != nil {
				return err
			}
			if format == "json" {
				return writeJSON(cmd.OutOrStdout(), rows)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			if verbose {
				fmt.Fprintln(tw, "MODEL\tNAME\tCONTEXT\tMAX OUTPUT\tTOOLS\tREASONING")
			}
			for _, r := range rows {
				if !verbose {
					fmt.Fprintln(tw, r.ID)
					continue
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.DisplayName, queries.Known(r.ContextWindow), queries.Known(r.MaxOutputTokens),
					queries.Known(r.Tools), queries.Known(r.Reasoning))
			}
			return tw.Flush()
		},
	}
	addFormatFlag(cmd, "table")
	cmd.Flags().Bool("verbose", false, "show context window, output limit and capabilities")
	return cmd
}
