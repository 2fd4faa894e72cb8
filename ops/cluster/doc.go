// Package cluster holds the test of the deployment docs/server.md describes in "Several
// servers on one store": real `zuno serve` and `zuno worker` processes on one PostgreSQL,
// killed with SIGKILL while clients drive sessions through them. It has no code of its own.
package cluster
