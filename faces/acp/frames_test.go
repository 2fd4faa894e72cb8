package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// The frame guard's table of attacks: every spelling of a line that is not a JSON-RPC 2.0
// message gets the error JSON-RPC 2.0 names, with the request's id when it can be read; every
// message the protocol sends passes untouched.
func TestCheckFrame(t *testing.T) {
	cases := []struct {
		name, line string
		code       int    // 0: passes
		id         string // the error's id
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`, 0, ""},
		{"request with a string id", `{"jsonrpc":"2.0","id":"a","method":"session/new","params":{}}`, 0, ""},
		{"request with a null id", `{"jsonrpc":"2.0","id":null,"method":"x"}`, 0, ""},
		{"request without params", `{"jsonrpc":"2.0","id":1,"method":"x"}`, 0, ""},
		{"notification", `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`, 0, ""},
		{"result", `{"jsonrpc":"2.0","id":3,"result":{"outcome":{"outcome":"cancelled"}}}`, 0, ""},
		{"error response", `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"x"}}`, 0, ""},
		{"with spaces and CR", " {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"} \r", 0, ""},

		{"not JSON", `not json`, codeParseError, "null"},
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"initialize"`, codeParseError, "null"},
		{"two values", `{"jsonrpc":"2.0","id":1,"method":"x"} {}`, codeParseError, "null"},
		{"trailing comma", `{"jsonrpc":"2.0","id":1,"method":"x",}`, codeParseError, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"initialize"}]`, codeInvalidRequest, "null"},
		{"empty batch", `[]`, codeInvalidRequest, "null"},
		{"number", `42`, codeInvalidRequest, "null"},
		{"string", `"initialize"`, codeInvalidRequest, "null"},
		{"null", `null`, codeInvalidRequest, "null"},
		{"empty object", `{}`, codeInvalidRequest, "null"},
		{"no jsonrpc", `{"id":7,"method":"initialize"}`, codeInvalidRequest, "7"},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":7,"method":"initialize"}`, codeInvalidRequest, "7"},
		{"jsonrpc a number", `{"jsonrpc":2.0,"id":7,"method":"initialize"}`, codeInvalidRequest, "7"},
		{"id an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`, codeInvalidRequest, "null"},
		{"id an array", `{"jsonrpc":"2.0","id":[1],"method":"x"}`, codeInvalidRequest, "null"},
		{"id a boolean", `{"jsonrpc":"2.0","id":true,"method":"x"}`, codeInvalidRequest, "null"},
		{"method a number", `{"jsonrpc":"2.0","id":7,"method":3}`, codeInvalidRequest, "7"},
		{"method empty", `{"jsonrpc":"2.0","id":7,"method":""}`, codeInvalidRequest, "7"},
		{"method null", `{"jsonrpc":"2.0","id":7,"method":null}`, codeInvalidRequest, "7"},
		{"params a string", `{"jsonrpc":"2.0","id":7,"method":"x","params":"p"}`, codeInvalidRequest, "7"},
		{"params a number", `{"jsonrpc":"2.0","id":7,"method":"x","params":1}`, codeInvalidRequest, "7"},
		{"params null", `{"jsonrpc":"2.0","id":7,"method":"x","params":null}`, codeInvalidRequest, "7"},
		{"request with a result", `{"jsonrpc":"2.0","id":7,"method":"x","result":{}}`, codeInvalidRequest, "7"},
		{"request with an error", `{"jsonrpc":"2.0","id":7,"method":"x","error":{"code":1,"message":"m"}}`, codeInvalidRequest, "7"},
		{"response without an id", `{"jsonrpc":"2.0","result":{}}`, codeInvalidRequest, "null"},
		{"response with both", `{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"m"}}`, codeInvalidRequest, "7"},
		{"response with neither", `{"jsonrpc":"2.0","id":7}`, codeInvalidRequest, "7"},
		{"error without a code", `{"jsonrpc":"2.0","id":7,"error":{"message":"m"}}`, codeInvalidRequest, "7"},
		{"error without a message", `{"jsonrpc":"2.0","id":7,"error":{"code":1}}`, codeInvalidRequest, "7"},
		{"error a string", `{"jsonrpc":"2.0","id":7,"error":"bad"}`, codeInvalidRequest, "7"},
		{"method twice", `{"jsonrpc":"2.0","method":0,"method":"x"}`, codeInvalidRequest, "null"},
		{"id twice", `{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}`, codeInvalidRequest, "null"},
		{"string id kept", `{"jsonrpc":"2.0","id":"r-1","method":3}`, codeInvalidRequest, `"r-1"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fe := checkFrame([]byte(c.line))
			if c.code == 0 {
				if fe != nil {
					t.Fatalf("refused a valid message: %+v", fe)
				}
				return
			}
			if fe == nil {
				t.Fatalf("passed %s", c.line)
			}
			var resp struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			b := fe.Response()
			if !bytes.HasSuffix(b, []byte("\n")) || bytes.Count(b, []byte("\n")) != 1 {
				t.Fatalf("the response is not one line: %q", b)
			}
			if err := json.Unmarshal(b, &resp); err != nil {
				t.Fatal(err)
			}
			if resp.JSONRPC != "2.0" || resp.Error.Code != c.code || string(resp.ID) != c.id {
				t.Fatalf("response %s, want code %d id %s", b, c.code, c.id)
			}
		})
	}
}

// The guard answers each bad line where it stands and passes every good one in order, however
// they are mixed: nothing before or after a bad line is lost. An over-long line is answered
// and skipped to its end.
func TestGuardLosesNothing(t *testing.T) {
	good := func(i int) string { return `{"jsonrpc":"2.0","id":` + string(rune('0'+i)) + `,"method":"m"}` }
	huge := `{"jsonrpc":"2.0","id":9,"method":"m","params":{"x":"` + strings.Repeat("a", MaxFrame) + `"}}`
	in := strings.Join([]string{good(1), "garbage", "", good(2), "[1,2]", huge, good(3), `{"jsonrpc":"2.0"`, good(4)}, "\n")
	passed, answered := runGuard(t, in)
	if want := []string{good(1), good(2), good(3), good(4)}; strings.Join(passed, "\n") != strings.Join(want, "\n") {
		t.Errorf("passed %q, want %q", passed, want)
	}
	var codes []int
	for _, a := range answered {
		var r struct {
			Error struct{ Code int } `json:"error"`
		}
		if err := json.Unmarshal([]byte(a), &r); err != nil {
			t.Fatalf("answer %q: %v", a, err)
		}
		codes = append(codes, r.Error.Code)
	}
	if want := []int{codeParseError, codeInvalidRequest, codeInvalidRequest, codeParseError}; !equalInts(codes, want) {
		t.Errorf("answered %v, want %v", codes, want)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// runGuard feeds in through the guard and returns the lines it passed and those it answered.
func runGuard(t testing.TB, in string) (passed, answered []string) {
	pr, pw := io.Pipe()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 2*MaxFrame)
		for sc.Scan() {
			passed = append(passed, sc.Text())
		}
		close(done)
	}()
	guard(strings.NewReader(in), pw, &out, func(*frameError) {})
	<-done
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if l != "" {
			answered = append(answered, l)
		}
	}
	return passed, answered
}

// FuzzCheckFrame: whatever a line holds, the guard either passes a JSON-RPC 2.0 message the
// library can route (a request or notification with a method, or a response with an id and
// one of result and error) or answers one line of JSON-RPC error; it never panics.
func FuzzCheckFrame(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, `{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}`, `[{}]`, `{"jsonrpc":"2.0","id":{},"method":"x"}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1e999,\"method\":\"x\"}", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fe := checkFrame(line)
		if fe != nil {
			var r struct {
				JSONRPC string             `json:"jsonrpc"`
				ID      json.RawMessage    `json:"id"`
				Error   struct{ Code int } `json:"error"`
			}
			b := fe.Response()
			if err := json.Unmarshal(b, &r); err != nil || r.JSONRPC != "2.0" || (r.Error.Code != codeParseError && r.Error.Code != codeInvalidRequest) {
				t.Fatalf("answer %q to %q", b, line)
			}
			if bytes.Count(b, []byte("\n")) != 1 {
				t.Fatalf("answer %q is not one line", b)
			}
			return
		}
		var m struct {
			JSONRPC string           `json:"jsonrpc"`
			ID      *json.RawMessage `json:"id"`
			Method  string           `json:"method"`
			Result  json.RawMessage  `json:"result"`
			Error   json.RawMessage  `json:"error"`
		}
		if err := json.Unmarshal(bytes.TrimSpace(line), &m); err != nil {
			t.Fatalf("passed %q, which does not decode: %v", line, err)
		}
		if m.JSONRPC != "2.0" || (m.Method == "" && (m.ID == nil || (m.Result == nil) == (m.Error == nil))) {
			t.Fatalf("passed %q, which is no JSON-RPC 2.0 message", line)
		}
	})
}

// FuzzGuard: any byte stream comes out as lines the library reads and one answer per bad
// line, each answer one line of JSON; no line is both, none is dropped.
func FuzzGuard(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\"}\nx\n\n[1]\n"))
	f.Add([]byte("\r\n\x00{\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		passed, answered := runGuard(t, string(in))
		nonBlank := 0
		for _, l := range strings.Split(string(in), "\n") {
			if strings.TrimSpace(l) != "" {
				nonBlank++
			}
		}
		if len(passed)+len(answered) != nonBlank {
			t.Fatalf("%d lines passed and %d answered of %d", len(passed), len(answered), nonBlank)
		}
		for _, a := range answered {
			if !json.Valid([]byte(a)) {
				t.Fatalf("answer %q is not JSON", a)
			}
		}
	})
}
