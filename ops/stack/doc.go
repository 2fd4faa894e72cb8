// Package stack holds the scripts that start and stop the parts of ops/compose.yaml that run
// without Docker (up.sh, down.sh) and the test that validates the compose file against the
// repository and the zuno CLI (docs/operations.md, "The compose stack"). It has no code of its
// own.
package stack
