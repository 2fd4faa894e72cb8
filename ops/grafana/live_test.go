package grafana_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"github.com/zuno-run/zuno/adapters/pgtest"
)

// script is the model of the two sessions the dashboards read. The audit session runs a
// shell call that passes, one that fails (a receipt that is not evidence of success), one a
// rule denies, and a write the configuration asks about (answered once through the API), each
// step reporting tokens. The interrupted session's call is stopped while it runs, so it ends
// uncertain.
const script = `{"sessions":[
 {"when":"audit","turns":[
  {"toolCalls":[{"id":"ok","name":"shell","arguments":{"command":"echo one >> calls.log"}}],"usage":{"inputTokens":1200,"outputTokens":40}},
  {"toolCalls":[{"id":"fails","name":"shell","arguments":{"command":"ls no-such-file"}}],"usage":{"inputTokens":1300,"outputTokens":30}},
  {"toolCalls":[{"id":"denied","name":"shell","arguments":{"command":"rm -rf nothing-here"}}],"usage":{"inputTokens":1400,"outputTokens":20}},
  {"toolCalls":[{"id":"asked","name":"write","arguments":{"path":"notes.txt","content":"checked\n"}}],"usage":{"inputTokens":1500,"outputTokens":25}},
  {"text":"done","usage":{"inputTokens":1600,"outputTokens":10}}]},
 {"when":"interrupt","turns":[
  {"toolCalls":[{"id":"slow","name":"shell","arguments":{"command":"sleep 60"}}],"usage":{"inputTokens":900,"outputTokens":15}},
  {"text":"never"}]}],
 "turns":[{"text":"unused"}]}`

const config = `{"permission":{"rules":{"edit":"ask","shell":{"*":"allow","rm -rf*":"deny"}}}}`

// emptyAllowed are the read-model panels that may return no rows after the sessions above, and
// why: every other SQL panel must return rows, so a query that silently matches nothing (a
// wrong column value, a JSON path that does not exist) fails.
var emptyAllowed = map[string]string{
	"zuno-sessions / Delegated jobs / A":          "the sessions delegate no job",
	"zuno-permissions / Waiting asks / A":         "the one ask was answered",
	"zuno-audit / Requests without a receipt / A": "every request records its receipt first",
	"zuno-permissions / Unconfined runs / A":      "the calls run confined where bubblewrap works",
}

// The deployment the dashboards are for, for real: a PostgreSQL database (event store, read
// models and durable bus), a `zuno worker` and a `zuno serve` with its /metrics, two sessions
// driven through the API, a verification through the API, and a Prometheus (the Debian
// package's binary) scraping the server. Every SQL panel then runs as the reader role and
// every PromQL expression on the Prometheus.
func TestDashboardQueriesOnARealDeployment(t *testing.T) {
	promBin := prometheusBinary(t)
	ds := loadDashboards(t)
	started := time.Now()
	d := newDeployment(t)
	worker, log := d.command("worker", "worker")
	worker.Stdout = worker.Stderr
	runUntilCleanup(t, worker, log)
	srv := d.startServer(t)

	audit := srv.post(t, "/api/sessions", `{"commandId":"audit-1","prompt":"audit run","title":"audit run","directory":"`+d.ws+`"}`)
	interrupted := srv.post(t, "/api/sessions", `{"commandId":"interrupt-1","prompt":"interrupt run","directory":"`+d.ws+`"}`)
	srv.answerAsk(t, audit["sessionId"])
	d.waitPart(t, interrupted["sessionId"], "slow", "running")
	srv.post(t, "/api/sessions/"+interrupted["sessionId"]+"/abort", "")
	d.waitSession(t, audit["sessionId"], "completed")
	d.waitSession(t, interrupted["sessionId"], "interrupted")
	srv.post(t, "/api/verify", "")

	prom := startPrometheus(t, promBin, srv.addr)
	prom.waitScrapes(t, 3)

	t.Run("SQL as the reader role", func(t *testing.T) {
		reader := d.reader(t)
		r := timeRange{started.Add(-time.Hour), time.Now().Add(time.Minute)}
		qs := queries(ds, readerUID)
		for _, q := range qs {
			n, cols, err := runReadOnly(reader, q.t.RawSQL, r)
			_, allowed := emptyAllowed[q.name]
			switch {
			case err != nil:
				t.Errorf("%s: %v", q.name, err)
			case q.t.Format == "time_series" && !slices.Contains(cols, "time"):
				t.Errorf("%s: a time series without a column named time (Grafana needs one): %v", q.name, cols)
			case n == 0 && !allowed:
				t.Errorf("%s: no rows after a real session run; the query matches nothing", q.name)
			default:
				t.Logf("%s: %d rows", q.name, n)
			}
		}
		if len(qs) < 20 {
			t.Errorf("only %d SQL queries found", len(qs))
		}
	})
	t.Run("PromQL on a real Prometheus", func(t *testing.T) {
		qs := queries(ds, promUID)
		for _, q := range qs {
			expr, err := expandPromQL(q.t.Expr)
			if err != nil {
				t.Error(err)
				continue
			}
			if n, err := prom.query(expr); err != nil {
				t.Errorf("%s: %s: %v", q.name, expr, err)
			} else if n == 0 {
				t.Errorf("%s: %s returned no series", q.name, expr)
			} else {
				t.Logf("%s: %d series", q.name, n)
			}
			for _, name := range metricNames.FindAllString(expr, -1) {
				if n, err := prom.query(`count({__name__="` + name + `"})`); err != nil || n == 0 {
					t.Errorf("%s: Prometheus has no series %s scraped from zuno serve (%v)", q.name, name, err)
				}
			}
		}
		if len(qs) < 15 {
			t.Errorf("only %d PromQL expressions found", len(qs))
		}
	})
	t.Run("alert rules evaluate", func(t *testing.T) { prom.checkRules(t) })
}

