package events

import "unicode/utf8"

// scanMetadata decodes the metadata a store writes (encoding/json's output for Metadata: one
// object of known members, each a string) without reflection, and says false for anything
// else, which DecodeMetadata then decodes as encoding/json does. Reading a session decodes
// the metadata of every event, and the reflective decoder took a fifth of the time `zuno
// verify --wire` spent loading one (docs/storage.md, "Receipts and wire records in one
// pass"). It takes only what decodes the same either way: members named exactly as
// Metadata's tags name them, each once; string values with no escape, no control character
// and valid UTF-8, which encoding/json takes byte for byte; the time's bytes as they are
// given to time.Time.UnmarshalJSON, which encoding/json calls with the same bytes. A member
// it does not know, another spelling of a name, a repeated name, an escape in a string
// member or a value of another kind sends it to the reference. FuzzDecodeMetadata holds the
// two to the same answer.
func scanMetadata(data []byte, md *Metadata) bool {
	s := metaScanner{b: data}
	if !s.byte('{') {
		return false
	}
	var seen uint8
	if s.peek('}') {
		s.i++
		return s.end()
	}
	for {
		key, ok := s.name()
		if !ok || !s.byte(':') {
			return false
		}
		bit, field := md.member(key)
		if bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
		s.space()
		from := s.i
		if field != nil {
			val, ok := s.str()
			if !ok {
				return false
			}
			*field = val
		} else if _, ok := s.escaped(false); !ok || md.Time.UnmarshalJSON(data[from:s.i]) != nil {
			return false
		}
		switch {
		case s.byte(','):
			s.space()
		case s.byte('}'):
			return s.end()
		default:
			return false
		}
	}
}

// member is the field a member name is exactly the tag of (nil for the time) and its bit,
// 0 for a name Metadata has no tag for.
func (md *Metadata) member(key []byte) (uint8, *string) {
	switch string(key) {
	case "commandId":
		return 1, &md.CommandID
	case "commandDigest":
		return 2, &md.CommandDigest
	case "causationId":
		return 4, &md.CausationID
	case "correlationId":
		return 8, &md.CorrelationID
	case "actor":
		return 16, &md.Actor
	case "time":
		return 32, nil
	case "hash":
		return 64, &md.Hash
	}
	return 0, nil
}

// metaScanner reads the plain JSON scanMetadata takes.
type metaScanner struct {
	b []byte
	i int
}

// space skips JSON's whitespace.
func (s *metaScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte takes c after any whitespace.
func (s *metaScanner) byte(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *metaScanner) peek(c byte) bool {
	s.space()
	return s.i < len(s.b) && s.b[s.i] == c
}

// str takes a string with no escape and no control character, valid UTF-8.
func (s *metaScanner) str() (string, bool) {
	if !s.byte('"') {
		return "", false
	}
	from := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			v := s.b[from:s.i]
			s.i++
			if !utf8.Valid(v) {
				return "", false
			}
			return string(v), true
		case c == '\\' || c < 0x20:
			return "", false
		}
		s.i++
	}
	return "", false
}

// end is true when nothing but whitespace follows.
func (s *metaScanner) end() bool {
	s.space()
	return s.i == len(s.b)
}
