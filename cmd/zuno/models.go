package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/adapters/credentials"
	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/commands/queries"
)

func newModelsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models [PROVIDER] [--verbose] [--format json|table]",
		Short: "List the models the configured providers serve",
		Long: `Lists provider/model ids usable with zuno run --model. Providers: openai (a key, or
OPENAI_BASE_URL: also Ollama, vLLM, llama.cpp), anthropic (a key, or ANTHROPIC_BASE_URL), and
scripted:<file>. A key is read from ZUNO_<PROVIDER>_API_KEY, the auth file (zuno auth set),
then <PROVIDER>_API_KEY. Without PROVIDER, every provider that has a key or a base URL
configured is asked, and the configured model's script if it is scripted.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			verbose, _ := cmd.Flags().GetBool("verbose")
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			specs := args
			if len(specs) == 0 {
				if specs, err = configuredProviders(cfg); err != nil {
					return err
				}
			}
			rows, err := queries.Models(cmd.Context(), specs, openProvider(cfg, cmd.ErrOrStderr()))
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

// configuredProviders are the providers zuno models asks when none is named: those with a key
// wherever adapters/credentials finds one, or a base URL of their own (which may need none),
// and the configured model's script.
func configuredProviders(cfg config) ([]string, error) {
	var specs []string
	for _, p := range credentials.Providers {
		key, err := credentials.Resolve(p, os.Getenv, authFile(cfg))
		if err != nil {
			return nil, err
		}
		if key.Value != "" || !provider.NeedsKey(p, os.Getenv) {
			specs = append(specs, p)
		}
	}
	if strings.HasPrefix(cfg.Model, "scripted:") {
		specs = append(specs, cfg.Model)
	}
	if len(specs) == 0 {
		return nil, &queries.NotFoundError{Message: "no provider is configured: export ZUNO_OPENAI_API_KEY or ZUNO_ANTHROPIC_API_KEY, " +
			"store a key with zuno auth set <provider>, set OPENAI_BASE_URL at a local server, or name one: zuno models scripted:<file>"}
	}
	return specs, nil
}
