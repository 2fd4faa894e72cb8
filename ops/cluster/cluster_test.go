package cluster_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"github.com/zuno-run/zuno/adapters/pgtest"
)

// The deployment of docs/server.md, "Several servers on one store": two `zuno serve` and a
// `zuno worker` on one Postgres (event store, read models and durable bus), clients driving
// sessions through either server, and one server killed with SIGKILL at random and started
// again. What must hold: no turn lost (every session's turn settles), no call run twice, no
// fact recorded twice, and the read models equal to a rebuild from the log.

// script is every session's model: two shell calls, each appending a line of its own to a
// file in the session's workspace, so a call run twice shows as a repeated line.
const script = `{"turns":[
  {"toolCalls":[{"id":"one","name":"shell","arguments":{"command":"echo one >> calls.log"}}]},
  {"toolCalls":[{"id":"two","name":"shell","arguments":{"command":"echo two >> calls.log"}}]},
  {"text":"done"}]}`

func TestTwoServersAndAWorkerSurviveKills(t *testing.T) {
	sessions := 200
	if testing.Short() {
		sessions = 40
	}
	c := newCluster(t)
	c.startWorker()
	c.startServer(0)
	c.startServer(1)

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var kills [3]atomic.Int32 // server 0, server 1, the worker
	killerDone := make(chan struct{})
	go func() { defer close(killerDone); c.killAtRandom(ctx, &kills) }()

	results := make([]sessionResult, sessions)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = c.drive(t, i)
		}()
	}
	wg.Wait()
	stop()
	<-killerDone
	resent := 0
	for _, r := range results {
		resent += r.errors
	}
	t.Logf("%d sessions; SIGKILLs: server 0 ×%d, server 1 ×%d, worker ×%d; %d requests sent again after no answer",
		sessions, kills[0].Load(), kills[1].Load(), kills[2].Load(), resent)

	c.checkNoTurnLost(t, results)
	c.checkNoCallRerun(t, results)
	c.checkNoDuplicateFacts(t)
	c.stopAll()
	c.checkReplyQueuesCleaned(t)
	c.checkRebuildEqualsLive(t)
}

