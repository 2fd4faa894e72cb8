package search

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"unicode/utf16"
	"unicode/utf8"
)

// record is the part of an rg --json "match" or "context" message that grep uses.
type record struct {
	Type       string // "match" or "context"
	Path       []byte // the path as rg printed it (decoded from base64 when it is not UTF-8)
	Line       []byte // the line with its terminator, decoded likewise
	LineNumber int
}

// text is the line without its terminator, as valid UTF-8.
func (r record) text() string {
	b := bytes.TrimSuffix(r.Line, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	return validLine(b)
}

// decoder decodes rg --json messages. Match and context messages are read by a small
// scanner that looks only at type, data.path, data.lines and data.line_number and skips the
// rest (submatches, offsets); a message it cannot follow goes to encoding/json instead.
// Other message types (begin, end, summary) are recognised by their prefix and skipped.
// A record's Path and Line alias the decoder's buffers or the input: use them before the
// next call.
type decoder struct {
	pathBuf, lineBuf []byte
}

var (
	typePrefix    = []byte(`{"type":"`)
	matchPrefix   = []byte(`{"type":"match"`)
	contextPrefix = []byte(`{"type":"context"`)
)

// decode returns ok for a match or context message with a path and a line number.
func (d *decoder) decode(msg []byte) (r record, ok bool, err error) {
	if len(bytes.TrimSpace(msg)) == 0 {
		return r, false, nil
	}
	if bytes.HasPrefix(msg, typePrefix) && !bytes.HasPrefix(msg, matchPrefix) && !bytes.HasPrefix(msg, contextPrefix) {
		return r, false, nil
	}
	var parsed bool
	r, parsed = d.fast(msg)
	if !parsed {
		if r, err = d.slow(msg); err != nil {
			return r, false, err
		}
	}
	return r, (r.Type == "match" || r.Type == "context") && r.Path != nil && r.LineNumber > 0, nil
}

func (d *decoder) fast(msg []byte) (r record, ok bool) {
	s := scanner{b: msg}
	ok = s.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			raw, esc, ok := s.str()
			if !ok || esc {
				return false
			}
			switch string(raw) {
			case "match":
				r.Type = "match"
			case "context":
				r.Type = "context"
			default:
				r.Type = string(raw)
			}
			return true
		case "data":
			return s.object(func(key []byte) bool {
				var ok bool
				switch string(key) {
				case "path":
					r.Path, d.pathBuf, ok = s.data(d.pathBuf)
				case "lines":
					r.Line, d.lineBuf, ok = s.data(d.lineBuf)
				case "line_number":
					r.LineNumber, ok = s.number()
				default:
					ok = s.skip()
				}
				return ok
			})
		}
		return s.skip()
	})
	s.ws()
	return r, ok && s.i == len(s.b)
}

// jsonRecord is the same message for encoding/json.
type jsonRecord struct {
	Type string `json:"type"`
	Data struct {
		Path       jsonData `json:"path"`
		Lines      jsonData `json:"lines"`
		LineNumber *int     `json:"line_number"`
	} `json:"data"`
}

type jsonData struct {
	Text  *string `json:"text"`
	Bytes *string `json:"bytes"`
}

func (j jsonData) raw() ([]byte, error) {
	switch {
	case j.Text != nil:
		return []byte(*j.Text), nil
	case j.Bytes != nil:
		return base64.StdEncoding.DecodeString(*j.Bytes)
	}
	return nil, nil
}

func (d *decoder) slow(msg []byte) (record, error) {
	var j jsonRecord
	if err := json.Unmarshal(msg, &j); err != nil {
		return record{}, fmt.Errorf("%w in %.200q", err, msg)
	}
	r := record{Type: j.Type}
	var err error
	if r.Path, err = j.Data.Path.raw(); err != nil {
		return r, err
	}
	if r.Line, err = j.Data.Lines.raw(); err != nil {
		return r, err
	}
	if j.Data.LineNumber != nil {
		r.LineNumber = *j.Data.LineNumber
	}
	return r, nil
}

