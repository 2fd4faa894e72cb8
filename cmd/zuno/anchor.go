package main

import (
	"fmt"

	"github.com/spf13/cobra"

	zanchor "github.com/zuno-run/zuno/adapters/anchor"
)

func newAnchorCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "anchor",
		Short: "Make and show the keys that sign anchors of the event log (zuno verify --anchor)",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "keygen",
		Short: "Make an ed25519 key pair for signing anchors",
		Long: `Print a new key pair from the system's random source: the first line is the private seed
for ZUNO_ANCHOR_KEY (keep it where only whoever anchors the log can read it), the second the
public key for ZUNO_ANCHOR_PUBLIC_KEY (give it to auditors: it checks and never signs).
With --format json, {"privateKey", "publicKey"}. Nothing is stored.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, err := getFormat(cmd)
			if err != nil {
				return err
			}
			seed, public, err := zanchor.GenerateKey()
			if err != nil {
				return err
			}
			if format == "json" {
				return writeJSON(cmd.OutOrStdout(), map[string]string{"privateKey": seed, "publicKey": public})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ZUNO_ANCHOR_KEY=%s\nZUNO_ANCHOR_PUBLIC_KEY=%s\n", seed, public)
			return nil
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "public-key",
		Short: "Print the public key of ZUNO_ANCHOR_KEY, for auditors' ZUNO_ANCHOR_PUBLIC_KEY",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keys, err := anchorKeys()
			if err != nil {
				return err
			}
			if keys.Private == nil {
				return &configError{"ZUNO_ANCHOR_KEY is not set: make a key pair with zuno anchor keygen"}
			}
			fmt.Fprintln(cmd.OutOrStdout(), keys.PublicKey())
			return nil
		},
	})
	for _, c := range cmd.Commands() {
		if c.Name() == "keygen" {
			addFormatFlag(c, "table")
		}
	}
	return cmd
}
