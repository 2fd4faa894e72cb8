// Package migrations embeds the SQL schemas, one set per dialect and purpose:
// eventlog (the SQL event store's own tables) and readmodel (projections and checkpoints).
// Files are applied in name order, each once; see adapters/sqldb for the runner, which puts
// the advisory-lock keys of locks.go in for their placeholders (Expand).
package migrations

import "embed"

// FS holds <dialect>/<set>/NNNN_name.sql.
//
//go:embed sqlite postgres
var FS embed.FS
