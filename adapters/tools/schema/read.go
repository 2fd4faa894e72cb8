package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zuno-run/zuno/domain"
)

// read decodes data, one JSON object, into the values the validator checks. It is stricter
// than encoding/json where a decoded instance could no longer show the fault: a key given
// twice (encoding/json keeps the last), and under StrictText a string that is not valid
// UTF-8 or holds an unpaired surrogate escape (encoding/json turns both into U+FFFD).
func (s *Schema) read(data []byte) (any, error) {
	r := reader{data: data, strict: s.rules.StrictText, nullAbsent: s.rules.NullIsAbsent, names: s.names}
	v := r.value()
	if r.skipSpace(); r.broken || r.i != len(data) {
		return nil, s.syntaxError(data)
	}
	if !s.rules.StrictText && !utf8.Valid(data) {
		return nil, s.whole("arguments are not valid UTF-8")
	}
	if data[0] != '{' {
		if s.rules.NullIsEmpty && string(data) == "null" {
			return map[string]any{}, nil
		}
		return nil, s.whole("arguments must be a JSON object, not " + kindOfByte(data[0]))
	}
	if !r.bad {
		return v, nil
	}
	// Read again, tracking where each value sits, to name the field at fault.
	r = reader{data: data, strict: s.rules.StrictText, nullAbsent: s.rules.NullIsAbsent, rec: true}
	r.value()
	if r.problem == nil { // unreachable: both readings see the same bytes
		return nil, s.whole("arguments could not be read")
	}
	at := r.problem.loc
	if len(at) > 0 && at[len(at)-1] == "" {
		at[len(at)-1] = "arguments" // an empty key names nothing the model could fix by name
	}
	field := pathString(at)
	key := at[len(at)-1]
	fix := fmt.Sprintf("send %q once", key)
	if r.problem.msg != msgTwice {
		fix = s.Fix(field)
	}
	return nil, domain.Invalid(field, field+" "+r.problem.msg, fix)
}

