package acp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// editorScript reads a file the editor has unsaved changes to, then in one response tries the
// routes the gates refuse (a protected path, a '..' escape the client rejects, an absolute
// path outside), runs a command (the client offers a terminal), writes the file, and reads it
// again.
const editorScript = `{"turns": [
  {"toolCalls": [{"id": "c_read", "name": "read", "arguments": {"path": "a.txt"}}]},
  {"toolCalls": [
    {"id": "c_hook", "name": "write", "arguments": {"path": ".git/hooks/pre-commit", "content": "evil\n"}},
    {"id": "c_zuno", "name": "write", "arguments": {"path": ".zuno/agents/evil.md", "content": "evil\n"}},
    {"id": "c_up", "name": "read", "arguments": {"path": "../outside/secret.txt"}},
    {"id": "c_link", "name": "read", "arguments": {"path": "out-link"}},
    {"id": "c_sh", "name": "shell", "arguments": {"command": "echo ran-under-zuno"}}
  ]},
  {"toolCalls": [{"id": "c_write", "name": "write", "arguments": {"path": "a.txt", "content": "written\n"}}]},
  {"toolCalls": [{"id": "c_reread", "name": "read", "arguments": {"path": "a.txt"}}]},
  {"text": "Done."}
]}`

// fsClient is how the raw client answers the agent's requests during a prompt: fs answered
// from buffers (writes kept there, unsaved, as an editor before it saves), permission
// requests rejected, anything else (a terminal) refused and recorded.
type fsClient struct {
	p       *peer
	buffers map[string]string
	// requests are the agent's requests, "method path-or-empty".
	requests []string
	params   []map[string]any
	// read, when set, answers fs/read_text_file instead of the buffers: the raw line to send
	// back, or "" to send nothing (a client that never answers).
	read func(id any, path string) string
}

func (c *fsClient) reply(id any, result any) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	c.p.send(string(b))
}

// prompt sends a prompt and serves the agent's requests until the prompt's answer.
func (c *fsClient) prompt(id int, sid, text string) map[string]any {
	c.p.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "session/prompt",
		"params": map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}}})
	c.p.send(string(b))
	for {
		m, _ := c.p.until(func(m map[string]any) bool {
			return m["method"] != nil && m["id"] != nil || m["method"] == nil && jsonID(m) == fmt.Sprint(id)
		})
		if m["method"] == nil {
			return m
		}
		method, _ := m["method"].(string)
		params, _ := m["params"].(map[string]any)
		path, _ := params["path"].(string)
		c.requests = append(c.requests, strings.TrimSpace(method+" "+path))
		c.params = append(c.params, params)
		switch method {
		case "fs/read_text_file":
			if c.read != nil {
				if line := c.read(m["id"], path); line != "" {
					c.p.send(line)
				}
				continue
			}
			// A forged answer first, to a request the agent never sent: it must be dropped.
			c.reply(9000+len(c.requests), map[string]any{"content": "FORGED\n"})
			text, ok := c.buffers[path]
			if !ok {
				disk, _ := os.ReadFile(path)
				text = string(disk)
			}
			c.reply(m["id"], map[string]any{"content": text})
		case "fs/write_text_file":
			c.buffers[path], _ = params["content"].(string)
			c.reply(m["id"], map[string]any{})
		case "session/request_permission":
			c.reply(m["id"], map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": "reject"}})
		default:
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m["id"], "error": map[string]any{"code": -32601, "message": "Method not found"}})
			c.p.send(string(b))
		}
	}
}

func initializeWith(p *peer, caps map[string]any) {
	p.t.Helper()
	resp, _ := p.call(1, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": caps})
	if resp["result"] == nil {
		p.t.Fatalf("initialize: %v", resp)
	}
}

var editorCaps = map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}, "terminal": true}

// settledCalls are the session's settled tool calls by call id.
func settledCalls(t *testing.T, w *world, sid string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, e := range w.events(sid) {
		if e.Type == "session.tool.settled.1" || e.Type == "session.tool.blocked.1" {
			d := e.data(t)
			d["type"] = e.Type
			out[d["callId"].(string)] = d
		}
	}
	return out
}

