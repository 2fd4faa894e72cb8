// Package loadtest_test drives a real `zuno serve` process with concurrent sessions and
// live event streams, and measures what its clients see (docs/server.md, "Load"). It holds
// only tests, beside ops/prometheus's: nothing in the module imports it, and its run time is
// not cmd/zuno's.
package loadtest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/pgtest"
)

// binDir holds the zuno binary built once per test process (TestMain removes it).
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// zunoBinary builds cmd/zuno once: the server must be a process of its own, so its memory
// is its own and its clients (this process) do not share its heap or its scheduler.
func zunoBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "zuno-load-bin")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "zuno")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/zuno-run/zuno/cmd/zuno").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

// workload is what one run does: sessions started at once, each running turns one after
// another, each turn steps tool steps (a shell echo, then reads) and a last answer.
type workload struct {
	sessions, turns, steps int
	// global clients stream GET /api/events from before the first session starts;
	// perSession clients stream each session's GET /api/sessions/{id}/events from its 202 on.
	global, perSession int
}

func (w workload) clients() int { return w.global + w.perSession*w.sessions }

// script is the scripted model every session plays: the provider plays the response
// numbered by the assistant messages the session's conversation already holds, so each
// session's turn k plays the k-th stretch of steps+1 responses.
func (w workload) script() []byte {
	var responses []any
	for k := 1; k <= w.turns; k++ {
		for s := 1; s <= w.steps; s++ {
			call := map[string]any{"id": fmt.Sprintf("t%ds%d", k, s), "name": "read", "arguments": map[string]any{"path": "a.txt"}}
			if s == 1 {
				call = map[string]any{"id": fmt.Sprintf("t%ds%d", k, s), "name": "shell", "arguments": map[string]any{"command": "echo step"}}
			}
			responses = append(responses, map[string]any{"toolCalls": []any{call}})
		}
		responses = append(responses, map[string]any{"text": fmt.Sprintf("done %d", k)})
	}
	data, _ := json.Marshal(map[string]any{"turns": responses})
	return data
}

// env is one run's directory: its SQLite store (the read models' too when the log is on
// Postgres), configuration, data directory, workspace and script; eventStore is the log's
// Postgres database, if it is there.
type env struct {
	dir, ws, script string
	eventStore      string
}

// Where a run's log is kept.
const (
	sqlite   = "sqlite"
	postgres = "postgres"
)

// newEnv prepares a run of w on store: a new SQLite file, or a new database on the test
// Postgres server (pgtest: the run skips without one, except under CI).
func newEnv(tb testing.TB, w workload, store string) env {
	tb.Helper()
	dir := tb.TempDir()
	e := env{dir: dir, ws: filepath.Join(dir, "ws"), script: filepath.Join(dir, "script.json")}
	if store == postgres {
		e.eventStore = pgtest.NewDatabase(tb)
	}
	must(tb, os.MkdirAll(e.ws, 0o755))
	must(tb, os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644))
	must(tb, os.WriteFile(filepath.Join(dir, "none.json"), []byte("{}"), 0o600))
	must(tb, os.WriteFile(e.script, w.script(), 0o600))
	return e
}

// vars is the process environment of a zuno command of this run: the caller's, less every
// ZUNO_* and XDG_* variable (a store URL there would move the run to another store), plus the
// run's.
func (e env) vars() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ZUNO_") && !strings.HasPrefix(kv, "XDG_") {
			out = append(out, kv)
		}
	}
	out = append(out, "ZUNO_DB="+filepath.Join(e.dir, "zuno.db"), "ZUNO_CONFIG="+filepath.Join(e.dir, "none.json"),
		"XDG_DATA_HOME="+filepath.Join(e.dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(e.dir, "config"),
		"ZUNO_MODEL=scripted:"+e.script)
	if e.eventStore != "" {
		out = append(out, "ZUNO_EVENTSTORE_URL="+e.eventStore)
	}
	return out
}

