package toolset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zuno-run/zuno/domain"
)

// kind is a JSON type an argument may have.
type kind int

const (
	kString kind = iota
	kInt
	kBool
)

func (k kind) schemaType() string {
	switch k {
	case kInt:
		return "integer"
	case kBool:
		return "boolean"
	}
	return "string"
}

// param is one argument. The JSON Schema and the validator are both generated from the
// same table, so what the model is shown and what is accepted cannot drift apart.
type param struct {
	name     string
	kind     kind
	required bool
	// allowEmpty lets a string be "" (file content); otherwise a string is non-empty.
	allowEmpty bool
	// allowNUL lets a string hold U+0000 (file content); paths, patterns and commands
	// cannot carry one through to the system anyway.
	allowNUL bool
	// maxBytes bounds a string's UTF-8 length (0: no bound). Not in the schema, whose
	// maxLength counts characters; the description states it.
	maxBytes int
	// min and max bound an integer (both inclusive).
	min, max int64
	enum     []string
	desc     string
}

// params is a tool's arguments in the order the schema lists them.
type params struct {
	list []param
	// example is a complete, valid argument object, quoted in every fix.
	example string
}

func (ps params) find(name string) *param {
	for i := range ps.list {
		if ps.list[i].name == name {
			return &ps.list[i]
		}
	}
	return nil
}

func (ps params) names() []string {
	out := make([]string, len(ps.list))
	for i, p := range ps.list {
		out[i] = p.name
	}
	return out
}

// schema renders the JSON Schema of the argument object, properties in declaration order.
func (ps params) schema() json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var required []string
	for i, p := range ps.list {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSON(&b, p.name)
		b.WriteString(`:{"type":`)
		writeJSON(&b, p.kind.schemaType())
		if p.desc != "" {
			b.WriteString(`,"description":`)
			writeJSON(&b, p.desc)
		}
		switch p.kind {
		case kString:
			if len(p.enum) > 0 {
				b.WriteString(`,"enum":`)
				writeJSON(&b, p.enum)
			} else if !p.allowEmpty {
				b.WriteString(`,"minLength":1`)
			}
		case kInt:
			fmt.Fprintf(&b, `,"minimum":%d,"maximum":%d`, p.min, p.max)
		}
		b.WriteByte('}')
		if p.required {
			required = append(required, p.name)
		}
	}
	b.WriteString(`},"required":`)
	if required == nil {
		required = []string{}
	}
	writeJSON(&b, required)
	b.WriteString(`,"additionalProperties":false}`)
	return json.RawMessage(b.Bytes())
}

func writeJSON(b *bytes.Buffer, v any) {
	out, err := json.Marshal(v)
	if err != nil {
		panic(err) // strings and string slices always marshal
	}
	b.Write(out)
}

// decode checks args against the table and unmarshals them into dst (a pointer to the
// tool's argument struct, whose json tags are the param names). The checks come first and
// are stricter than encoding/json: the keys must match exactly (encoding/json would take
// "PATH" for "path"), no key may repeat (it would keep the last), nothing may follow the
// object, and strings must be valid UTF-8 without unpaired surrogates (encoding/json would
// turn both into U+FFFD, a path that names nothing).
func (ps params) decode(args json.RawMessage, dst any) error {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 {
		return ps.whole("arguments are empty")
	}
	if trimmed[0] != '{' {
		return ps.whole(fmt.Sprintf("arguments must be a JSON object, not %s", jsonKind(trimmed[0])))
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil { // the '{'
		return ps.whole("arguments are not valid JSON: " + err.Error())
	}
	seen := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return ps.whole("arguments are not valid JSON: " + err.Error())
		}
		key, ok := tok.(string)
		if !ok {
			return ps.whole("arguments are not valid JSON: an object key is not a string")
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return ps.whole(fmt.Sprintf("arguments are not valid JSON (at %q): %v", key, err))
		}
		p := ps.find(key)
		if p == nil {
			field := key
			if field == "" {
				field = "arguments" // an empty key names nothing the model could fix by name
			}
			e := domain.Invalid(field, fmt.Sprintf("unknown argument %q", key),
				fmt.Sprintf("remove %q; the accepted arguments are %s, e.g. %s", key, strings.Join(ps.names(), ", "), ps.example))
			e.Valid = ps.names()
			return e
		}
		if _, dup := seen[key]; dup {
			return domain.Invalid(key, key+" appears twice", fmt.Sprintf("send %q once", key))
		}
		if err := p.check(raw); err != nil {
			return err
		}
		seen[key] = raw
	}
	if _, err := dec.Token(); err != nil { // the '}'
		return ps.whole("arguments are not valid JSON: " + err.Error())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return ps.whole("arguments have data after the JSON object")
	}
	for _, p := range ps.list {
		if _, ok := seen[p.name]; p.required && !ok {
			return domain.Invalid(p.name, p.name+" is required", p.fix())
		}
	}
	if err := json.Unmarshal(trimmed, dst); err != nil {
		// Unreachable after the checks above; kept so a table/struct mismatch cannot pass.
		return ps.whole("arguments do not decode: " + err.Error())
	}
	return nil
}