// prometheusBinary is the Debian package's prometheus; the test skips visibly without it,
// and fails under CI, which installs it.
func prometheusBinary(t *testing.T) string {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus is not installed: .ci/run installs it (apt-get install prometheus)")
		}
		t.Skip("SKIP: the prometheus binary is not installed (apt-get install prometheus)")
	}
	return bin
}

type deployment struct {
	dir, ws, url string
	env          []string
	owner        *sql.DB
}

func newDeployment(t *testing.T) *deployment {
	url := pgtest.NewDatabase(t)
	dir := t.TempDir()
	d := &deployment{dir: dir, ws: filepath.Join(dir, "ws"), url: url}
	must(t, os.MkdirAll(d.ws, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "script.json"), []byte(script), 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "config.json"), []byte(config), 0o600))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ZUNO_") && !strings.HasPrefix(kv, "XDG_") {
			d.env = append(d.env, kv)
		}
	}
	d.env = append(d.env, "ZUNO_EVENTSTORE_URL="+url, "ZUNO_BUS_URL="+url,
		"ZUNO_MODEL=scripted:"+filepath.Join(dir, "script.json"), "ZUNO_CONFIG="+filepath.Join(dir, "config.json"),
		"HOME="+dir, "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	db, err := sql.Open("postgres", url)
	must(t, err)
	t.Cleanup(func() { db.Close() })
	d.owner = db
	return d
}

// command is a zuno process of the deployment; its stderr goes to a log in the test's
// directory, shown when the test fails.
func (d *deployment) command(name string, args ...string) (*exec.Cmd, string) {
	cmd := exec.Command(zunoBin, args...)
	cmd.Env, cmd.Dir = d.env, d.ws
	path := filepath.Join(d.dir, name+".log")
	log, err := os.Create(path)
	if err != nil {
		panic(err)
	}
	cmd.Stderr = log
	return cmd, path
}

type server struct {
	addr string
	base string
}

var listening = regexp.MustCompile(`listening on http://(127\.0\.0\.1:[0-9]+)`)

// startServer starts `zuno serve` on a port the kernel picks and reads the address it prints.
func (d *deployment) startServer(t *testing.T) *server {
	cmd, log := d.command("serve", "serve", "--listen", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	must(t, err)
	runUntilCleanup(t, cmd, log)
	found := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			if m := listening.FindStringSubmatch(s.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case addr := <-found:
		return &server{addr: addr, base: "http://" + addr}
	case <-time.After(30 * time.Second):
		t.Fatal("zuno serve did not listen within 30s")
	}
	return nil
}

// runUntilCleanup starts cmd and interrupts it when the test ends, printing its log if the
// test failed.
func runUntilCleanup(t *testing.T, cmd *exec.Cmd, log string) {
	must(t, cmd.Start())
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			b, _ := os.ReadFile(log)
			t.Logf("%s:\n%s", log, b)
		}
	})
}

