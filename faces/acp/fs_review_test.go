package acp_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEditorTwoSessionsAtOnce: two prompts of two sessions of one connection, each working
// in its own directory, both reading a.txt through the editor at the same time. The client
// holds the first fs request until the second has come, then answers them in the reverse
// order: each answer reaches the turn that asked (the request's id), each request names the
// session whose prompt made it and a path in that session's workspace, and neither session
// sees the other's buffer.
func TestEditorTwoSessionsAtOnce(t *testing.T) {
	script := `{"turns": [
  {"toolCalls": [{"id": "c_read", "name": "read", "arguments": {"path": "a.txt"}}]},
  {"toolCalls": [{"id": "c_read", "name": "read", "arguments": {"path": "a.txt"}}]},
  {"text": "Done."},
  {"text": "Done."}
]}`
	w := newWorld(t, script, unconfined, map[string]string{"one/a.txt": "disk one\n", "two/a.txt": "disk two\n"})
	p := w.acp()
	initializeWith(p, editorCaps)
	dirs := map[string]string{}
	sids := []string{newSession(p, 2, filepath.Join(w.dir, "one")), newSession(p, 3, filepath.Join(w.dir, "two"))}
	dirs[sids[0]], dirs[sids[1]] = filepath.Join(w.dir, "one"), filepath.Join(w.dir, "two")
	for i, sid := range sids {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 10 + i, "method": "session/prompt",
			"params": map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "read"}}}})
		p.send(string(b))
	}
	reply := func(id any, result any) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
		p.send(string(b))
	}
	var held []map[string]any
	done := map[string]bool{}
	for len(done) < 2 {
		m, _ := p.until(func(m map[string]any) bool {
			return m["method"] != nil && m["id"] != nil || m["method"] == nil && (jsonID(m) == "10" || jsonID(m) == "11")
		})
		if m["method"] == nil {
			if r, _ := m["result"].(map[string]any); r["stopReason"] != "end_turn" {
				t.Fatalf("prompt %s: %v\n%s", jsonID(m), m, p.stderr)
			}
			done[jsonID(m)] = true
			continue
		}
		params, _ := m["params"].(map[string]any)
		if m["method"] != "fs/read_text_file" {
			t.Fatalf("unexpected request %v", m)
		}
		sid, _ := params["sessionId"].(string)
		path, _ := params["path"].(string)
		if dirs[sid] == "" || filepath.Dir(path) != dirs[sid] {
			t.Fatalf("a read for session %q names %s, outside its workspace %s", sid, path, dirs[sid])
		}
		held = append(held, m)
		if len(held) < 2 {
			continue // the other session's read comes while this one waits
		}
		for i := len(held) - 1; i >= 0; i-- {
			prm := held[i]["params"].(map[string]any)
			reply(held[i]["id"], map[string]any{"content": fmt.Sprintf("buffer of %s\n", filepath.Base(filepath.Dir(prm["path"].(string))))})
		}
		held = nil
	}
	if len(held) != 0 {
		t.Fatalf("reads never answered: %v", held)
	}
	for _, sid := range sids {
		out, _ := settledCalls(t, w, sid)["c_read"]["output"].(string)
		mine, other := "buffer of "+filepath.Base(dirs[sid]), "buffer of one"
		if filepath.Base(dirs[sid]) == "one" {
			other = "buffer of two"
		}
		if !strings.Contains(out, mine) || strings.Contains(out, other) || strings.Contains(out, "disk one") || strings.Contains(out, "disk two") {
			t.Errorf("session %s's read showed:\n%s", sid, out)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w.dir, "one/a.txt")); string(b) != "disk one\n" {
		t.Errorf("the disk changed: %q", b)
	}
}
