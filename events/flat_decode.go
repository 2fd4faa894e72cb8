package events

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// scanFlat decodes data into the payloads a session writes most often (a tool call's start
// and settlement, a provider request's start and end, with its wire record and response)
// without reflection, and says false for anything else, which fastUnmarshal then decodes as
// encoding/json does. `zuno verify --wire` decodes every event of a session, and the
// reflective decoder was a sixth of its CPU (docs/storage.md, "Receipts and wire records in
// one pass"). Like scanMetadata, it takes only what decodes the same either way: objects
// whose members are named exactly as the tags name them, each once; a string (its escapes
// decoded as JSON decodes them, but for a surrogate escape, which encoding/json may replace,
// and valid UTF-8) for a string member, an integer literal in range for an integer member,
// true or false for a boolean one, an object for a struct (a new one for a pointer), an
// array of objects for a slice (an empty one for [], not nil), an object of strings for a
// map (a new one, its keys valid UTF-8; a repeated name's last value). A member it does not
// know, another spelling of a name, a repeated member, a null, a name with an escape, or any
// other number sends it to the reference, which decodes the whole datum again.
// FuzzFastDecodeAgrees holds the two to the same answer.
func scanFlat(data []byte, into any) bool {
	member := flatMembers(into)
	// The first pass keeps nothing: a datum the scanner does not take (a provider request
	// with a step-limit instruction, a response with reasoning) is found so before any
	// string is allocated.
	return member != nil && scanFlatPass(data, member, false) && scanFlatPass(data, member, true)
}

// scanFlatPass reads data as scanFlat takes it, setting the members when set is true.
func scanFlatPass(data []byte, member func(key []byte) (uint64, any), set bool) bool {
	s := metaScanner{b: data}
	return s.object(member, set) && s.end()
}

// object takes an object whose members member knows, each once.
func (s *metaScanner) object(member func(key []byte) (uint64, any), set bool) bool {
	if !s.byte('{') {
		return false
	}
	if s.peek('}') {
		s.i++
		return true
	}
	var seen uint64
	for {
		key, ok := s.name()
		if !ok || !s.byte(':') {
			return false
		}
		bit, field := member(key)
		if bit == 0 || seen&bit != 0 || !s.value(field, set) {
			return false
		}
		seen |= bit
		switch {
		case s.byte(','):
		case s.byte('}'):
			return true
		default:
			return false
		}
	}
}

// flatMembers is the member lookup of a payload scanFlat decodes: a distinct bit and the
// field for each tag name; nil for another type.
func flatMembers(into any) func(key []byte) (uint64, any) {
	switch p := into.(type) {
	case *ToolStarted:
		return p.member
	case *ToolSettled:
		return p.member
	case *ProviderRequest:
		return p.member
	}
	return nil
}

func (p *ToolStarted) member(key []byte) (uint64, any) {
	switch string(key) {
	case "sessionId":
		return 1 << 0, &p.SessionID
	case "turnId":
		return 1 << 1, &p.TurnID
	case "requestId":
		return 1 << 2, &p.RequestID
	case "callId":
		return 1 << 3, &p.CallID
	case "tool":
		return 1 << 4, &p.Tool
	case "action":
		return 1 << 5, &p.Action
	case "group":
		return 1 << 6, &p.Group
	case "sideEffect":
		return 1 << 7, &p.SideEffect
	case "replay":
		return 1 << 8, &p.Replay
	case "concurrency":
		return 1 << 9, &p.Concurrency
	}
	return 0, nil // permission, sandbox and withheldEnv are not flat
}

func (p *ToolSettled) member(key []byte) (uint64, any) {
	switch string(key) {
	case "sessionId":
		return 1 << 0, &p.SessionID
	case "turnId":
		return 1 << 1, &p.TurnID
	case "requestId":
		return 1 << 2, &p.RequestID
	case "callId":
		return 1 << 3, &p.CallID
	case "tool":
		return 1 << 4, &p.Tool
	case "outcome":
		return 1 << 5, &p.Outcome
	case "errorCode":
		return 1 << 6, &p.ErrorCode
	case "output":
		return 1 << 7, &p.Output
	case "recovered":
		return 1 << 8, &p.Recovered
	case "durationMs":
		return 1 << 9, &p.DurationMs
	}
	return 0, nil // metadata is not flat
}