// checkReplyQueuesCleaned: every killed process left its reply queue behind, and the
// processes that started after it dropped them (docs/storage.md, "Reply queues"); the ones
// stopped cleanly dropped their own. None is left.
func (c *cluster) checkReplyQueuesCleaned(t *testing.T) {
	var tables, registered int
	if err := c.db.QueryRow(`SELECT count(*) FROM pg_tables WHERE tablename LIKE 'watermill_zuno_replies_%'`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if err := c.db.QueryRow(`SELECT count(*) FROM zuno_bus_reply_queues`).Scan(&registered); err != nil {
		t.Fatal(err)
	}
	if tables != 0 || registered != 0 {
		t.Errorf("%d reply queue tables and %d registered queues left after every process stopped", tables, registered)
	}
}

type cluster struct {
	t     *testing.T
	bin   string
	dir   string
	env   []string
	db    *sql.DB
	ports [2]string

	mu      sync.Mutex
	servers [2]*proc
	worker  *proc
}

// proc is one process of the deployment; done closes when it has exited.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func newCluster(t *testing.T) *cluster {
	url := pgtest.NewDatabase(t)
	dir := t.TempDir()
	c := &cluster{t: t, bin: zunoBin, dir: dir}
	if err := os.WriteFile(filepath.Join(dir, "script.json"), []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	c.env = append(os.Environ(),
		"ZUNO_EVENTSTORE_URL="+url, "ZUNO_BUS_URL="+url,
		"ZUNO_MODEL=scripted:"+filepath.Join(dir, "script.json"),
		"ZUNO_TURN_LEASE=2s",
		"HOME="+dir, "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c.db = db
	for i := range c.ports {
		c.ports[i] = freePort(t)
	}
	t.Cleanup(c.stopAll)
	return c
}

// TestMain builds the binary the deployment runs, once: these are separate processes,
// killed for real.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zuno-cluster-bin-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	zunoBin = filepath.Join(dir, "zuno")
	out, err := exec.Command("go", "build", "-o", zunoBin, "github.com/zuno-run/zuno/cmd/zuno").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var zunoBin string

// freePort is a loopback port free now, below Linux's ephemeral range (32768 and up), so
// no other process's ":0" listener or outgoing connection takes it while a killed server is
// down: the servers are restarted on the same address.
func freePort(t *testing.T) string {
	for range 200 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		l, err := net.Listen("tcp", addr)
		if err == nil {
			l.Close()
			return addr
		}
	}
	t.Fatal("no free port between 20000 and 32000")
	return ""
}

func (c *cluster) start(name string, args ...string) *proc {
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env
	cmd.Dir = c.dir
	log, err := os.OpenFile(filepath.Join(c.dir, name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	go func() { cmd.Wait(); log.Close(); close(p.done) }()
	return p
}

func (c *cluster) startWorker() {
	p := c.start("worker", "worker")
	c.mu.Lock()
	c.worker = p
	c.mu.Unlock()
}

// startServer starts server i and waits until it answers.
func (c *cluster) startServer(i int) {
	p := c.start(fmt.Sprintf("serve%d", i), "serve", "--listen", c.ports[i])
	c.mu.Lock()
	c.servers[i] = p
	c.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + c.ports[i] + "/api/sessions?limit=1")
		if err == nil {
			resp.Body.Close()
			return
		}
		select {
		case <-p.done:
			log, _ := os.ReadFile(c.logPath(fmt.Sprintf("serve%d", i)))
			c.t.Errorf("server %d exited at start:\n%s", i, log)
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
	c.t.Errorf("server %d did not answer within 30s; see %s", i, c.logPath(fmt.Sprintf("serve%d", i)))
}

func (c *cluster) logPath(name string) string { return filepath.Join(c.dir, name+".log") }

// killAtRandom kills one process (either server or the worker) with SIGKILL every second or
// two, mid-turn or mid-command as likely as not, and starts it again on the same address.
func (c *cluster) killAtRandom(ctx context.Context, kills *[3]atomic.Int32) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(800+rand.IntN(1200)) * time.Millisecond):
		}
		i := rand.IntN(3)
		c.mu.Lock()
		p := c.worker
		if i < 2 {
			p = c.servers[i]
		}
		c.mu.Unlock()
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
		kills[i].Add(1)
		time.Sleep(200 * time.Millisecond)
		if i < 2 {
			c.startServer(i)
		} else {
			c.startWorker()
		}
	}
}