func details(d map[string]any) map[string]any {
	md, _ := d["metadata"].(map[string]any)
	det, _ := md["details"].(map[string]any)
	return det
}

// TestEditorFileSystem: a client that offers its file system and terminal (docs/acp.md, "The
// editor's file system and terminal"). A read shows the editor's buffer, not the disk; a
// write goes to the editor, not to the disk; the paths the gates refuse never reach the
// client; a forged answer is dropped; the command runs under Zuno, never in the client's
// terminal; and the log records the route.
func TestEditorFileSystem(t *testing.T) {
	w := newWorld(t, editorScript, unconfined, map[string]string{"a.txt": "on disk\n", ".git/hooks/pre-commit": "#!/bin/sh\n"})
	outside := filepath.Join(filepath.Dir(w.dir), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(w.dir, "out-link")); err != nil {
		t.Fatal(err)
	}
	p := w.acp()
	initializeWith(p, editorCaps)
	sid := newSession(p, 2, w.dir)
	aPath := filepath.Join(w.dir, "a.txt")
	c := &fsClient{p: p, buffers: map[string]string{aPath: "unsaved in the editor\n"}}
	resp := c.prompt(3, sid, "edit a.txt")
	if r, _ := resp["result"].(map[string]any); r["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v\n%s", resp, p.stderr)
	}

	want := []string{"fs/read_text_file " + aPath, "session/request_permission", "session/request_permission",
		"fs/read_text_file " + aPath, "fs/write_text_file " + aPath, "fs/read_text_file " + aPath}
	if strings.Join(c.requests, "\n") != strings.Join(want, "\n") {
		t.Errorf("the client was asked:\n%s\nwant:\n%s", strings.Join(c.requests, "\n"), strings.Join(want, "\n"))
	}
	for _, prm := range c.params {
		if s, ok := prm["sessionId"]; ok && s != sid {
			t.Errorf("a request for session %v, want %s", s, sid)
		}
	}
	if got, _ := os.ReadFile(aPath); string(got) != "on disk\n" {
		t.Errorf("the disk has %q: the write did not go to the editor alone", got)
	}
	if c.buffers[aPath] != "written\n" {
		t.Errorf("the editor's buffer has %q", c.buffers[aPath])
	}

	calls := settledCalls(t, w, sid)
	read := calls["c_read"]
	if out, _ := read["output"].(string); !strings.Contains(out, "unsaved in the editor") || strings.Contains(out, "on disk") || strings.Contains(out, "FORGED") {
		t.Errorf("the read showed:\n%s", out)
	}
	for _, id := range []string{"c_read", "c_write", "c_reread"} {
		if details(calls[id])["via"] != "editor" {
			t.Errorf("%s: details %v do not record the editor", id, details(calls[id]))
		}
	}
	if out, _ := calls["c_reread"]["output"].(string); !strings.Contains(out, "written") {
		t.Errorf("the second read showed:\n%s", out)
	}
	for id, code := range map[string]string{"c_hook": "protected_path", "c_zuno": "protected_path", "c_up": "denied", "c_link": "denied"} {
		d := calls[id]
		got, _ := d["errorCode"].(string)
		if got == "" {
			got, _ = d["category"].(string)
		}
		if got != code {
			t.Errorf("%s: %v, want %s", id, d, code)
		}
	}
	sh := calls["c_sh"]
	if out, _ := sh["output"].(string); sh["outcome"] != "completed" || !strings.Contains(out, "ran-under-zuno") {
		t.Errorf("the command: %v", sh)
	}
	if _, ok := details(sh)["via"]; ok {
		t.Errorf("the command claims a route: %v", details(sh))
	}
	if strings.Contains(string(must(os.ReadFile(filepath.Join(w.dir, ".git/hooks/pre-commit")))), "evil") {
		t.Error("the hook was written")
	}
	// The replay uses the recorded results: no editor, the same decisions.
	p.close()
	w.run("replay", "--session", sid, "--verify")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestEditorFileSystemFails: a client that advertises its file system and then errs, never
