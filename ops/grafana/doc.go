// Package grafana holds Zuno's Grafana provisioning (provisioning/: the datasources and the
// dashboard provider; dashboards/: the dashboards) and the tests that run every panel's query
// against a real deployment: each SQL query as the read models' reader role on a real
// PostgreSQL populated by real sessions, each PromQL expression on a real Prometheus scraping a
// real `zuno serve` (docs/operations.md, "Dashboards"). It has no code of its own.
package grafana