func (s *server) post(t *testing.T, path, body string) map[string]string {
	t.Helper()
	resp, err := http.Post(s.base+path, "application/json", strings.NewReader(body))
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	out := map[string]string{}
	var raw map[string]any
	json.Unmarshal(b, &raw)
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// answerAsk waits for the session's pending permission ask and answers it once.
func (s *server) answerAsk(t *testing.T, session string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.base + "/api/sessions/" + session + "/asks?pending=true")
		must(t, err)
		var asks struct {
			Asks []struct {
				AskID string `json:"askId"`
			} `json:"asks"`
		}
		json.NewDecoder(resp.Body).Decode(&asks)
		resp.Body.Close()
		if len(asks.Asks) > 0 {
			resp, err := http.Post(s.base+"/api/sessions/"+session+"/asks/"+asks.Asks[0].AskID+"/reply", "application/json", strings.NewReader(`{"reply":"once"}`))
			must(t, err)
			resp.Body.Close()
			if resp.StatusCode != 204 {
				t.Fatalf("reply to the ask: %d", resp.StatusCode)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the audit session asked nothing within 30s")
}

// waitSession waits until the session's read-model row has the status: the server's
// projection runner follows the log live.
func (d *deployment) waitSession(t *testing.T, id, status string) {
	t.Helper()
	d.waitRow(t, `SELECT count(*) FROM session WHERE id = $1 AND status = $2`, id, status)
}

func (d *deployment) waitPart(t *testing.T, session, call, status string) {
	t.Helper()
	d.waitRow(t, `SELECT count(*) FROM part WHERE session_id = $1 AND id = $2 AND json_extract(data, '$.state.status') = $3`, session, call, status)
}

func (d *deployment) waitRow(t *testing.T, q string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		var n int
		if err := d.owner.QueryRow(q, args...).Scan(&n); err == nil && n > 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no row within 30s: %s %v", q, args)
}

// reader connects as the reader role the migrations created (docs/storage.md, "`zuno db`
// cannot write"), exactly as Grafana's datasource is configured to, and checks it is that
// role and no writer.
func (d *deployment) reader(t *testing.T) *sql.DB {
	t.Helper()
	var role, password string
	must(t, d.owner.QueryRow(`SELECT role, password FROM zuno_reader_credential`).Scan(&role, &password))
	u, err := url.Parse(d.url)
	must(t, err)
	u.User = url.UserPassword(role, password)
	db, err := sql.Open("postgres", u.String())
	must(t, err)
	t.Cleanup(func() { db.Close() })
	var user string
	var super, writes bool
	must(t, db.QueryRow(`SELECT current_user::text, r.rolsuper, has_table_privilege('session', 'INSERT')
		FROM pg_roles r WHERE r.rolname = current_user`).Scan(&user, &super, &writes))
	if user != role || super || writes {
		t.Fatalf("the reader connection is %s (superuser %v, may insert %v), want %s, read-only", user, super, writes, role)
	}
	return db
}

// runReadOnly runs a panel's SQL, its macros expanded, in a read-only transaction that is
// rolled back, and returns how many rows it gave and its columns.
func runReadOnly(db *sql.DB, raw string, r timeRange) (int, []string, error) {
	q, err := expandSQL(raw, r)
	if err != nil {
		return 0, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return 0, nil, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return 0, nil, fmt.Errorf("%w\n%s", err, q)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, nil, err
	}
	n := 0
	for rows.Next() {
		n++
	}
	return n, cols, rows.Err()
}

type prometheusServer struct{ base string }

// startPrometheus runs prometheus on a free loopback port with a configuration scraping the
// server every second (job "zuno", as ops/prometheus/prometheus.yml names it) and the alert
// rules of ops/prometheus loaded.
func startPrometheus(t *testing.T, bin, target string) *prometheusServer {
	dir := t.TempDir()
	rules, err := filepath.Abs("../prometheus/alerts.yml")
	must(t, err)
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: zuno
    static_configs:
      - targets: [%q]
`, rules, target)
	must(t, os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600))
	addr := freeAddr(t)
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	must(t, err)
	cmd.Stdout, cmd.Stderr = log, log
	runUntilCleanup(t, cmd, filepath.Join(dir, "prometheus.log"))
	p := &prometheusServer{base: "http://" + addr}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(p.base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("prometheus was not ready within 30s")
	return nil
}

// waitScrapes waits until Prometheus holds n successful scrapes of the server, so a rate over
// the dashboards' $__rate_interval has samples to work with.
func (p *prometheusServer) waitScrapes(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if got, err := p.query(fmt.Sprintf(`count_over_time(up{job="zuno"}[1m]) >= %d and up{job="zuno"} == 1`, n)); err == nil && got > 0 {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("prometheus did not scrape zuno serve %d times within 30s", n)
}

// query evaluates expr now and returns how many series (or samples) it gave; a parse or
// evaluation error is the error Prometheus gave.
func (p *prometheusServer) query(expr string) (int, error) {
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out struct {
		Status    string `json:"status"`
		Error     string `json:"error"`
		ErrorType string `json:"errorType"`
		Data      struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, err
	}
	if out.Status != "success" {
		return 0, fmt.Errorf("%s: %s", out.ErrorType, out.Error)
	}
	switch out.Data.ResultType {
	case "vector", "matrix":
		var series []json.RawMessage
		if err := json.Unmarshal(out.Data.Result, &series); err != nil {
			return 0, err
		}
		return len(series), nil
	default: // a scalar or a string is one value
		if bytes.Equal(out.Data.Result, []byte("null")) {
			return 0, nil
		}
		return 1, nil
	}
}

// checkRules: Prometheus loaded the alert rules of ops/prometheus and evaluated each against
// the server's series without an error.
func (p *prometheusServer) checkRules(t *testing.T) {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/rules")
	must(t, err)
	defer resp.Body.Close()
	var out struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name, Health, LastError string
				} `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	must(t, json.NewDecoder(resp.Body).Decode(&out))
	n := 0
	for _, g := range out.Data.Groups {
		for _, r := range g.Rules {
			n++
			if r.Health != "ok" {
				t.Errorf("alert %s: health %q: %s", r.Name, r.Health, r.LastError)
			}
		}
	}
	if n < 6 {
		t.Errorf("Prometheus loaded %d alert rules, want the 6 of ops/prometheus/alerts.yml", n)
	}
}

func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer l.Close()
	return l.Addr().String()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