// stopAll stops every process of the deployment and waits for each.
func (c *cluster) stopAll() {
	c.mu.Lock()
	procs := append(c.servers[:], c.worker)
	c.mu.Unlock()
	for _, p := range procs {
		if p != nil {
			p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for _, p := range procs {
		if p == nil {
			continue
		}
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	}
}

// sessionResult is what a client learnt of its session.
type sessionResult struct {
	index            int
	workspace        string
	sessionID        string
	turnID           string
	status           string
	attempts, errors int
}

// drive creates session i with its turn through either server, sending the same command id
// again (to the other server) whenever an answer does not come, and waits for the turn to
// settle.
func (c *cluster) drive(t *testing.T, i int) sessionResult {
	res := sessionResult{index: i, workspace: filepath.Join(c.dir, "ws", fmt.Sprint(i))}
	if err := os.MkdirAll(res.workspace, 0o755); err != nil {
		t.Error(err)
		return res
	}
	body, _ := json.Marshal(map[string]string{"commandId": fmt.Sprintf("create-%d", i), "prompt": "append the lines", "directory": res.workspace})
	deadline := time.Now().Add(2 * time.Minute)
	for res.sessionID == "" {
		if time.Now().After(deadline) {
			t.Errorf("session %d: no 202 after %d attempts", i, res.attempts)
			return res
		}
		server := c.ports[(i+res.attempts)%2]
		res.attempts++
		var created struct {
			SessionID, TurnID string
			Error             *struct{ Code, Message string }
		}
		status, err := call("POST", "http://"+server+"/api/sessions", body, &created)
		switch {
		case err != nil || status >= 500:
			res.errors++
			time.Sleep(100 * time.Millisecond)
		case status == http.StatusAccepted:
			res.sessionID, res.turnID = created.SessionID, created.TurnID
		default:
			t.Errorf("session %d: POST answered %d %+v", i, status, created.Error)
			return res
		}
	}
	for n := 0; time.Now().Before(deadline); n++ {
		var info struct {
			Turns []struct{ TurnID, Status string }
		}
		status, err := call("GET", "http://"+c.ports[n%2]+"/api/sessions/"+res.sessionID, nil, &info)
		if err == nil && status == http.StatusOK && len(info.Turns) > 0 && info.Turns[0].Status != "open" {
			res.status = info.Turns[0].Status
			return res
		}
		time.Sleep(100 * time.Millisecond)
	}
	return res
}

var client = &http.Client{Timeout: 10 * time.Second}

func call(method, url string, body []byte, out any) (int, error) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil && resp.StatusCode != http.StatusNoContent {
		return resp.StatusCode, err
	}
	return resp.StatusCode, nil
}

// checkNoTurnLost: every session was created once, and its one turn settled (finished, or
// recovered after its server was killed), none left open.
func (c *cluster) checkNoTurnLost(t *testing.T, results []sessionResult) {
	outcomes := map[string]int{}
	for _, r := range results {
		if r.sessionID == "" || r.status == "" {
			t.Errorf("session %d (%s): lost: turn %s never settled (status %q)", r.index, r.sessionID, r.turnID, r.status)
			continue
		}
		outcomes[r.status]++
	}
	t.Logf("turn outcomes: %v", outcomes)
	var turns, finished int
	err := c.db.QueryRow(`SELECT count(*) FILTER (WHERE type = 'session.turn.started.1'),
		count(*) FILTER (WHERE type = 'session.turn.finished.1') FROM event_log`).Scan(&turns, &finished)
	if err != nil {
		t.Fatal(err)
	}
	if turns != len(results) || finished != len(results) {
		t.Errorf("the log holds %d turns started and %d finished; want %d of each", turns, finished, len(results))
	}
}

// checkNoCallRerun: a call's line is in its workspace at most once, and exactly once when the
// log says the call completed; an uncertain call was never run again.
func (c *cluster) checkNoCallRerun(t *testing.T, results []sessionResult) {
	settled := map[string]string{} // session/call -> outcome
	rows, err := c.db.Query(`SELECT stream, coalesce(data::jsonb->>'callId', ''), coalesce(data::jsonb->>'outcome', '')
		FROM event_log WHERE type = 'session.tool.settled.1'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var stream, call, outcome string
		if err := rows.Scan(&stream, &call, &outcome); err != nil {
			t.Fatal(err)
		}
		settled[strings.TrimPrefix(stream, "session-")+"/"+call] = outcome
	}
	uncertain := 0
	for _, r := range results {
		data, _ := os.ReadFile(filepath.Join(r.workspace, "calls.log"))
		lines := map[string]int{}
		for _, l := range strings.Fields(string(data)) {
			lines[l]++
		}
		for _, call := range []string{"one", "two"} {
			outcome := settled[r.sessionID+"/"+call]
			if outcome == "uncertain" {
				uncertain++
			}
			switch {
			case lines[call] > 1:
				t.Errorf("session %s: call %s ran %d times", r.sessionID, call, lines[call])
			case outcome == "completed" && lines[call] != 1:
				t.Errorf("session %s: call %s completed but its line is there %d times", r.sessionID, call, lines[call])
			}
		}
	}
	t.Logf("%d calls settled uncertain after a kill", uncertain)
}

// checkNoDuplicateFacts: each fact the log keeps once is there once: a session created, a
// turn started and finished, a call started and settled.
func (c *cluster) checkNoDuplicateFacts(t *testing.T) {
	rows, err := c.db.Query(`SELECT type, stream, coalesce(data::jsonb->>'turnId', ''), coalesce(data::jsonb->>'callId', ''), count(*)
		FROM event_log
		WHERE type IN ('session.created.1', 'session.turn.started.1', 'session.turn.finished.1', 'session.tool.started.1', 'session.tool.settled.1')
		GROUP BY 1, 2, 3, 4 HAVING count(*) > 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var typ, stream, turn, call string
		var n int
		if err := rows.Scan(&typ, &stream, &turn, &call, &n); err != nil {
			t.Fatal(err)
		}
		t.Errorf("%s recorded %d times in %s (turn %s, call %s)", typ, n, stream, turn, call)
	}
}

// checkRebuildEqualsLive: zuno verify replays the whole log into a scratch read model and
// compares it with the live one the servers and the worker kept.
func (c *cluster) checkRebuildEqualsLive(t *testing.T) {
	cmd := exec.Command(c.bin, "verify")
	cmd.Env, cmd.Dir = c.env, c.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("zuno verify: %v\n%s", err, out)
	}
}