// answers, or answers beyond the frame limit. Each read is a typed error of the call, the
// disk's content is never shown in its place, and the turn goes on.
func TestEditorFileSystemFails(t *testing.T) {
	script := `{"turns": [
  {"toolCalls": [{"id": "c_err", "name": "read", "arguments": {"path": "a.txt"}}]},
  {"toolCalls": [{"id": "c_silent", "name": "read", "arguments": {"path": "a.txt"}}]},
  {"toolCalls": [{"id": "c_huge", "name": "read", "arguments": {"path": "a.txt"}}]},
  {"text": "Done."}
],
"sessions": [
  {"when": "write c.txt", "turns": [
    {"toolCalls": [{"id": "c_plan", "name": "write", "arguments": {"path": "c.txt", "content": "c\n"}}]},
    {"text": "Planned."}
  ]},
  {"when": "read the big file", "turns": [
    {"toolCalls": [{"id": "c_big", "name": "read", "arguments": {"path": "a.txt"}}]},
    {"toolCalls": [{"id": "c_write", "name": "write", "arguments": {"path": "b.txt", "content": "b\n"}}]},
    {"text": "Done."}
  ]}
]}`
	w := newWorld(t, script, unconfined, map[string]string{"a.txt": "on disk\n"})
	fs := map[string]any{"fs": map[string]any{"readTextFile": true, "writeTextFile": true}}

	// 1. A client that errs, stays silent, or answers beyond the frame limit, with a short
	// limit on its answers.
	p := w.acpArgs("--client-timeout", "2s")
	initializeWith(p, fs)
	sid := newSession(p, 2, w.dir)
	n := 0
	c := &fsClient{p: p, buffers: map[string]string{}}
	c.read = func(id any, _ string) string {
		n++
		switch n {
		case 1:
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"error":{"code":-32603,"message":"Internal error","data":{"reason":"buffer locked"}}}`, id)
		case 2:
			return ""
		default:
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"content":"%s"}}`, id, strings.Repeat("z", 9<<20))
		}
	}
	resp := c.prompt(3, sid, "read a.txt")
	if r, _ := resp["result"].(map[string]any); r["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v\n%s", resp, p.stderr)
	}
	p.close()
	calls := settledCalls(t, w, sid)
	for id, code := range map[string]string{"c_err": "editor_failed", "c_silent": "editor_timeout", "c_huge": "editor_timeout"} {
		d := calls[id]
		out, _ := d["output"].(string)
		if d["outcome"] != "error" || d["errorCode"] != code || strings.Contains(out, "on disk") {
			t.Errorf("%s: %v, want an error %s", id, d, code)
		}
	}
	if out, _ := calls["c_err"]["output"].(string); !strings.Contains(out, "buffer locked") {
		t.Errorf("the client's words are not in the result: %s", out)
	}

	// 2. A read-only agent (the plan mode) is not offered write, whatever the client accepts.
	p = w.acp()
	initializeWith(p, fs)
	c = &fsClient{p: p, buffers: map[string]string{}}
	planSID := newSession(p, 2, w.dir)
	if resp, _ := p.call(3, "session/set_mode", map[string]any{"sessionId": planSID, "modeId": "plan"}); resp["result"] == nil {
		t.Fatalf("set_mode: %v", resp)
	}
	c.prompt(4, planSID, "write c.txt")
	if d := settledCalls(t, w, planSID)["c_plan"]; d["type"] != "session.tool.blocked.1" {
		t.Errorf("the plan agent's write: %v", d)
	}
	if len(c.requests) > 0 {
		t.Errorf("the plan agent's turn asked the client: %v", c.requests)
	}

	// 3. A 3.2 MB answer: one window reaches the model.
	big := strings.Repeat(strings.Repeat("y", 79)+"\n", 40000)
	bigSID := newSession(p, 5, w.dir)
	c.buffers[filepath.Join(w.dir, "a.txt")] = big
	c.prompt(6, bigSID, "read the big file")
	calls = settledCalls(t, w, bigSID)
	bigCall := calls["c_big"]
	out, _ := bigCall["output"].(string)
	if bigCall["outcome"] != "completed" || len(out) > 60000 || details(bigCall)["size"] != float64(len(big)) {
		t.Errorf("the big read: outcome %v, %d bytes shown, details %v", bigCall["outcome"], len(out), details(bigCall))
	}
	// A new file: no read; the write goes to the editor.
	if d := calls["c_write"]; d["outcome"] != "completed" || details(d)["via"] != "editor" {
		t.Errorf("the write: %v", d)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "b.txt")); err == nil {
		t.Error("b.txt is on the disk: Zuno wrote it behind the editor")
	}
}

