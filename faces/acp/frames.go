package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// The frame guard stands between standard input and the protocol library: every line the
// client sends is checked as a JSON-RPC 2.0 message before the library reads it. The library
// (github.com/coder/acp-go-sdk) logs and drops a line it cannot parse, which leaves a client
// waiting forever for the answer to a request it believes it sent; JSON-RPC 2.0 says such a
// line gets an error response (-32700 parse error, -32600 invalid request, with id null when
// the id cannot be read). The guard answers those itself and passes every well-formed message
// on untouched, so a bad line costs the client one error and loses nothing that came before or
// after it (docs/acp.md, "Malformed and out-of-order messages").

// MaxFrame is the largest message the guard takes: a line over it is answered -32600 and
// skipped up to its end. (The library's own scanner would stop the connection at 10 MiB.)
const MaxFrame = 8 << 20

// JSON-RPC 2.0's error codes the guard answers.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// frameError is the guard's answer to a line that is not a JSON-RPC 2.0 message: the error
// response it writes back.
type frameError struct {
	// ID is the request's id when it could be read, else JSON null.
	ID      json.RawMessage
	Code    int
	Message string
	Reason  string
}

// Response is the JSON-RPC error response, one line.
func (e *frameError) Response() []byte {
	id := e.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", id, map[string]any{"code": e.Code, "message": e.Message, "data": map[string]string{"reason": e.Reason}}})
	return append(b, '\n')
}

func invalid(id json.RawMessage, reason string) *frameError {
	return &frameError{ID: id, Code: codeInvalidRequest, Message: "Invalid request", Reason: reason}
}

// checkFrame judges one line (without its newline): nil when it is a JSON-RPC 2.0 request,
// notification or response the library may read; otherwise the error to answer.
func checkFrame(line []byte) *frameError {
	trimmed := bytes.TrimSpace(line)
	if !json.Valid(trimmed) {
		return &frameError{Code: codeParseError, Message: "Parse error", Reason: "the line is not one JSON value"}
	}
	if trimmed[0] == '[' {
		return invalid(nil, "batches are not part of ACP: send one message per line")
	}
	if trimmed[0] != '{' {
		return invalid(nil, "a message is a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return invalid(nil, "a message is a JSON object")
	}
	if duplicateMember(trimmed) {
		// Two decoders may read a doubled member differently (the library's typed one fails on
		// the first, a map keeps the last): refuse it rather than guess.
		return invalid(nil, "a member is written twice")
	}
	id, hasID := m["id"]
	if hasID && !validID(id) {
		return invalid(nil, "id must be a string, a number or null")
	}
	if v, ok := m["jsonrpc"]; !ok || string(bytes.TrimSpace(v)) != `"2.0"` {
		return invalid(id, `jsonrpc must be "2.0"`)
	}
	method, hasMethod := m["method"]
	if !hasMethod {
		return checkResponse(m, id, hasID)
	}
	var name string
	if err := json.Unmarshal(method, &name); err != nil || name == "" {
		return invalid(id, "method must be a non-empty string")
	}
	if p, ok := m["params"]; ok {
		if c := firstByte(p); c != '{' && c != '[' {
			return invalid(id, "params must be an object or an array")
		}
	}
	if _, ok := m["result"]; ok {
		return invalid(id, "a request carries no result")
	}
	if _, ok := m["error"]; ok {
		return invalid(id, "a request carries no error")
	}
	return nil
}

// checkResponse judges a message without a method: a response to one of the agent's requests,
// with an id and exactly one of result and error.
func checkResponse(m map[string]json.RawMessage, id json.RawMessage, hasID bool) *frameError {
	_, hasResult := m["result"]
	e, hasError := m["error"]
	switch {
	case !hasID:
		return invalid(nil, "a message without a method is a response and needs the id it answers")
	case hasResult == hasError:
		return invalid(id, "a response carries exactly one of result and error")
	case hasError:
		var re struct {
			Code    *int    `json:"code"`
			Message *string `json:"message"`
		}
		if json.Unmarshal(e, &re) != nil || re.Code == nil || re.Message == nil {
			return invalid(id, "error must be an object with a code and a message")
		}
	}
	return nil
}

// duplicateMember reports whether the top-level object names a member twice.
func duplicateMember(obj []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil { // {
		return false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		key, _ := tok.(string)
		if seen[key] {
			return true
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}

func validID(id json.RawMessage) bool {
	switch firstByte(id) {
	case '"', 'n':
		return true
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		return json.Unmarshal(id, &n) == nil
	}
	return false
}

func firstByte(b json.RawMessage) byte {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// lockedWriter serialises writes to the client: the library writes each message with one
// Write, and so does the guard, so messages never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// guard copies the well-formed lines of in to pass (one per line) and answers every other line
// on out, until in ends; then it closes pass, which ends the library's connection. bad is
// called with each refusal (the process's diagnostics).
func guard(in io.Reader, pass *io.PipeWriter, out io.Writer, bad func(*frameError)) {
	r := bufio.NewReaderSize(in, 64<<10)
	var err error
	for err == nil {
		var line []byte
		line, err = readLine(r)
		var fe *frameError
		switch {
		case errors.Is(err, errTooLong):
			fe, err = invalid(nil, "the message is over the agent's limit of 8 MiB"), nil
		case len(bytes.TrimSpace(line)) == 0:
			continue
		default:
			fe = checkFrame(line)
		}
		if fe != nil {
			bad(fe)
			if _, werr := out.Write(fe.Response()); werr != nil {
				break
			}
			continue
		}
		if _, werr := pass.Write(append(line, '\n')); werr != nil {
			break
		}
	}
	pass.Close()
}

var errTooLong = errors.New("line too long")

// readLine reads one line without its newline, at most MaxFrame bytes; a longer line is read
// to its end and dropped (errTooLong). The last line may lack its newline.
func readLine(r *bufio.Reader) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > MaxFrame+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && (tooLong || len(line) == 0):
			return nil, err
		case tooLong:
			return nil, errTooLong
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}
