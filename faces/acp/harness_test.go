package acp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zuno-run/zuno/adapters/pgtest"
)

// The tests drive the real `zuno acp` process, built once per test binary from cmd/zuno, over
// its standard input and output, on a real SQLite log in a temporary directory (the
// testscripts' environment: ZUNO_DB, XDG_CONFIG_HOME, XDG_DATA_HOME).

var (
	// buildFlags are go build's flags for the agent process (race_test.go adds -race).
	buildFlags []string
	buildOnce  sync.Once
	zunoBin    string
	buildErr   error
)

func zuno(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "zuno-acp-bin")
		if err != nil {
			buildErr = err
			return
		}
		zunoBin = filepath.Join(dir, "zuno")
		args := append(append([]string{"build"}, buildFlags...), "-o", zunoBin, "../../cmd/zuno")
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return zunoBin
}

// world is one store and one workspace: the environment every process of a test shares.
type world struct {
	t   testing.TB
	dir string // the workspace
	env []string
}

// newWorld makes a store, a workspace holding files, the scripted model and, when config is
// not empty, the global configuration file.
func newWorld(t testing.TB, script, config string, files map[string]string) *world {
	t.Helper()
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	data := filepath.Join(root, "data")
	for _, d := range []string{ws, data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	scriptPath := filepath.Join(root, "model.json")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if config != "" {
		files = maps.Clone(files)
		if files == nil {
			files = map[string]string{}
		}
		files["../config/zuno/zuno.json"] = config
	}
	for name, body := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "ZUNO_DB="+filepath.Join(data, "zuno.db"), "XDG_CONFIG_HOME="+filepath.Join(root, "config"),
		"XDG_DATA_HOME="+filepath.Join(data, "data"), "ZUNO_MODEL=scripted:"+scriptPath)
	return &world{t: t, dir: ws, env: env}
}

// onPostgres moves the world's log to a new database on the test Postgres server (the
// processes share it as several servers do); the read models follow the log's store.
func (w *world) onPostgres() *world {
	w.env = append(w.env, "ZUNO_EVENTSTORE_URL="+pgtest.NewDatabase(w.t))
	return w
}

// run runs a zuno command to its end and returns its standard output.
func (w *world) run(args ...string) string {
	w.t.Helper()
	cmd := exec.Command(zuno(w.t), args...)
	cmd.Dir, cmd.Env = w.dir, w.env
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		w.t.Fatalf("zuno %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	return string(out)
}

// peer is a raw JSON-RPC client of one `zuno acp` process: it writes lines as given and reads
// every message the agent sends.
type peer struct {
	t      testing.TB
	cmd    *exec.Cmd
	in     io.WriteCloser
	msgs   chan map[string]any
	stderr *strings.Builder
}

func (w *world) acp() *peer {
	w.t.Helper()
	return w.acpArgs()
}

// acpArgs starts `zuno acp` with more flags.
func (w *world) acpArgs(flags ...string) *peer {
	w.t.Helper()
	cmd := exec.Command(zuno(w.t), append([]string{"acp"}, flags...)...)
	cmd.Dir, cmd.Env = w.dir, w.env
	in, err := cmd.StdinPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	p := &peer{t: w.t, cmd: cmd, in: in, msgs: make(chan map[string]any, 1024), stderr: &strings.Builder{}}
	cmd.Stderr = &lockedBuilder{b: p.stderr}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unparsable": sc.Text()}
			}
			p.msgs <- m
		}
		close(p.msgs)
	}()
	w.t.Cleanup(p.close)
	return p
}

type lockedBuilder struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (p *peer) close() {
	p.in.Close()
	if p.cmd.ProcessState == nil { // unless a test waited for it already
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
	}
	if strings.Contains(p.stderr.String(), "DATA RACE") {
		p.t.Errorf("the agent process raced:\n%s", p.stderr)
	}
}

// send writes one line as given.
func (p *peer) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// call sends a request and returns its response, collecting what came before it.
func (p *peer) call(id int, method string, params any) (resp map[string]any, before []map[string]any) {
	p.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	p.send(string(b))
	return p.until(func(m map[string]any) bool { return m["method"] == nil && jsonID(m) == fmt.Sprint(id) })
}

// until reads messages until one matches, returning it and those before it.
func (p *peer) until(match func(map[string]any) bool) (map[string]any, []map[string]any) {
	p.t.Helper()
	var before []map[string]any
	timeout := time.After(60 * time.Second)
	for {
		select {
		case m, ok := <-p.msgs:
			if !ok {
				p.t.Fatalf("the agent closed its output; stderr:\n%s", p.stderr)
			}
			if match(m) {
				return m, before
			}
			before = append(before, m)
		case <-timeout:
			p.t.Fatalf("no matching message in 60s; had %v", before)
		}
	}
}

func jsonID(m map[string]any) string {
	switch id := m["id"].(type) {
	case float64:
		return fmt.Sprint(int(id))
	case nil:
		return "null"
	default:
		return fmt.Sprint(id)
	}
}

func errCode(m map[string]any) (int, string) {
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return 0, ""
	}
	code, _ := e["code"].(float64)
	data, _ := e["data"].(map[string]any)
	zc, _ := data["code"].(string)
	return int(code), zc
}

func initialize(p *peer) {
	p.t.Helper()
	resp, _ := p.call(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if resp["result"] == nil {
		p.t.Fatalf("initialize: %v", resp)
	}
}

func newSession(p *peer, id int, cwd string) string {
	p.t.Helper()
	resp, _ := p.call(id, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	r, _ := resp["result"].(map[string]any)
	sid, _ := r["sessionId"].(string)
	if sid == "" {
		p.t.Fatalf("session/new: %v", resp)
	}
	return sid
}

func withTimeout(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