// syntaxError says what is wrong with arguments that are not one JSON value.
func (s *Schema) syntaxError(data []byte) error {
	if json.Valid(data) { // unreachable: the reader and encoding/json agree on JSON (FuzzValidate)
		return s.whole("arguments are not valid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var v any
	if err := dec.Decode(&v); err != nil {
		return s.whole("arguments are not valid JSON: " + err.Error())
	}
	if data[0] != '{' {
		return s.whole("arguments must be a JSON object, not " + kindOfByte(data[0]))
	}
	return s.whole("arguments have data after the JSON object")
}

const msgTwice = "appears twice"

// reader decodes JSON already known to be valid. With rec it also keeps where each member
// and element starts (pos, by instance location "/items/0") and where each object ends
// (location + "/}"), and the first problem's location.
type reader struct {
	data               []byte
	i                  int
	strict, nullAbsent bool
	names              map[string]string // the schema's property names, to reuse
	depth              int
	// broken: not one JSON value (encoding/json then says why); bad: a problem of report.
	broken, bad bool

	rec     bool
	stack   []string
	pos     map[string]int
	problem *problem
}

type problem struct {
	loc []string
	msg string
}

func (r *reader) report(msg string) {
	r.bad = true
	if r.rec && r.problem == nil {
		r.problem = &problem{loc: slices.Clone(r.stack), msg: msg}
	}
}

func (r *reader) mark(suffix string) {
	if r.rec && r.pos != nil {
		r.pos[pointer(r.stack)+suffix] = r.i
	}
}

func (r *reader) skipSpace() {
	for r.i < len(r.data) {
		switch r.data[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek is the next byte, 0 at the end (never valid where a token is expected).
func (r *reader) peek() byte {
	if r.i < len(r.data) {
		return r.data[r.i]
	}
	return 0
}

// expect consumes c, or marks the arguments broken.
func (r *reader) expect(c byte) {
	if r.peek() != c {
		r.broken = true
		return
	}
	r.i++
}

// maxDepth is encoding/json's nesting bound, so both refuse the same documents.
const maxDepth = 10000

func (r *reader) value() any {
	r.skipSpace()
	if r.broken {
		return nil
	}
	switch c := r.peek(); c {
	case '{':
		return r.object()
	case '[':
		return r.array()
	case '"':
		s, msg := r.str()
		if msg != "" {
			r.report(msg)
		}
		return s
	case 't':
		return r.literal("true", true)
	case 'f':
		return r.literal("false", false)
	case 'n':
		return r.literal("null", nil)
	}
	return r.number()
}

func (r *reader) literal(word string, v any) any {
	if !bytes.HasPrefix(r.data[r.i:], []byte(word)) {
		r.broken = true
		return nil
	}
	r.i += len(word)
	return v
}

// number reads JSON's number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (r *reader) number() any {
	start := r.i
	if r.peek() == '-' {
		r.i++
	}
	switch c := r.peek(); {
	case c == '0':
		r.i++
	case c >= '1' && c <= '9':
		r.digits()
	default:
		r.broken = true
		return nil
	}
	if r.peek() == '.' {
		r.i++
		r.needDigits()
	}
	if c := r.peek(); c == 'e' || c == 'E' {
		r.i++
		if c := r.peek(); c == '+' || c == '-' {
			r.i++
		}
		r.needDigits()
	}
	return json.Number(r.data[start:r.i])
}

func (r *reader) digits() int {
	n := 0
	for c := r.peek(); c >= '0' && c <= '9'; c = r.peek() {
		r.i++
		n++
	}
	return n
}

func (r *reader) needDigits() {
	if r.digits() == 0 {
		r.broken = true
	}
}

func (r *reader) enter() bool {
	r.depth++
	if r.depth > maxDepth {
		r.broken = true
	}
	r.i++ // '{' or '['
	r.skipSpace()
	return !r.broken
}

func (r *reader) object() map[string]any {
	obj := map[string]any{}
	if !r.enter() {
		return obj
	}
	var dropped []string // members given as null, taken as absent
	for first := true; r.peek() != '}' && !r.broken; first = false {
		if !first {
			r.expect(',')
			r.skipSpace()
		}
		if r.peek() != '"' {
			r.broken = true
			break
		}
		key, msg := r.str()
		r.stack = append(r.stack, key)
		r.mark("")
		if msg != "" {
			r.report(msg)
		}
		r.skipSpace()
		r.expect(':')
		v := r.value()
		if _, twice := obj[key]; twice || slices.Contains(dropped, key) {
			r.report(msgTwice)
		}
		if v == nil && r.nullAbsent {
			dropped = append(dropped, key)
		} else {
			obj[key] = v
		}
		r.stack = r.stack[:len(r.stack)-1]
		r.skipSpace()
	}
	r.mark("/}")
	r.expect('}')
	r.depth--
	return obj
}

func (r *reader) array() []any {
	out := []any{}
	if !r.enter() {
		return out
	}
	for n := 0; r.peek() != ']' && !r.broken; n++ {
		if n > 0 {
			r.expect(',')
		}
		if r.rec {
			r.stack = append(r.stack, strconv.Itoa(n))
		}
		r.skipSpace()
		r.mark("")
		out = append(out, r.value())
		if r.rec {
			r.stack = r.stack[:len(r.stack)-1]
		}
		r.skipSpace()
	}
	r.expect(']')
	r.depth--
	return out
}

// str reads a string token. msg is what StrictText refuses in it ("" when nothing).
func (r *reader) str() (string, string) {
	r.i++ // '"'
	start := r.i
	for r.i < len(r.data) {
		c := r.data[r.i]
		if c == '"' {
			r.i++
			return r.intern(r.data[start : r.i-1]), ""
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		r.i++
	}
	var b strings.Builder
	b.Write(r.data[start:r.i])
	msg := ""
	for c := r.peek(); c != '"' && !r.broken; c = r.peek() {
		var m string
		switch {
		case c == '\\':
			m = r.escape(&b)
		case c < 0x20: // a control character, or the end of the arguments
			r.broken = true
		default:
			m = r.char(&b)
		}
		if msg == "" && r.strict {
			msg = m
		}
	}
	r.i++
	return b.String(), msg
}

// intern returns the schema's own string for a property name, saving an allocation per key.
func (r *reader) intern(b []byte) string {
	if s, ok := r.names[string(b)]; ok {
		return s
	}
	return string(b)
}

// char copies one literal character, U+FFFD for a byte that is not UTF-8.
func (r *reader) char(b *strings.Builder) string {
	c, size := utf8.DecodeRune(r.data[r.i:])
	r.i += size
	b.WriteRune(c)
	if c == utf8.RuneError && size == 1 {
		return "is not valid UTF-8"
	}
	return ""
}

// escape decodes one escape as encoding/json does, U+FFFD for an unpaired surrogate.
func (r *reader) escape(b *strings.Builder) string {
	r.i++ // '\\'
	c := r.peek()
	r.i++
	if c != 'u' {
		if strings.IndexByte(`"\\/bfnrt`, c) < 0 || c == 0 {
			r.broken = true
			return ""
		}
		b.WriteByte(unescape(c))
		return ""
	}
	hi, ok := hex4(r.data[r.i:])
	if !ok {
		r.broken = true
		return ""
	}
	r.i += 4
	switch {
	case hi >= 0xD800 && hi < 0xDC00:
		if r.i+6 <= len(r.data) && r.data[r.i] == '\\' && r.data[r.i+1] == 'u' {
			if lo, ok := hex4(r.data[r.i+2:]); ok && lo >= 0xDC00 && lo < 0xE000 {
				r.i += 6
				b.WriteRune(0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00))
				return ""
			}
		}
		b.WriteRune(utf8.RuneError)
		return "holds an unpaired UTF-16 surrogate escape"
	case hi >= 0xDC00 && hi < 0xE000:
		b.WriteRune(utf8.RuneError)
		return "holds an unpaired UTF-16 surrogate escape"
	}
	b.WriteRune(hi)
	return ""
}

// unescape is the byte a one-letter escape stands for; \" \\ and \/ stand for themselves.
func unescape(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var n rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}

// pointer is the JSON Pointer of an instance location: "" for the arguments, "/items/0".
func pointer(loc []string) string {
	if len(loc) == 0 {
		return ""
	}
	return "/" + strings.Join(loc, "/")
}

// pathString writes an instance location as a field path: "steps[0].title".
func pathString(loc []string) string {
	var b strings.Builder
	for _, seg := range loc {
		if _, err := strconv.Atoi(seg); err == nil && b.Len() > 0 {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func kindOfByte(c byte) string {
	switch {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	}
	return "a number"
}
