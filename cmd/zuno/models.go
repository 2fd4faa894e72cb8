package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
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
OPENAI_BASE_URL), anthropic (a key, or ANTHROPIC_BASE_URL), the local servers ollama,
llamacpp and vllm at their default ports, any id configured under provider in zuno.json, and
scripted:<file>. A key is read from provider.<id>.options.apiKey, ZUNO_<PROVIDER>_API_KEY, the
auth file (zuno auth set), then <PROVIDER>_API_KEY. Without PROVIDER, every provider that has
a key, a base URL or a configuration entry is asked, and the configured model's script if it
is scripted. --verbose also shows how each provider is reached (family, base URL, where its
key comes from, header names, timeout, retries, the quirks handled), never a key.`,
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
			var provs []providerRow
			if verbose {
				if provs, err = describeProviders(cfg, specs); err != nil {
					return err
				}
			}
			rows, err := queries.Models(cmd.Context(), specs, openProvider(cfg, cmd.ErrOrStderr()))
			if err != nil {
				return err
			}
			if format == "json" && verbose {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"providers": provs, "models": rows})
			}
			if format == "json" {
				return writeJSON(cmd.OutOrStdout(), rows)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			if verbose && len(provs) > 0 {
				printProviders(tw, provs)
			}
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

// configuredProviders are the providers zuno models asks when none is named: openai and
// anthropic when they have a key wherever adapters/credentials finds one or a base URL of
// their own (which may need none), every provider the configuration names, and the
// configured model's script.
func configuredProviders(cfg config) ([]string, error) {
	var specs []string
	for _, p := range credentials.Providers {
		key, err := credentials.Resolve(p, os.Getenv, authFile(cfg))
		if err != nil {
			return nil, err
		}
		if _, configured := cfg.Provider[p]; key.Value != "" || os.Getenv(provider.BaseURLVar(p)) != "" || configured {
			specs = append(specs, p)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(cfg.Provider)) {
		if !slices.Contains(specs, id) {
			specs = append(specs, id)
		}
	}
	if strings.HasPrefix(cfg.Model, "scripted:") {
		specs = append(specs, cfg.Model)
	}
	if len(specs) == 0 {
		return nil, &queries.NotFoundError{Message: "no provider is configured: export ZUNO_OPENAI_API_KEY or ZUNO_ANTHROPIC_API_KEY, " +
			"store a key with zuno auth set <provider>, configure one under provider in zuno.json, or name one: " +
			"zuno models ollama (llamacpp, vllm) or zuno models scripted:<file>"}
	}
	return specs, nil
}

// providerRow is how a provider is reached, as --verbose shows it: never a key or a header
// value, only where the key comes from and the header names.
type providerRow struct {
	ID      string   `json:"id"`
	Family  string   `json:"family"`
	API     string   `json:"api"`
	BaseURL string   `json:"baseURL"`
	From    string   `json:"baseURLFrom"`
	Key     string   `json:"key"`
	Headers []string `json:"headers,omitempty"`
	Timeout string   `json:"timeout,omitempty"`
	Retries int      `json:"retries"`
	Quirks  []string `json:"quirks,omitempty"`
}

func describeProviders(cfg config, specs []string) ([]providerRow, error) {
	var rows []providerRow
	for _, spec := range specs {
		if strings.HasPrefix(spec, "scripted:") {
			continue
		}
		r, err := provider.Resolve(spec, cfg.Provider, os.Getenv)
		if err != nil {
			return nil, err
		}
		row := providerRow{ID: r.ID, Family: r.Family, API: r.API, BaseURL: provider.PublicURL(r.BaseURL), From: r.BaseURLFrom,
			Headers: slices.Sorted(maps.Keys(r.Headers)), Retries: r.Retry.Retries, Quirks: r.Quirks, Key: "none"}
		if r.Timeout > 0 {
			row.Timeout = r.Timeout.String()
		}
		switch {
		case r.APIKeyFrom != "":
			row.Key = "from " + r.APIKeyFrom
		case r.KeyFrom != "":
			key, err := credentials.Resolve(r.KeyFrom, os.Getenv, authFile(cfg))
			if err != nil {
				return nil, err
			}
			if key.Value != "" {
				row.Key = "from " + string(key.Origin)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func printProviders(tw *tabwriter.Writer, provs []providerRow) {
	fmt.Fprintln(tw, "PROVIDER\tFAMILY\tAPI\tBASE URL\tKEY\tHEADERS\tTIMEOUT\tRETRIES")
	for _, p := range provs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s (%s)\t%s\t%s\t%s\t%d\n", p.ID, p.Family, p.API, p.BaseURL, p.From, p.Key,
			orDash(strings.Join(p.Headers, ",")), orDash(p.Timeout), p.Retries)
	}
	for _, p := range provs {
		for _, q := range p.Quirks {
			fmt.Fprintf(tw, "%s quirk: %s\n", p.ID, q)
		}
	}
	fmt.Fprintln(tw)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
