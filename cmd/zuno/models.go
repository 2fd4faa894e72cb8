package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/adapters/provider"
	"github.com/zuno-run/zuno/domain/model"
)

// modelChoice is a parsed --model: which provider serves it and the model id to request.
type modelChoice struct {
	// Spec is the provider spec provider.Open takes; Name is how requests record it.
	Spec, Name, Model string
}

// parseModel reads openai/<model>, anthropic/<model> or scripted:<file>.
func parseModel(s string) (modelChoice, error) {
	if s == "" {
		return modelChoice{}, usagef("no model: pass --model (openai/<model>, anthropic/<model> or scripted:<file>) or set model in the config or ZUNO_MODEL")
	}
	if file, ok := strings.CutPrefix(s, "scripted:"); ok {
		if file == "" {
			return modelChoice{}, usagef("--model scripted: names no script file; write scripted:<path to the script JSON>")
		}
		return modelChoice{Spec: s, Name: "scripted", Model: "scripted"}, nil
	}
	prov, id, ok := strings.Cut(s, "/")
	if !ok || id == "" || (prov != "openai" && prov != "anthropic") {
		return modelChoice{}, usagef("--model %q: write openai/<model>, anthropic/<model> or scripted:<file> (zuno models lists them)", s)
	}
	return modelChoice{Spec: prov, Name: prov, Model: id}, nil
}

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
					return &notFoundError{"no provider is configured: set OPENAI_API_KEY (or OPENAI_BASE_URL), ANTHROPIC_API_KEY, or name one: zuno models scripted:<file>"}
				}
			}
			type row struct {
				Provider string `json:"provider"`
				ID       string `json:"id"`
				model.ModelInfo
			}
			var rows []row
			for _, spec := range specs {
				p, err := provider.Open(spec)
				if err != nil {
					return err
				}
				ms, err := p.Models(cmd.Context())
				if err != nil {
					return fmt.Errorf("%s: %w", spec, err)
				}
				name, _, _ := strings.Cut(spec, ":")
				for _, m := range ms {
					id := name + "/" + m.ID
					if name == "scripted" {
						id = spec
					}
					rows = append(rows, row{Provider: name, ID: id, ModelInfo: m})
				}
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
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.DisplayName, orUnknown(r.ContextWindow), orUnknown(r.MaxOutputTokens),
					supportText(r.Tools), supportText(r.Reasoning))
			}
			return tw.Flush()
		},
	}
	addFormatFlag(cmd, "table")
	cmd.Flags().Bool("verbose", false, "show context window, output limit and capabilities")
	return cmd
}

func orUnknown(n int64) string {
	if n == 0 {
		return "unknown"
	}
	return fmt.Sprint(n)
}

func supportText(s model.Support) string {
	if s == model.SupportUnknown {
		return "unknown"
	}
	return string(s)
}