// scanner reads just enough JSON to pick fields out of one rg message.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) consume(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string and returns its raw content and whether that holds escapes.
func (s *scanner) str() (raw []byte, esc bool, ok bool) {
	if !s.consume('"') {
		return nil, false, false
	}
	start := s.i
	for {
		j := bytes.IndexByte(s.b[s.i:], '"')
		if j < 0 {
			return nil, false, false
		}
		k := bytes.IndexByte(s.b[s.i:s.i+j], '\\')
		if k < 0 {
			s.i += j
			break
		}
		esc = true
		s.i += k + 2
		if s.i > len(s.b) {
			return nil, false, false
		}
	}
	raw = s.b[start:s.i]
	s.i++
	return raw, esc, true
}

// object reads an object, handing each key to field, which must read the value.
func (s *scanner) object(field func(key []byte) bool) bool {
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	for {
		key, _, ok := s.str()
		if !ok || !s.consume(':') || !field(key) {
			return false
		}
		if s.consume(',') {
			continue
		}
		return s.consume('}')
	}
}

// data reads rg's arbitrary data, {"text": ...} or {"bytes": base64}, decoding into buf
// when it must.
func (s *scanner) data(buf []byte) (out, newBuf []byte, ok bool) {
	if s.consume('n') { // null
		ok = s.i+3 <= len(s.b) && string(s.b[s.i:s.i+3]) == "ull"
		s.i += 3
		return nil, buf, ok
	}
	newBuf = buf
	ok = s.object(func(key []byte) bool {
		switch string(key) {
		case "text", "bytes":
			raw, esc, ok := s.str()
			if !ok {
				return false
			}
			if string(key) == "bytes" {
				var err error
				newBuf, err = base64.StdEncoding.AppendDecode(newBuf[:0], raw)
				out = newBuf
				return err == nil
			}
			if !esc {
				out = raw
				return true
			}
			newBuf, ok = unescape(newBuf[:0], raw)
			out = newBuf
			return ok
		}
		return s.skip()
	})
	if out == nil && ok {
		out = []byte{}
	}
	return out, newBuf, ok
}

// number reads a non-negative integer (or null, as 0).
func (s *scanner) number() (int, bool) {
	s.ws()
	n, digits := 0, 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		if n > (1<<62)/10 {
			return 0, false
		}
		n = n*10 + int(s.b[s.i]-'0')
		s.i++
		digits++
	}
	if digits == 0 {
		if s.i+4 <= len(s.b) && string(s.b[s.i:s.i+4]) == "null" {
			s.i += 4
			return 0, true
		}
		return 0, false
	}
	return n, true
}

// skip reads any value.
func (s *scanner) skip() bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		_, _, ok := s.str()
		return ok
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if _, _, ok := s.str(); !ok {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	default: // number, true, false, null
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.i > start
			}
			s.i++
		}
		return s.i > start
	}
}

// unescape appends the JSON string content raw, unescaped, to dst.
func unescape(dst, raw []byte) ([]byte, bool) {
	for i := 0; i < len(raw); {
		j := bytes.IndexByte(raw[i:], '\\')
		if j < 0 {
			return append(dst, raw[i:]...), true
		}
		dst = append(dst, raw[i:i+j]...)
		i += j
		if i+1 >= len(raw) {
			return dst, false
		}
		switch c := raw[i+1]; c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(raw[i+2:])
			if !ok {
				return dst, false
			}
			i += 6
			if utf16.IsSurrogate(r) && i+1 < len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
				if r2, ok := hex4(raw[i+2:]); ok {
					if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
						r = pair
						i += 6
					}
				}
			}
			dst = utf8.AppendRune(dst, r) // a lone surrogate becomes U+FFFD
			continue
		default:
			return dst, false
		}
		i += 2
	}
	return dst, true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
