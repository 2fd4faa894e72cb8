package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tailscale/hujson"
)

// Node is one JSON value that keeps the order its object keys were written in, at every
// level. Order is policy: permission rules are ordered and the last match wins (docs/config.md),
// so a configuration is never held in a Go map between reading and merging.
type Node struct {
	// Members are an object's members in document order; nil for any other value.
	Members []Member
	// Raw is any other value (string, number, bool, null, array) as written, compacted.
	Raw    json.RawMessage
	object bool
	// Offset is where the value starts in its source, for errors; -1 when not from a file.
	Offset int64
}

// Member is one key of an object and its value.
type Member struct {
	Key   string
	Value Node
	// Offset is where the key starts in its source.
	Offset int64
}

// IsObject reports whether the node is a JSON object.
func (n Node) IsObject() bool { return n.object }

// Get returns the value of key in an object node.
func (n Node) Get(key string) (Node, bool) {
	for _, m := range n.Members {
		if m.Key == key {
			return m.Value, true
		}
	}
	return Node{}, false
}

// MarshalJSON writes the node with its keys in their order.
func (n Node) MarshalJSON() ([]byte, error) {
	if !n.object {
		if n.Raw == nil {
			return []byte("null"), nil
		}
		return n.Raw, nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range n.Members {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.Key)
		b.Write(k)
		b.WriteByte(':')
		v, err := m.Value.MarshalJSON()
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Merge lays over on top of base, as docs/config.md says: a key both set is replaced in the
// position base gave it (merged again when both values are objects), a key only over sets is
// appended after base's keys. Anything that is not two objects is simply over.
func Merge(base, over Node) Node {
	if !base.object || !over.object {
		return over
	}
	out := Node{object: true, Offset: base.Offset, Members: make([]Member, 0, len(base.Members)+len(over.Members))}
	for _, m := range base.Members {
		if v, ok := over.Get(m.Key); ok {
			m.Value = Merge(m.Value, v)
		}
		out.Members = append(out.Members, m)
	}
	for _, m := range over.Members {
		if _, ok := base.Get(m.Key); !ok {
			out.Members = append(out.Members, m)
		}
	}
	return out
}

// ParseJSONC reads a JSONC document (JSON with // and /* */ comments and trailing commas)
// whose top level must be an object. Errors are *Error naming source, line and column.
// Comments are removed by github.com/tailscale/hujson, which blanks them out byte for byte,
// so every offset in the standardised text is an offset in what the person wrote.
func ParseJSONC(source string, src []byte) (Node, []byte, error) {
	std, err := hujson.Standardize(append([]byte(nil), src...))
	if err != nil {
		return Node{}, nil, jsoncError(source, err)
	}
	n, err := parseValue(std, 0)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Source = source
			e.Line, e.Column = position(std, e.off)
			return Node{}, nil, e
		}
		return Node{}, nil, &Error{code: CodeBadConfig, Source: source, Message: err.Error()}
	}
	if !n.object {
		return Node{}, nil, &Error{code: CodeBadConfig, Source: source, Line: 1, Column: 1,
			Message: "the configuration is not a JSON object", Fix: `write {"key": value, …}`}
	}
	return n, std, nil
}

// jsoncError turns hujson's "hujson: line L, column C: msg" into an *Error.
func jsoncError(source string, err error) *Error {
	e := &Error{code: CodeBadConfig, Source: source, Message: err.Error(),
		Fix: "write JSON; // and /* */ comments and trailing commas are allowed"}
	var line, col int
	var msg string
	if _, serr := fmt.Sscanf(err.Error(), "hujson: line %d, column %d: ", &line, &col); serr == nil {
		e.Line, e.Column = line, col
		if _, rest, ok := bytes.Cut([]byte(err.Error()), []byte(": ")); ok {
			if _, rest2, ok := bytes.Cut(rest, []byte(": ")); ok {
				msg = string(rest2)
			}
		}
		e.Message = msg
	}
	return e
}

// parseValue reads the value at the start of b, which sits at offset base of the document.
func parseValue(b []byte, base int64) (Node, error) {
	t := bytes.TrimLeft(b, " \t\r\n")
	base += int64(len(b) - len(t))
	if len(t) == 0 || t[0] != '{' {
		var raw json.RawMessage
		if err := json.Unmarshal(t, &raw); err != nil {
			return Node{}, offsetError(base, err)
		}
		var c bytes.Buffer
		if err := json.Compact(&c, raw); err != nil {
			return Node{}, offsetError(base, err)
		}
		return Node{Raw: c.Bytes(), Offset: base}, nil
	}
	return parseObject(t, base)
}

func parseObject(b []byte, base int64) (Node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	n := Node{object: true, Offset: base, Members: []Member{}}
	if _, err := dec.Token(); err != nil {
		return Node{}, offsetError(base, err)
	}
	for dec.More() {
		keyAt := base + skipSpace(b, dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return Node{}, offsetError(base+dec.InputOffset(), err)
		}
		key, _ := tok.(string)
		if _, dup := n.Get(key); dup {
			return Node{}, &Error{code: CodeBadConfig, off: keyAt, Key: key,
				Message: fmt.Sprintf("key %q is set twice in one object", key), Fix: "keep one of them"}
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return Node{}, offsetError(base+dec.InputOffset(), err)
		}
		start := dec.InputOffset() - int64(len(raw))
		v, err := parseValue(raw, base+start)
		if err != nil {
			return Node{}, err
		}
		n.Members = append(n.Members, Member{Key: key, Value: v, Offset: keyAt})
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return Node{}, offsetError(base+dec.InputOffset(), err)
	}
	return n, nil
}

// skipSpace returns the offset of the first byte at or after off that is not white space or
// a separator, which is where the next key starts.
func skipSpace(b []byte, off int64) int64 {
	for off < int64(len(b)) && bytes.IndexByte([]byte(" \t\r\n,{"), b[off]) >= 0 {
		off++
	}
	return off
}

func offsetError(off int64, err error) *Error {
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		off += syn.Offset
	}
	return &Error{code: CodeBadConfig, off: off, Message: err.Error()}
}
