package permission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// member is one "key": value of a JSON object, in the order written.
type member struct {
	key   string
	value json.RawMessage
}

var (
	errNotObject    = errors.New("is not a JSON object")
	errDuplicateKey = errors.New("duplicate key")
)

// duplicateKeyError names the key written twice in one object.
type duplicateKeyError struct{ key string }

func (e duplicateKeyError) Error() string { return fmt.Sprintf("key %q is written twice", e.key) }
func (e duplicateKeyError) Unwrap() error { return errDuplicateKey }

// members decodes a JSON object keeping its keys in the order written. Order is policy here
// (the last matching rule wins), so a Go map, which forgets it, is never used. A key written
// twice is refused: which of the two was meant cannot be known.
func members(raw []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errNotObject
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errNotObject
		}
		if seen[key] {
			return nil, duplicateKeyError{key}
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key, v})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("has data after the object")
	}
	return out, nil
}

// jsonString decodes a JSON string value; ok is false for any other kind of value.
func jsonString(v json.RawMessage) (string, bool) {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// jsonBool decodes a JSON boolean value; ok is false for any other kind of value.
func jsonBool(v json.RawMessage) (bool, bool) {
	switch string(bytes.TrimSpace(v)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// isObject reports whether v is a JSON object (by its first byte; members checks the rest).
func isObject(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && v[0] == '{'
}
