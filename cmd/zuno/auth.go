package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/zuno-run/zuno/adapters/credentials"
)

// authFile is the auth file in Zuno's data directory (dataDir): outside every workspace, and
// read by this process only (docs/config.md, "Provider keys").
func authFile(cfg config) credentials.File { return credentials.At(dataDir(cfg)) }

func newAuthCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Store provider API keys where tool commands cannot see them",
		Long: `Provider keys are read, first found wins, from ZUNO_<PROVIDER>_API_KEY, the auth file
(auth.json in Zuno's data directory, $XDG_DATA_HOME/zuno, mode 0600, written by zuno auth set), then the host's
<PROVIDER>_API_KEY. The first two are withheld from every tool command; the last is inherited
by them, and zuno run says so. Keys are never printed or recorded in events.`,
	}
	cmd.AddCommand(newAuthSetCmd(), newAuthListCmd(), newAuthRemoveCmd())
	return cmd
}

func newAuthSetCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "set PROVIDER",
		Short: "Store PROVIDER's key (openai, anthropic), read from standard input or typed without echo",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			key, err := readKey(cmd, args[0])
			if err != nil {
				return err
			}
			f := authFile(cfg)
			if err := f.Set(args[0], key); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "stored the %s key in %s\n", args[0], f.Path)
			return nil
		},
	}
}

func newAuthListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "Show each provider and where its key comes from (never the key)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			f := authFile(cfg)
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PROVIDER\tORIGIN\tSOURCE\tTOOLS SEE IT")
			for _, p := range credentials.Providers {
				k, err := credentials.Resolve(p, os.Getenv, f)
				if err != nil {
					return err
				}
				origin, source, seen := string(k.Origin), k.Source, "no"
				switch k.Origin {
				case credentials.OriginNone:
					origin, source = "none", "-"
				case credentials.OriginHost:
					seen = "yes"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p, origin, source, seen)
			}
			return tw.Flush()
		},
	}
}

func newAuthRemoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "remove PROVIDER",
		Short: "Delete PROVIDER's key from the auth file",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig()
			if err != nil {
				return err
			}
			f := authFile(cfg)
			ok, err := f.Remove(args[0])
			if err != nil {
				return err
			}
			if !ok {
				fmt.Fprintf(cmd.OutOrStdout(), "no %s key in %s\n", args[0], f.Path)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "removed the %s key from %s\n", args[0], f.Path)
			return nil
		},
	}
}

// readKey reads the key: typed at a terminal without echo, else the first line of standard
// input. Never from an argument, which other users can read in the process list and which
// lands in shell history.
func readKey(cmd *cobra.Command, provider string) (string, error) {
	in := cmd.InOrStdin()
	if f, ok := in.(*os.File); ok {
		if restore, err := noEcho(f); err == nil {
			defer restore()
			fmt.Fprintf(cmd.ErrOrStderr(), "%s API key (not shown): ", provider)
			defer fmt.Fprintln(cmd.ErrOrStderr())
		}
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	return strings.TrimSpace(line), nil
}