func (p *ProviderRequest) member(key []byte) (uint64, any) {
	switch string(key) {
	case "sessionId":
		return 1 << 0, &p.SessionID
	case "turnId":
		return 1 << 1, &p.TurnID
	case "requestId":
		return 1 << 2, &p.RequestID
	case "step":
		return 1 << 3, &p.Step
	case "status":
		return 1 << 4, &p.Status
	case "promptReceiptID":
		return 1 << 5, &p.PromptReceiptID
	case "provider":
		return 1 << 6, &p.Provider
	case "model":
		return 1 << 7, &p.Model
	case "purpose":
		return 1 << 8, &p.Purpose
	case "attempt":
		return 1 << 9, &p.Attempt
	case "retryInMs":
		return 1 << 10, &p.RetryInMs
	case "durationMs":
		return 1 << 11, &p.DurationMs
	case "wire":
		return 1 << 12, &p.Wire
	case "response":
		return 1 << 13, &p.Response
	case "error":
		return 1 << 14, &p.Error
	}
	return 0, nil // stepLimitFinalization is left to the reference
}

func (w *WireExchange) member(key []byte) (uint64, any) {
	switch string(key) {
	case "adapter":
		return 1 << 0, &w.Adapter
	case "mappingVersion":
		return 1 << 1, &w.MappingVersion
	case "mapping":
		return 1 << 2, &w.Mapping
	case "endpoint":
		return 1 << 3, &w.Endpoint
	case "requestSha256":
		return 1 << 4, &w.RequestSHA256
	case "requestBytes":
		return 1 << 5, &w.RequestBytes
	case "responseSha256":
		return 1 << 6, &w.ResponseSHA256
	case "responseBytes":
		return 1 << 7, &w.ResponseBytes
	case "httpStatus":
		return 1 << 8, &w.HTTPStatus
	}
	return 0, nil
}

func (r *ProviderResponse) member(key []byte) (uint64, any) {
	switch string(key) {
	case "id":
		return 1 << 0, &r.ID
	case "model":
		return 1 << 1, &r.Model
	case "text":
		return 1 << 2, &r.Text
	case "toolCalls":
		return 1 << 3, &r.ToolCalls
	case "closedToolCalls":
		return 1 << 4, &r.ClosedToolCalls
	case "refusal":
		return 1 << 5, &r.Refusal
	case "usage":
		return 1 << 6, &r.Usage
	case "finishReason":
		return 1 << 7, &r.FinishReason
	case "providerFinishReason":
		return 1 << 8, &r.ProviderFinishReason
	}
	return 0, nil // reasoning is left to the reference
}

func (c *ToolCall) member(key []byte) (uint64, any) {
	switch string(key) {
	case "id":
		return 1 << 0, &c.ID
	case "providerId":
		return 1 << 1, &c.ProviderID
	case "name":
		return 1 << 2, &c.Name
	case "arguments":
		return 1 << 3, &c.Arguments
	}
	return 0, nil
}

func (u *Usage) member(key []byte) (uint64, any) {
	switch string(key) {
	case "inputTokens":
		return 1 << 0, &u.InputTokens
	case "outputTokens":
		return 1 << 1, &u.OutputTokens
	case "cacheReadTokens":
		return 1 << 2, &u.CacheReadTokens
	case "cacheWriteTokens":
		return 1 << 3, &u.CacheWriteTokens
	}
	return 0, nil
}

func (e *ErrorInfo) member(key []byte) (uint64, any) {
	switch string(key) {
	case "code":
		return 1 << 0, &e.Code
	case "message":
		return 1 << 1, &e.Message
	case "fix":
		return 1 << 2, &e.Fix
	case "providerCode":
		return 1 << 3, &e.ProviderCode
	case "httpStatus":
		return 1 << 4, &e.HTTPStatus
	case "retryAfterMs":
		return 1 << 5, &e.RetryAfterMs
	}
	return 0, nil
}

// name takes a member's name as it is written: one with an escape is not one scanFlat
// takes (another spelling of a tag name is the reference's to match).
func (s *metaScanner) name() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	from := s.i
	for s.i < len(s.b) {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[from : s.i-1], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
		s.i++
	}
	return nil, false
}

// value takes a member's value, after any whitespace, into field when set is true.
func (s *metaScanner) value(field any, set bool) bool {
	s.space()
	switch f := field.(type) {
	case *string:
		v, ok := s.escaped(set)
		if ok && set {
			*f = v
		}
		return ok
	case *int:
		v, ok := s.integer(strconv.IntSize)
		if ok && set {
			*f = int(v)
		}
		return ok
	case *int64:
		v, ok := s.integer(64)
		if ok && set {
			*f = v
		}
		return ok
	case **WireExchange:
		return nested(s, f, set, (*WireExchange).member)
	case **ProviderResponse:
		return nested(s, f, set, (*ProviderResponse).member)
	case **ErrorInfo:
		return nested(s, f, set, (*ErrorInfo).member)
	case *Usage:
		return s.object(f.member, set)
	case *[]ToolCall:
		return s.toolCalls(f, set)
	case *map[string]string:
		return s.stringMap(f, set)
	case *bool:
		for _, lit := range []struct {
			text string
			v    bool
		}{{"true", true}, {"false", false}} {
			if len(s.b)-s.i >= len(lit.text) && string(s.b[s.i:s.i+len(lit.text)]) == lit.text {
				s.i += len(lit.text)
				if set {
					*f = lit.v
				}
				return true
			}
		}
	}
	return false
}