// editorSDKScript reads a.txt, writes it, runs a command (the client offers a terminal) and
// reads the file again.
const editorSDKScript = `{"turns": [
  {"toolCalls": [{"id": "c_read", "name": "read", "arguments": {"path": "a.txt"}}]},
  {"toolCalls": [{"id": "c_write", "name": "write", "arguments": {"path": "a.txt", "content": "written by the model\n"}}]},
  {"toolCalls": [{"id": "c_sh", "name": "shell", "arguments": {"command": "cat a.txt"}}]},
  {"toolCalls": [{"id": "c_reread", "name": "read", "arguments": {"path": "a.txt"}}]},
  {"text": "Done."}
]}`

// TestEditorFileSystemTypeScriptSDK serves the agent's fs requests with the official
// TypeScript client SDK (ops/testdeps/acp/fs.mjs), which checks them against the protocol's
// schema: the reads see the SDK client's buffer, the write lands in it and not on the disk
// (the command, run by Zuno, sees the disk), the terminal is never asked for, and the log
// records the route.
func TestEditorFileSystemTypeScriptSDK(t *testing.T) {
	node := needNode(t)
	w := newWorld(t, editorSDKScript, unconfined, map[string]string{"a.txt": "on disk\n"})
	out, stderr, err := runSDKScript(t, node, w, "fs.mjs")
	if err != nil {
		t.Fatalf("fs.mjs: %v\n%s", err, stderr)
	}
	var seen struct {
		SessionID string            `json:"sessionId"`
		Requests  []map[string]any  `json:"requests"`
		Buffers   map[string]string `json:"buffers"`
	}
	if err := json.Unmarshal(out, &seen); err != nil {
		t.Fatalf("the script's report: %v\n%s", err, out)
	}
	aPath := filepath.Join(w.dir, "a.txt")
	var methods []string
	for _, r := range seen.Requests {
		methods = append(methods, fmt.Sprint(r["method"], " ", r["path"]))
		if r["sessionId"] != seen.SessionID {
			t.Errorf("a request for another session: %v", r)
		}
	}
	want := []string{"fs/read_text_file " + aPath, "fs/read_text_file " + aPath, "fs/write_text_file " + aPath, "fs/read_text_file " + aPath}
	if strings.Join(methods, "\n") != strings.Join(want, "\n") {
		t.Errorf("the SDK client was asked:\n%s\nwant:\n%s", strings.Join(methods, "\n"), strings.Join(want, "\n"))
	}
	if seen.Buffers[aPath] != "written by the model\n" {
		t.Errorf("the editor's buffer: %q", seen.Buffers[aPath])
	}
	if got, _ := os.ReadFile(aPath); string(got) != "on disk\n" {
		t.Errorf("the disk: %q", got)
	}
	calls := settledCalls(t, w, seen.SessionID)
	if out, _ := calls["c_read"]["output"].(string); !strings.Contains(out, "unsaved in the editor") {
		t.Errorf("the read showed:\n%s", out)
	}
	if out, _ := calls["c_sh"]["output"].(string); !strings.Contains(out, "on disk") {
		t.Errorf("the command (Zuno's, on the disk) showed:\n%s", out)
	}
	if out, _ := calls["c_reread"]["output"].(string); !strings.Contains(out, "written by the model") {
		t.Errorf("the second read showed:\n%s", out)
	}
	for _, id := range []string{"c_read", "c_write", "c_reread"} {
		if details(calls[id])["via"] != "editor" {
			t.Errorf("%s does not record the editor: %v", id, details(calls[id]))
		}
	}
}