func (e env) command(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = e.ws
	cmd.Env = e.vars()
	return cmd
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// server is a running `zuno serve` process.
type server struct {
	url    string
	cmd    *exec.Cmd
	stderr *os.File
	// exited is closed once the process has exited and been waited for.
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
}

var listening = regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)`)

// startServer starts `zuno serve` on a port the kernel picks (--listen 127.0.0.1:0) and
// reads the address it prints, so no port is guessed.
func startServer(tb testing.TB, bin string, e env) *server {
	tb.Helper()
	cmd := e.command(bin, "serve", "--listen", "127.0.0.1:0")
	stderr, err := os.Create(filepath.Join(e.dir, "serve.stderr"))
	must(tb, err)
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	must(tb, err)
	must(tb, cmd.Start())
	s := &server{cmd: cmd, stderr: stderr, exited: make(chan struct{})}
	lines := bufio.NewScanner(stdout)
	found := make(chan string, 1)
	go func() {
		for lines.Scan() {
			if m := listening.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	select {
	case s.url = <-found:
	case <-s.exited:
		tb.Fatalf("zuno serve exited: %v\n%s", s.waitErr, s.log())
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		tb.Fatalf("zuno serve printed no address in 60 s\n%s", s.log())
	}
	tb.Cleanup(func() { s.stop(tb) })
	return s
}

// stop interrupts the server as a service manager would and waits for it (killing it after
// 30 s); it is safe to call twice.
func (s *server) stop(tb testing.TB) {
	s.stopOnce.Do(func() {
		defer s.stderr.Close()
		select {
		case <-s.exited:
			return
		default:
		}
		_ = s.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
			tb.Errorf("zuno serve did not stop within 30 s of SIGINT\n%s", s.log())
		}
	})
}

// log is the tail of the server's standard error, for a failure's message.
func (s *server) log() string {
	b, _ := os.ReadFile(s.stderr.Name())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// memory is a line of /proc/<pid>/status in MiB: VmHWM is the peak resident set, VmRSS the
// current one.
func (s *server) memory(field string) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, s.cmd.Process.Pid)
}

// cpu is the CPU time the server process has used so far (user and system, its own threads;
// the commands its tools ran are not in it), from /proc/<pid>/stat.
func (s *server) cpu() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command's name (in parentheses, which may hold spaces): utime and
	// stime are the 14th and 15th of the line, the 12th and 13th after it.
	_, rest, _ := strings.Cut(string(b), ") ")
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", s.cmd.Process.Pid, b)
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux platform Go
// supports.
const clockTicks = 100

// httpClient carries the drivers' requests and every stream: each stream holds a connection.
var httpClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}

// post sends a JSON body and returns the status and the answer.
func post(ctx context.Context, url string, body any) (int, []byte, error) {
	data, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return do(req)
}

func get(ctx context.Context, url string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	return do(req)
}

func do(req *http.Request) (int, []byte, error) {
	res, err := httpClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// turnStarted is a 202's body.
type turnStarted struct {
	SessionID string `json:"sessionId"`
	TurnID    string `json:"turnId"`
}

// sessionInfo is what GET /api/sessions/{id} says of the turns.
type sessionInfo struct {
	Turns []struct {
		TurnID string `json:"turnId"`
		Status string `json:"status"`
	} `json:"turns"`
}

// pollEvery is how often the drivers' one poller lists the sessions.
const pollEvery = 50 * time.Millisecond

// sessionRow is a row of GET /api/sessions (the read models): status is "open" while a turn
// runs, then how the latest turn finished; message_count counts the user's messages, one a
// turn.
type sessionRow struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Messages int    `json:"message_count"`
}

// lister is the drivers' one poller: every pollEvery it lists the sessions (GET
// /api/sessions, one query of the read models for all of them), and the drivers read what it
// saw. Drivers neither stream (the run without clients has no stream open at all) nor poll
// each session's GET /api/sessions/{id}, which folds the session's stream and would cost the
// server, at 16 sessions, more than the steps measured.
type lister struct {
	mu   sync.Mutex
	rows map[string]sessionRow
	err  error
}

func (l *lister) run(ctx context.Context, base string) {
	for ctx.Err() == nil {
		code, b, err := get(ctx, base+"/api/sessions?limit=1000")
		var page struct{ Sessions []sessionRow }
		if err == nil && code != http.StatusOK {
			err = fmt.Errorf("GET /api/sessions: status %d: %s", code, b)
		}
		if err == nil {
			err = json.Unmarshal(b, &page)
		}
		l.mu.Lock()
		if ctx.Err() == nil {
			l.err = err
		}
		l.rows = map[string]sessionRow{}
		for _, r := range page.Sessions {
			l.rows[r.ID] = r
		}
		l.mu.Unlock()
		_ = sleep(ctx, pollEvery)
	}
}

// waitTurns waits until the session's turn number k has finished, as the read models say.
func (l *lister) waitTurns(ctx context.Context, sid string, k int) error {
	for {
		l.mu.Lock()
		r, err := l.rows[sid], l.err
		l.mu.Unlock()
		if err != nil {
			return err
		}
		if r.Messages >= k && r.Status != "open" && r.Status != "" {
			return nil
		}
		if err := sleep(ctx, 5*time.Millisecond); err != nil {
			return err
		}
	}
}

// driveSession runs a session's turns one after another through the API: POST
// /api/sessions for the first, POST /api/sessions/{id}/messages for each next (sent again on
// 409 session_busy until the last turn has let go of the session: the same command id makes
// that safe). Each turn is waited for until the session list shows it finished, then its
// status is read from the session's own stream (GET /api/sessions/{id}) and must be
// completed. started is told the session's id after its first 202. It returns the session's
// id.
func driveSession(ctx context.Context, base string, sessions *lister, w workload, e env, i int, started func(sid string)) (string, error) {
	sid := ""
	for k := 1; k <= w.turns; k++ {
		body := map[string]any{"commandId": fmt.Sprintf("load-%d-%d", i, k), "prompt": fmt.Sprintf("turn %d", k)}
		url := base + "/api/sessions/" + sid + "/messages"
		if k == 1 {
			body["title"], body["directory"] = fmt.Sprintf("load %d", i), e.ws
			url = base + "/api/sessions"
		}
		var st turnStarted
		for {
			code, b, err := post(ctx, url, body)
			if err != nil {
				return sid, err
			}
			if code == http.StatusConflict && bytes.Contains(b, []byte(`"session_busy"`)) {
				if err := sleep(ctx, pollEvery); err != nil {
					return sid, err
				}
				continue
			}
			if code != http.StatusAccepted {
				return sid, fmt.Errorf("session %d turn %d: status %d: %s", i, k, code, b)
			}
			if err := json.Unmarshal(b, &st); err != nil {
				return sid, err
			}
			break
		}
		if k == 1 {
			sid = st.SessionID
			started(sid)
		}
		if err := sessions.waitTurns(ctx, sid, k); err != nil {
			return sid, fmt.Errorf("session %d turn %d: %w", i, k, err)
		}
		if err := requireCompleted(ctx, base, sid, st.TurnID); err != nil {
			return sid, fmt.Errorf("session %d turn %d: %w", i, k, err)
		}
	}
	return sid, nil
}

// requireCompleted reads the session from its stream and requires the turn to have
// completed.
func requireCompleted(ctx context.Context, base, sid, turnID string) error {
	code, b, err := get(ctx, base+"/api/sessions/"+sid)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("GET session: status %d: %s", code, b)
	}
	var info sessionInfo
	if err := json.Unmarshal(b, &info); err != nil {
		return err
	}
	for _, t := range info.Turns {
		if t.TurnID == turnID {
			if t.Status != "completed" {
				return fmt.Errorf("turn %s: status %q, want completed", turnID, t.Status)
			}
			return nil
		}
	}
	return fmt.Errorf("turn %s is not among the session's turns: %s", turnID, b)
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// logEvent is the part of an event (as the streams send it and `zuno events read --format
// json` prints it) that the checks and figures use.
type logEvent struct {
	Position uint64 `json:"position"`
	ID       string `json:"id"`
	Stream   string `json:"stream"`
	Type     string `json:"type"`
	Data     struct {
		Status string `json:"status"`
	} `json:"data"`
	Metadata struct {
		Time time.Time `json:"time"`
	} `json:"metadata"`
}