// nested takes an object into a new T that *f then points to (encoding/json allocates one
// for a nil pointer, and a payload being decoded has none set).
func nested[T any](s *metaScanner, f **T, set bool, member func(*T, []byte) (uint64, any)) bool {
	v := new(T)
	if !s.object(func(key []byte) (uint64, any) { return member(v, key) }, set) {
		return false
	}
	if set {
		*f = v
	}
	return true
}

// toolCalls takes an array of tool calls; an empty one is an empty slice, not nil, as
// encoding/json decodes it.
func (s *metaScanner) toolCalls(f *[]ToolCall, set bool) bool {
	if !s.byte('[') {
		return false
	}
	calls := []ToolCall{}
	if s.peek(']') {
		s.i++
	} else {
		for {
			var c ToolCall
			if !s.object(c.member, set) {
				return false
			}
			calls = append(calls, c)
			if s.byte(']') {
				break
			}
			if !s.byte(',') {
				return false
			}
		}
	}
	if set {
		*f = calls
	}
	return true
}

// stringMap takes an object of strings into a new map (encoding/json allocates one for a nil
// map, and keeps the last value of a repeated name, as this does).
func (s *metaScanner) stringMap(f *map[string]string, set bool) bool {
	if !s.byte('{') {
		return false
	}
	m := map[string]string{}
	if s.peek('}') {
		s.i++
	} else {
		for {
			key, ok := s.name()
			// encoding/json replaces invalid UTF-8 in a map's key with U+FFFD; such a key
			// is the reference's to decode (a member name needs no check: one with invalid
			// UTF-8 is no tag name, so member sends it to the reference).
			if !ok || !utf8.Valid(key) || !s.byte(':') {
				return false
			}
			s.space()
			v, ok := s.escaped(set)
			if !ok {
				return false
			}
			if set {
				m[string(key)] = v
			}
			if s.byte('}') {
				break
			}
			if !s.byte(',') {
				return false
			}
		}
	}
	if set {
		*f = m
	}
	return true
}

// integer takes a JSON integer literal (no fraction, no exponent) that fits in bits.
func (s *metaScanner) integer(bits int) (int64, bool) {
	from := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	n := s.i - digits
	if n == 0 || (n > 1 && s.b[digits] == '0') {
		return 0, false
	}
	if s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		return 0, false
	}
	v, err := strconv.ParseInt(string(s.b[from:s.i]), 10, bits)
	return v, err == nil
}

// escaped takes a string, its escapes decoded, and returns it when keep is true; false for a
// surrogate escape, a control character, invalid UTF-8 or a malformed escape. The bytes
// between escapes are checked for UTF-8 each on its own: an escape ends with a whole rune
// and a backslash cannot continue one, so they are valid exactly when the decoded string is.
func (s *metaScanner) escaped(keep bool) (string, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	s.i++
	from := s.i
	escapes := false
	var out []byte // the decoded string so far, once it has an escape and is kept
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			raw := s.b[from:s.i]
			s.i++
			if !utf8.Valid(raw) {
				return "", false
			}
			switch {
			case !keep:
				return "", true
			case !escapes:
				return string(raw), true
			}
			return string(append(out, raw...)), true
		case c < 0x20:
			return "", false
		case c == '\\':
			raw := s.b[from:s.i]
			if !utf8.Valid(raw) {
				return "", false
			}
			r, ok := s.escape()
			if !ok {
				return "", false
			}
			if escapes = true; keep {
				out = utf8.AppendRune(append(out, raw...), r)
			}
			from = s.i
			continue
		}
		s.i++
	}
	return "", false
}

// escape decodes the escape at s.i (its backslash).
func (s *metaScanner) escape() (rune, bool) {
	if s.i+1 >= len(s.b) {
		return 0, false
	}
	c := s.b[s.i+1]
	s.i += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case 'u':
		if s.i+4 > len(s.b) {
			return 0, false
		}
		v, err := strconv.ParseUint(string(s.b[s.i:s.i+4]), 16, 16)
		if err != nil || utf16.IsSurrogate(rune(v)) {
			return 0, false
		}
		s.i += 4
		return rune(v), true
	}
	return 0, false
}