// slowScript is the model of TestOneTurnAtATimeAcrossServers: a session whose first message
// says "slow" runs a command long enough to be caught running.
const slowScript = `{"turns":[{"text":"quick"}],
 "sessions":[{"when":"slow","turns":[
  {"toolCalls":[{"id":"nap","name":"shell","arguments":{"command":"sleep 20; echo woke >> calls.log"}}]},
  {"text":"rested"}]}]}`

// A turn runs in one process at a time: the session's lease in the log binds the other
// server, the same command sent to it runs nothing again, and an abort sent to it stops the
// turn where it runs.
func TestOneTurnAtATimeAcrossServers(t *testing.T) {
	c := newCluster(t)
	if err := os.WriteFile(filepath.Join(c.dir, "script.json"), []byte(slowScript), 0o600); err != nil {
		t.Fatal(err)
	}
	c.startWorker()
	c.startServer(0)
	c.startServer(1)
	a, b := "http://"+c.ports[0], "http://"+c.ports[1]
	ws := filepath.Join(c.dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}

	first, _ := json.Marshal(map[string]string{"commandId": "slow-1", "prompt": "slow work", "directory": ws})
	var created struct{ SessionID, TurnID string }
	if status, err := call("POST", a+"/api/sessions", first, &created); err != nil || status != http.StatusAccepted {
		t.Fatalf("POST to server 0: %d %v", status, err)
	}
	c.waitFor(t, `SELECT count(*) FROM event_log WHERE type = 'session.tool.started.1'`, 1)

	// The same command through the other server: the same ids, nothing run again.
	var again struct{ SessionID, TurnID string }
	if status, err := call("POST", b+"/api/sessions", first, &again); err != nil || status != http.StatusAccepted || again != created {
		t.Errorf("the same command through server 1: %d %+v %v; want 202 %+v", status, again, err, created)
	}
	// Another turn of the session through the other server: refused while the lease lives.
	next, _ := json.Marshal(map[string]string{"commandId": "next-1", "prompt": "more"})
	var refused struct{ Error struct{ Code string } }
	if status, err := call("POST", b+"/api/sessions/"+created.SessionID+"/messages", next, &refused); err != nil ||
		status != http.StatusConflict || refused.Error.Code != "session_busy" {
		t.Errorf("a second turn through server 1: %d %+v %v; want 409 session_busy", status, refused, err)
	}
	// An abort through the other server stops the turn in server 0.
	var aborted map[string]any
	if status, err := call("POST", b+"/api/sessions/"+created.SessionID+"/abort", nil, &aborted); err != nil || status != http.StatusAccepted {
		t.Errorf("abort through server 1: %d %v %v", status, aborted, err)
	}
	start := time.Now()
	c.waitFor(t, `SELECT count(*) FROM event_log WHERE type = 'session.turn.finished.1' AND data::jsonb->>'reason' = 'interrupted'`, 1)
	t.Logf("the turn stopped %v after the abort", time.Since(start).Round(time.Millisecond))
	var turns int
	c.db.QueryRow(`SELECT count(*) FROM event_log WHERE type = 'session.turn.started.1'`).Scan(&turns)
	if turns != 1 {
		t.Errorf("%d turns started; want 1", turns)
	}
	if data, _ := os.ReadFile(filepath.Join(ws, "calls.log")); len(data) > 0 {
		t.Errorf("the interrupted command finished anyway: %q", data)
	}
}