func (ps params) whole(msg string) *domain.Error {
	return domain.Invalid("arguments", msg, "send one JSON object such as "+ps.example)
}

func jsonKind(c byte) string {
	switch {
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "a number"
	}
	return "something else"
}

// fix says what to send for p.
func (p param) fix() string {
	var what string
	switch p.kind {
	case kInt:
		what = fmt.Sprintf("a whole number from %d to %d", p.min, p.max)
	case kBool:
		what = "true or false"
	default:
		switch {
		case len(p.enum) > 0:
			what = "one of " + strings.Join(p.enum, ", ")
		case p.allowEmpty:
			what = "a string"
		default:
			what = "a non-empty string"
		}
	}
	s := fmt.Sprintf("send %q as %s", p.name, what)
	if p.desc != "" {
		s += " (" + p.desc + ")"
	}
	if !p.required {
		s += ", or leave it out"
	}
	return s
}

// invalid refuses p's value. The message starts with the field's name, so domain.Error
// does not repeat it.
func (p param) invalid(format string, args ...any) *domain.Error {
	return domain.Invalid(p.name, p.name+" "+fmt.Sprintf(format, args...), p.fix())
}

// check validates one raw value against p.
func (p param) check(raw json.RawMessage) error {
	switch p.kind {
	case kBool:
		if s := string(raw); s != "true" && s != "false" {
			return p.invalid("must be true or false, not %s", describe(raw))
		}
	case kInt:
		if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
			return p.invalid("must be a whole number, not %s", describe(raw))
		}
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			if ne := (*strconv.NumError)(nil); errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
				return p.invalid("is %s, outside %d..%d", raw, p.min, p.max)
			}
			return p.invalid("must be a whole number written without a fraction or exponent, not %s", raw)
		}
		if n < p.min || n > p.max {
			return p.invalid("is %d, outside %d..%d", n, p.min, p.max)
		}
	default:
		if len(raw) == 0 || raw[0] != '"' {
			return p.invalid("must be a string, not %s", describe(raw))
		}
		if msg := rawStringProblem(raw); msg != "" {
			return p.invalid("%s", msg)
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return p.invalid("is not a valid JSON string: %v", err)
		}
		if s == "" && !p.allowEmpty {
			return p.invalid("is empty")
		}
		if !p.allowNUL && strings.ContainsRune(s, 0) {
			return p.invalid("contains a NUL character")
		}
		if p.maxBytes > 0 && len(s) > p.maxBytes {
			return p.invalid("is %d bytes, over the %d-byte limit", len(s), p.maxBytes)
		}
		if len(p.enum) > 0 && !contains(p.enum, s) {
			e := p.invalid("is %q, not one of %s", s, strings.Join(p.enum, ", "))
			e.Valid = p.enum
			return e
		}
	}
	return nil
}

func describe(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	if raw[0] == '"' {
		return "a string"
	}
	return jsonKind(raw[0])
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// rawStringProblem finds what encoding/json would silently repair in a JSON string token:
// invalid UTF-8 bytes and \u escapes of unpaired UTF-16 surrogates. "" means none.
func rawStringProblem(raw []byte) string {
	if !utf8.Valid(raw) {
		return "is not valid UTF-8"
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++
		if i >= len(raw) || raw[i] != 'u' {
			continue
		}
		r, ok := hex4(raw, i+1)
		if !ok {
			continue // a malformed escape; json.Unmarshal reports it
		}
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return "holds an unpaired UTF-16 surrogate escape"
		case r >= 0xD800 && r <= 0xDBFF:
			if i+2 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
				if lo, ok := hex4(raw, i+3); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 6
					continue
				}
			}
			return "holds an unpaired UTF-16 surrogate escape"
		}
	}
	return ""
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[at:at+4]), 16, 16)
	if err != nil {
		return 0, false
	}
	return rune(n), true
}

// maxInt32 bounds line offsets and limits so that offset+limit cannot overflow anywhere.
const maxInt32 = math.MaxInt32
