package main

import (
	"context"
	"database/sql"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	_ "github.com/lib/pq"
	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite"
)

// scriptCmds are the testscript commands the CLI scripts use beside zuno itself.
var scriptCmds = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	// capture NAME REGEXP sets $NAME to the first group of REGEXP's first match in the last
	// command's stdout, so a later command can name the session a run created.
	"capture": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: capture NAME REGEXP")
		}
		m := regexp.MustCompile(args[1]).FindStringSubmatch(ts.ReadFile("stdout"))
		if len(m) < 2 {
			ts.Fatalf("capture: %q does not match stdout", args[1])
		}
		ts.Setenv(args[0], m[1])
	},
	// waitfile PATH [SECONDS] waits until PATH exists (default 30 s), e.g. until a background
	// zuno run has reached a tool call.
	"waitfile": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 1 || neg {
			ts.Fatalf("usage: waitfile PATH [SECONDS]")
		}
		limit := 30 * time.Second
		if len(args) == 2 {
			n, err := strconv.Atoi(args[1])
			ts.Check(err)
			limit = time.Duration(n) * time.Second
		}
		deadline := time.Now().Add(limit)
		for {
			if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("waitfile: %s did not appear within %v", args[0], limit)
			}
			time.Sleep(20 * time.Millisecond)
		}
	},
	// pty INPUT PROG [ARGS...] runs PROG with standard input, output and error on a
	// pseudo-terminal (its controlling terminal), typing INPUT's lines; what the terminal
	// showed becomes stdout. It is how a script answers zuno's permission asks as a person would.
	"pty": runOnPTY,
	// eventlog-exec SQL runs SQL against the event log's own database (bypassing zuno), to
	// tamper with stored events the way an attacker with database access could.
	"eventlog-exec": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 || neg {
			ts.Fatalf("usage: eventlog-exec SQL")
		}
		driver, dsn, query := "sqlite", ts.Getenv("ZUNO_DB"), args[0]
		if u := ts.Getenv("ZUNO_EVENTSTORE_URL"); u != "" {
			driver, dsn = "postgres", u
			// Postgres keeps event data as JSON; replace() works on its text.
			query = strings.ReplaceAll(query, "data = replace(data,", "data = replace(data::text,")
			query = strings.ReplaceAll(query, ")  WHERE", ")::json WHERE")
		}
		db, err := sql.Open(driver, dsn)
		ts.Check(err)
		defer db.Close()
		res, err := db.ExecContext(context.Background(), query)
		ts.Check(err)
		n, _ := res.RowsAffected()
		ts.Logf("eventlog-exec: %d rows changed", n)
		if n == 0 {
			ts.Fatalf("eventlog-exec: no row changed")
		}
	},
}