// received is one event as a client read it, and when.
type received struct {
	logEvent
	at time.Time
}

// sseClient is one client of a stream: it records every event it reads, and the time it
// finished reading the event's frame.
type sseClient struct {
	url string
	// session is the session whose stream it reads; empty for GET /api/events.
	session string

	mu        sync.Mutex
	connected time.Time // when the response's headers arrived
	got       []received
	err       error
}

// run reads the stream until ctx ends (then it returns nil) or the stream fails.
func (c *sseClient) run(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	res, err := httpClient.Do(req)
	if err != nil {
		return ignoreCancel(ctx, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		return fmt.Errorf("%s: status %d %s: %s", c.url, res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	c.mu.Lock()
	c.connected = time.Now()
	c.mu.Unlock()
	r := bufio.NewReaderSize(res.Body, 64<<10)
	var id, data string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return ignoreCancel(ctx, err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if data != "" {
				if err := c.record(id, data, time.Now()); err != nil {
					return err
				}
			}
			id, data = "", ""
		case strings.HasPrefix(line, "id: "):
			id = line[len("id: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		}
	}
}

// record keeps one frame: its id must be its event's position (the resume point).
func (c *sseClient) record(id, data string, at time.Time) error {
	ev, err := parseFrame(data)
	if err != nil {
		return fmt.Errorf("%s: frame %s: %w", c.url, id, err)
	}
	if id != strconv.FormatUint(ev.Position, 10) {
		return fmt.Errorf("%s: frame id %q for the event at position %d", c.url, id, ev.Position)
	}
	c.mu.Lock()
	c.got = append(c.got, received{ev, at})
	c.mu.Unlock()
	return nil
}

// parseFrame decodes what a client needs of a frame's event: the envelope before "data" and
// the metadata after it, not the data between (a prompt receipt is kilobytes). The clients
// run on the server's CPUs, and decoding every event whole, 64 times over, would charge the
// server's figures with the clients' work. The frame's members come in the order of
// docs/server.md ("position", "id", "stream", "revision", "type", "data", "metadata"), and
// no string of JSON holds an unescaped quote, so the first `,"data":` and the last
// `,"metadata":` are the members' own.
func parseFrame(data string) (logEvent, error) {
	var ev logEvent
	head, _, ok := strings.Cut(data, `,"data":`)
	meta := strings.LastIndex(data, `,"metadata":`)
	if !ok || meta < len(head) {
		return ev, fmt.Errorf("not an event: %.200s", data)
	}
	if err := json.Unmarshal([]byte(head+"}"), &ev); err != nil {
		return ev, err
	}
	if err := json.Unmarshal([]byte("{"+data[meta+1:]), &ev); err != nil {
		return ev, err
	}
	if ev.ID == "" || ev.Metadata.Time.IsZero() {
		return ev, fmt.Errorf("an event without its id or time: %.200s", data)
	}
	return ev, nil
}

func ignoreCancel(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// last is the position of the last event the client has read.
func (c *sseClient) last() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.got) == 0 {
		return 0
	}
	return c.got[len(c.got)-1].Position
}

// wants is the stream's filter as docs/server.md defines it: every event for GET
// /api/events; for a session's stream, the events of its session, inbox, background and
// work streams.
func (c *sseClient) wants(ev logEvent) bool {
	if c.session == "" {
		return true
	}
	for _, prefix := range []string{"session-", "inbox-", "bg-", "work-"} {
		if ev.Stream == prefix+c.session {
			return true
		}
	}
	return false
}

// readLog reads the whole log with `zuno events read --format json`, a process of its own
// beside the server: what the clients are checked against does not come through the
// server's streams.
func readLog(bin string, e env) ([]logEvent, error) {
	out, err := e.command(bin, "events", "read", "--format", "json").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("zuno events read: %v\n%s", err, ee.Stderr)
		}
		return nil, err
	}
	var log []logEvent
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var ev logEvent
		if err := dec.Decode(&ev); err == io.EOF {
			return log, nil
		} else if err != nil {
			return nil, err
		}
		log = append(log, ev)
	}
}

// settledLog reads the log until every turn has released its lease (the last event a turn
// writes, after its session shows it finished), so that nothing more will be appended.
func settledLog(ctx context.Context, bin string, e env, turns int) ([]logEvent, error) {
	for {
		log, err := readLog(bin, e)
		if err != nil {
			return nil, err
		}
		released := 0
		for _, ev := range log {
			if ev.Type == "session.turn.lease_released.1" {
				released++
			}
		}
		if released >= turns {
			return log, nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, fmt.Errorf("%d of %d leases released: %w", released, turns, err)
		}
	}
}

// checkExactlyOnce compares what a client read with the log: every event its stream
// matches, each once, in log order, and nothing else.
func checkExactlyOnce(c *sseClient, log []logEvent) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var want []logEvent
	for _, ev := range log {
		if c.wants(ev) {
			want = append(want, ev)
		}
	}
	for i := range max(len(want), len(c.got)) {
		switch {
		case i >= len(c.got):
			return fmt.Errorf("%s: read %d events of %d; the first missing is %d %s", c.url, len(c.got), len(want), want[i].Position, want[i].Type)
		case i >= len(want):
			return fmt.Errorf("%s: read %d events, the log has %d; extra: %d %s", c.url, len(c.got), len(want), c.got[i].Position, c.got[i].Type)
		case c.got[i].Position != want[i].Position || c.got[i].ID != want[i].ID || c.got[i].Stream != want[i].Stream ||
			c.got[i].Type != want[i].Type || !c.got[i].Metadata.Time.Equal(want[i].Metadata.Time):
			return fmt.Errorf("%s: event %d read is %d %s %s, the log's is %d %s %s", c.url, i, c.got[i].Position, c.got[i].ID, c.got[i].Type,
				want[i].Position, want[i].ID, want[i].Type)
		}
	}
	return nil
}