// waitFor polls a count over the log until it reaches want (the processes write it).
func (c *cluster) waitFor(t *testing.T, query string, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n int
		if err := c.db.QueryRow(query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d after 30s, want %d", query, n, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// steerScript: a turn of two slow steps, so a steer sent meanwhile lands between them.
const steerScript = `{"turns":[
  {"toolCalls":[{"id":"one","name":"shell","arguments":{"command":"sleep 2; echo one"}}]},
  {"toolCalls":[{"id":"two","name":"shell","arguments":{"command":"sleep 1; echo two"}}]},
  {"text":"done"}]}`

// A steer sent to the other server reaches the turn where it runs, at that turn's next
// tool-safe boundary: the process running the turn learns of the admission from the log.
func TestSteerReachesATurnInAnotherServer(t *testing.T) {
	c := newCluster(t)
	if err := os.WriteFile(filepath.Join(c.dir, "script.json"), []byte(steerScript), 0o600); err != nil {
		t.Fatal(err)
	}
	c.startWorker()
	c.startServer(0)
	c.startServer(1)
	ws := filepath.Join(c.dir, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	start, _ := json.Marshal(map[string]string{"commandId": "steered-1", "prompt": "work slowly", "directory": ws})
	var created struct{ SessionID, TurnID string }
	if status, err := call("POST", "http://"+c.ports[0]+"/api/sessions", start, &created); err != nil || status != http.StatusAccepted {
		t.Fatalf("POST to server 0: %d %v", status, err)
	}
	c.waitFor(t, `SELECT count(*) FROM event_log WHERE type = 'session.tool.started.1'`, 1)

	steer, _ := json.Marshal(map[string]any{"commandId": "steer-1", "prompt": "also mind the tests", "steer": true})
	var steered struct{ Delivery, InputID string }
	if status, err := call("POST", "http://"+c.ports[1]+"/api/sessions/"+created.SessionID+"/messages", steer, &steered); err != nil ||
		status != http.StatusAccepted || steered.Delivery != "steering" {
		t.Fatalf("steer through server 1: %d %+v %v", status, steered, err)
	}
	c.waitFor(t, `SELECT count(*) FROM event_log WHERE type = 'session.turn.finished.1'`, 1)

	// The steer is a user message of the running turn: after its start, before its end.
	var started, message, finished int64
	err := c.db.QueryRow(`SELECT
		(SELECT position FROM event_log WHERE type = 'session.turn.started.1'),
		coalesce((SELECT position FROM event_log WHERE type = 'session.user_message.appended.1' AND data::jsonb->>'inputId' = $1), 0),
		(SELECT position FROM event_log WHERE type = 'session.turn.finished.1')`, steered.InputID).Scan(&started, &message, &finished)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("turn from %d to %d, steer message at %d", started, finished, message)
	if !(started < message && message < finished) {
		t.Errorf("the steer's message at %d; the turn ran from %d to %d", message, started, finished)
	}
	var turns int
	c.db.QueryRow(`SELECT count(*) FROM event_log WHERE type = 'session.turn.started.1'`).Scan(&turns)
	if turns != 1 {
		t.Errorf("%d turns; the steer should have joined the running one", turns)
	}
}
