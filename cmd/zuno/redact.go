package main

import "github.com/zuno-run/zuno/adapters/sqldb"

func redact(u string) string { return sqldb.RedactURL(u) }
