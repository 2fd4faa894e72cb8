package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	_ "github.com/lib/pq"
	"github.com/rogpeppe/go-internal/testscript"
	_ "modernc.org/sqlite"

	"github.com/zuno-run/zuno/adapters/eventstore/sqlstore"
	"github.com/zuno-run/zuno/adapters/provider/replay"
	"github.com/zuno-run/zuno/events"
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
	// hostdir NAME makes a directory outside /tmp (under /var/tmp), removed when the script
	// ends, and sets $NAME to it: the sandbox's private /tmp would hide anything under /tmp
	// from a confined command by accident, so what a script proves hidden must live here.
	"hostdir": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 || neg {
			ts.Fatalf("usage: hostdir NAME")
		}
		d, err := os.MkdirTemp("/var/tmp", "zuno-script-")
		ts.Check(err)
		ts.Defer(func() { os.RemoveAll(d) })
		ts.Setenv(args[0], d)
	},
	// waitfile PATH [SECONDS] waits until PATH exists (default 30 s), e.g. until a background
	// zuno run has reached a tool call.
	// waitdb REGEX SQL waits (up to 30 s) until `zuno db --format json SQL` prints a match of
	// REGEX: how a script waits for a state another zuno process records (a job settled)
	// without sleeping for a guessed time.
	"waitdb": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 || neg {
			ts.Fatalf("usage: waitdb REGEX SQL")
		}
		re, err := regexp.Compile(args[0])
		ts.Check(err)
		deadline := time.Now().Add(30 * time.Second)
		for tries := 1; ; tries++ {
			err := ts.Exec("zuno", "db", "--format", "json", args[1])
			if err == nil && re.MatchString(ts.ReadFile("stdout")) {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("waitdb: no match of %s within 30s (%d queries; the last: %v); last output:\n%s%s", args[0], tries, err,
					ts.ReadFile("stdout"), ts.ReadFile("stderr"))
			}
			time.Sleep(100 * time.Millisecond)
		}
	},
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
	// editline FILE N OLD NEW replaces the first OLD in line N of FILE with NEW: an evidence
	// bundle tampered with by hand, one line of it.
	"editline": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 4 || neg {
			ts.Fatalf("usage: editline FILE N OLD NEW")
		}
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		lines := strings.SplitAfter(ts.ReadFile(args[0]), "\n")
		if n < 1 || n > len(lines) || !strings.Contains(lines[n-1], args[2]) {
			ts.Fatalf("editline: line %d of %s has no %q", n, args[0], args[2])
		}
		lines[n-1] = strings.Replace(lines[n-1], args[2], args[3], 1)
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.Join(lines, "")), 0o644))
	},
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
	// eventlog-import FILE writes the events of FILE (JSON lines: position, eventId, stream,
	// revision, type, data, metadata, as an older build stored them) into the embedded event
	// log as they are, so a script can read a log recorded before this build's formats.
	"eventlog-import": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 || neg || ts.Getenv("ZUNO_EVENTSTORE_URL") != "" {
			ts.Fatalf("usage: eventlog-import FILE (on the embedded SQLite log)")
		}
		db, err := sql.Open("sqlite", ts.Getenv("ZUNO_DB"))
		ts.Check(err)
		defer db.Close()
		for line := range strings.Lines(ts.ReadFile(args[0])) {
			var ev struct {
				Position, Revision                    int64
				EventID, Stream, Type, Data, Metadata string
			}
			ts.Check(json.Unmarshal([]byte(line), &ev))
			_, err := db.ExecContext(context.Background(), `INSERT INTO event_log (position, event_id, stream, stream_revision, type, data, metadata)
				VALUES (?, ?, ?, ?, ?, ?, ?)`, ev.Position, ev.EventID, ev.Stream, ev.Revision, ev.Type, ev.Data, ev.Metadata)
			ts.Check(err)
		}
	},
	// eventlog-append FILE appends the events of FILE through the event store the script uses
	// (the embedded log, or ZUNO_EVENTSTORE_URL), as the runtime appends them: one append per
	// line, {"stream", "time", "events": [{"type", "data"}, ...]}, each payload decoded by this
	// build's registry first. It seeds what no zuno command can write yet (the job runtime's
	// ledger, before the task tool records jobs).
	"eventlog-append": appendEvents,
	// eventlog-scan VALUE reads every stored event (type, stream, data, metadata) straight
	// from the event log's database and fails if VALUE occurs in any of them: a credential
	// must be in none (docs/config.md, "Provider keys").
	"eventlog-scan": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 || neg || args[0] == "" {
			ts.Fatalf("usage: eventlog-scan VALUE")
		}
		driver, dsn := "sqlite", ts.Getenv("ZUNO_DB")
		query := "SELECT position, type, stream, data, metadata FROM event_log"
		if u := ts.Getenv("ZUNO_EVENTSTORE_URL"); u != "" {
			driver, dsn = "postgres", u
			query = "SELECT position, type, stream, data::text, metadata::text FROM event_log"
		}
		db, err := sql.Open(driver, dsn)
		ts.Check(err)
		defer db.Close()
		rows, err := db.QueryContext(context.Background(), query)
		ts.Check(err)
		defer rows.Close()
		n := 0
		for rows.Next() {
			var pos int64
			var typ, stream, data, meta string
			ts.Check(rows.Scan(&pos, &typ, &stream, &data, &meta))
			n++
			if strings.Contains(typ+stream+data+meta, args[0]) {
				ts.Fatalf("eventlog-scan: event %d (%s) holds the value", pos, typ)
			}
		}
		ts.Check(rows.Err())
		if n == 0 {
			ts.Fatalf("eventlog-scan: the log holds no events")
		}
		ts.Logf("eventlog-scan: %d events, none holds the value", n)
	},
	// replayserver NAME FILE... starts a local server that answers its requests with the
	// recorded HTTP responses FILE... in order (adapters/provider/replay: raw responses, event
	// streams flushed event by event, "!drop" cutting the connection) and sets $NAME to its
	// /v1 root. Each request's method, path and body are appended to $WORK/NAME.requests.
	"replayserver": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 || neg {
			ts.Fatalf("usage: replayserver NAME FILE...")
		}
		files := make([]string, len(args)-1)
		for i, f := range args[1:] {
			files[i] = ts.MkAbs(f)
		}
		seq := replay.NewSequence(files...)
		log := ts.MkAbs(args[0] + ".requests")
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() { // also when a "!drop" aborts the response
				reqs := seq.Requests()
				last := reqs[len(reqs)-1]
				if f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
					fmt.Fprintf(f, "%s %s %s\n", last.Method, last.Path, last.Body)
					f.Close()
				}
			}()
			seq.ServeHTTP(w, r)
		}))
		ts.Defer(srv.Close)
		ts.Setenv(args[0], srv.URL+"/v1")
	},
	// fakeopenai starts an OpenAI-compatible chat server for the rest of the script and
	// points OPENAI_BASE_URL at it. Its first answer calls shell with {"command": "env"},
	// later ones say "done"; every request's Authorization header is appended to
	// $WORK/authorization.seen, so a script can show which key the provider sent.
	"fakeopenai": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 0 || neg {
			ts.Fatalf("usage: fakeopenai")
		}
		seen := ts.MkAbs("authorization.seen")
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
				http.NotFound(w, r)
				return
			}
			f, err := os.OpenFile(seen, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err == nil {
				fmt.Fprintln(f, r.Header.Get("Authorization"))
				f.Close()
			}
			w.Header().Set("Content-Type", "text/event-stream")
			chunk := func(choice string) {
				fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"fake\",\"choices\":[%s]}\n\n", choice)
			}
			if !strings.Contains(string(body), `"role":"tool"`) {
				chunk(`{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_env","type":"function","function":{"name":"shell","arguments":"{\"command\":\"env\"}"}}]},"finish_reason":null}`)
				chunk(`{"index":0,"delta":{},"finish_reason":"tool_calls"}`)
			} else {
				chunk(`{"index":0,"delta":{"role":"assistant","content":"done"},"finish_reason":null}`)
				chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`)
			}
			fmt.Fprint(w, "data: [DONE]\n\n")
		}))
		ts.Defer(srv.Close)
		ts.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	},
}

// seededAppend is one line of eventlog-append's file: one append to one stream.
type seededAppend struct {
	Stream string    `json:"stream"`
	Time   time.Time `json:"time"`
	Events []struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	} `json:"events"`
}

func appendEvents(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: eventlog-append FILE")
	}
	ctx := context.Background()
	var store *sqlstore.Store
	var err error
	if u := ts.Getenv("ZUNO_EVENTSTORE_URL"); u != "" {
		store, err = sqlstore.OpenPostgres(ctx, u)
	} else {
		store, err = sqlstore.OpenSQLite(ctx, ts.Getenv("ZUNO_DB"))
	}
	ts.Check(err)
	defer store.Close()
	registry := events.NewRegistry(events.AllPayloads()...)
	n := 0
	for line := range strings.Lines(ts.ReadFile(args[0])) {
		var a seededAppend
		ts.Check(json.Unmarshal([]byte(line), &a))
		cmd := fmt.Sprintf("seed/%s/%d", args[0], n)
		md := events.Metadata{CommandID: cmd, Actor: "host", CorrelationID: a.Stream, Time: a.Time}
		evs := make([]events.Event, len(a.Events))
		for i, e := range a.Events {
			p, err := registry.Decode(events.Recorded{Event: events.Event{Type: e.Type, Data: e.Data}, Stream: a.Stream})
			ts.Check(err)
			evs[i], err = events.EncodeIn(a.Stream, events.DeriveID(cmd, i), p, md)
			ts.Check(err)
		}
		_, err := store.Append(ctx, a.Stream, events.Any, evs...)
		ts.Check(err)
		n++
	}
	ts.Logf("eventlog-append: %d appends", n)
}