// waitCaughtUp waits until the client has read its stream's last event of log.
func waitCaughtUp(ctx context.Context, c *sseClient, log []logEvent) error {
	var end uint64
	for _, ev := range log {
		if c.wants(ev) {
			end = ev.Position
		}
	}
	for c.last() < end {
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		if err != nil {
			return err
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return fmt.Errorf("%s: at %d, the last event is at %d: %w", c.url, c.last(), end, err)
		}
	}
	return nil
}

// result is what one run measured.
type result struct {
	// latencies are, for every event a client read while it was connected, the time from
	// the event's metadata.time to the client having read its frame (see latency).
	latencies []time.Duration
	// first are, for every event read live, its latency to the first client that read it:
	// what the server's commit and wake-up cost, without what serving every client adds.
	first []time.Duration
	// steps are the step times read from the log (see stepTimes).
	steps []time.Duration
	// events is the log's length and elapsed the time from the first request to the last
	// turn's end; deliveries are the events all clients read.
	events, deliveries int
	elapsed            time.Duration
	// peakMB is the server's VmHWM at the end, idleMB its VmRSS once it listened.
	peakMB, idleMB float64
	// serverCPU is the CPU time the server used from the first request to the end.
	serverCPU time.Duration
}

// latency is an event's delivery latency to a client: from the event's metadata.time to the
// moment the client finished reading its frame, on the machine's one wall clock. The writer
// stamps metadata.time when it prepares the append that holds the event, just before the
// store commits it, so the figure is an upper bound of "from durable to received": it holds
// the commit (an fsync on SQLite), the server noticing the commit, reading the event back,
// encoding and flushing it, and the client reading it. Only events stamped after the
// client's stream opened count: a per-session client opens its stream after its session's
// first 202 and first reads what came before, which is catching up, not live delivery.
//
// It returns them by the event's log position.
func latencies(c *sseClient) map[uint64]time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[uint64]time.Duration{}
	for _, g := range c.got {
		if !g.Metadata.Time.Before(c.connected) {
			out[g.Position] = g.at.Sub(g.Metadata.Time)
		}
	}
	return out
}

// stepTimes are the steps of every turn in log, measured as BenchmarkStepOverhead
// (commands/turn) measures a step: from one provider request's start to the next's, within a
// turn. A step so holds the model's answer, the tool call, its result and the next prompt.
// The times are the metadata.time of the requests' started records: the turn calls the
// provider right after it has appended that record, so each is stamped one append before
// the sample BenchmarkStepOverhead takes, and their differences are the same steps.
func stepTimes(log []logEvent) []time.Duration {
	prev := map[string]time.Time{} // by stream: the current turn's last request start
	var out []time.Duration
	for _, ev := range log {
		switch {
		case ev.Type == "session.turn.started.1":
			delete(prev, ev.Stream)
		case ev.Type == "session.provider.request.1" && ev.Data.Status == "started":
			if p, ok := prev[ev.Stream]; ok {
				out = append(out, ev.Metadata.Time.Sub(p))
			}
			prev[ev.Stream] = ev.Metadata.Time
		}
	}
	return out
}

// quantile is the q-quantile of xs (nearest rank); xs is sorted in place.
func quantile(xs []time.Duration, q float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[min(len(xs)-1, int(q*float64(len(xs))))]
}
