package events

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync/atomic"

	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Payload is implemented by every event payload type: it names its versioned type.
type Payload interface {
	EventType() string
}

// ValidTypeName reports whether name is dotted and versioned, e.g. session.created.1: two or
// more words ([a-z][a-z0-9_]*) and a version ([1-9][0-9]*), joined by dots. Every append
// checks every event's type, so this is a loop over the bytes, not a regular expression (the
// expression is the fuzz test's oracle).
func ValidTypeName(name string) bool {
	for words := 0; ; words++ {
		dot := strings.IndexByte(name, '.')
		if dot < 0 {
			return words >= 2 && validVersion(name)
		}
		if !validTypeWord(name[:dot]) {
			return false
		}
		name = name[dot+1:]
	}
}

func validTypeWord(w string) bool {
	if w == "" || w[0] < 'a' || w[0] > 'z' {
		return false
	}
	for i := 1; i < len(w); i++ {
		if c := w[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

func validVersion(v string) bool {
	if v == "" || v[0] < '1' || v[0] > '9' {
		return false
	}
	for i := 1; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}

func jsonValid(b []byte) bool { return len(b) > 0 && json.Valid(b) }

// UnknownEventTypeError is returned when a stored event's type has no registered payload. The
// event is never skipped: a reader stops there until the code that knows the type is deployed.
type UnknownEventTypeError struct {
	Type     string
	Stream   string
	Position uint64
}

func (e *UnknownEventTypeError) Error() string {
	return fmt.Sprintf("%s: event type %q at position %d (stream %q) is not known to this build; upgrade zuno to read this log",
		CodeUnknownEventType, e.Type, e.Position, e.Stream)
}

// Code returns the stable error code.
func (e *UnknownEventTypeError) Code() string { return CodeUnknownEventType }

// MalformedEventError is returned when a stored event's data does not decode into its type.
type MalformedEventError struct {
	Type     string
	Stream   string
	Position uint64
	Err      error
}

func (e *MalformedEventError) Error() string {
	return fmt.Sprintf("%s: event type %q at position %d (stream %q) does not decode: %v",
		CodeMalformedEvent, e.Type, e.Position, e.Stream, e.Err)
}

// Code returns the stable error code.
func (e *MalformedEventError) Code() string { return CodeMalformedEvent }

func (e *MalformedEventError) Unwrap() error { return e.Err }

// Registry maps versioned type names to payload types.
type Registry struct {
	types map[string]reflect.Type
	// implied are the types whose leading members may be left out as implied (implied.go).
	implied map[reflect.Type]impliedFields
	// turn is the last command id a turn id was derived for, and that id: a turn's events
	// share one command id, and hashing it again for each was a twentieth of decoding a session.
	turn atomic.Pointer[turnOfCommand]
}

// turnOfCommand is TurnIDOf(commandID).
type turnOfCommand struct{ commandID, turnID string }

// turnIDOf is TurnIDOf, the last answer kept.
func (r *Registry) turnIDOf(commandID string) string {
	if t := r.turn.Load(); t != nil && t.commandID == commandID {
		return t.turnID
	}
	t := &turnOfCommand{commandID, TurnIDOf(commandID)}
	r.turn.Store(t)
	return t.turnID
}

// NewRegistry returns a registry holding the given payloads' types. It panics on a duplicate
// or badly formed name, which is a programming error caught by the package's tests.
func NewRegistry(payloads ...Payload) *Registry {
	r := &Registry{types: make(map[string]reflect.Type, len(payloads)), implied: map[reflect.Type]impliedFields{}}
	for _, p := range payloads {
		name := p.EventType()
		if !ValidTypeName(name) {
			panic(fmt.Sprintf("events: bad type name %q", name))
		}
		if _, dup := r.types[name]; dup {
			panic(fmt.Sprintf("events: type %q registered twice", name))
		}
		t := reflect.TypeOf(p)
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		r.types[name] = t
		if f, ok := impliedFieldsOf(t); ok {
			r.implied[t] = f
		}
	}
	return r
}

// Names lists the registered type names in order.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.types))
	for n := range r.types {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Known reports whether a type name is registered.
func (r *Registry) Known(name string) bool { _, ok := r.types[name]; return ok }

// Decode returns the payload of the recorded event's type as a value (the form Decide
// returns, so every fold, projector and observer matches one form), or a typed error naming
// the type and position.
func (r *Registry) Decode(rec Recorded) (Payload, error) {
	t, ok := r.types[rec.Type]
	if !ok {
		return nil, &UnknownEventTypeError{Type: rec.Type, Stream: rec.Stream, Position: rec.Position}
	}
	p, err := r.decodeWith(fastUnmarshal, t, rec)
	if err != nil {
		// encoding/json decides what is wrong and says it in its words, which the fast decoder's
		// errors do not repeat (and its result is taken, should the two ever disagree).
		p, err = r.decodeWith(decodeStrict, t, rec)
	}
	if err != nil {
		return nil, &MalformedEventError{Type: rec.Type, Stream: rec.Stream, Position: rec.Position, Err: err}
	}
	return p, nil
}

// fastUnmarshal is encoding/json's Unmarshal, the same decoding, done by the implementation
// that Go's encoding/json becomes under GOEXPERIMENT=jsonv2 (go-json-experiment/json/v1,
// which keeps encoding/json's behaviour and passes its tests): it takes half the time and
// allocates less. A rebuild decodes every event of the log, and decoding was a fifth of
// its CPU time (docs/storage.md, "Read models and projections"). The flat payloads a session
// writes most are scanned without reflection first (scanFlat).
func fastUnmarshal(data []byte, into any) error {
	if scanFlat(data, into) {
		return nil
	}
	return jsonv1.Unmarshal(data, into)
}

// decodeWith decodes rec's data into a new value of type t with unmarshal, its implied
// members filled in.
func (r *Registry) decodeWith(unmarshal func([]byte, any) error, t reflect.Type, rec Recorded) (Payload, error) {
	v := reflect.New(t)
	implied, hasImplied := r.implied[t]
	if hasImplied {
		implied.preset(v.Elem())
	}
	if err := unmarshal(rec.Data, v.Interface()); err != nil {
		return nil, err
	}
	if hasImplied {
		implied.fill(v.Elem(), rec, r.turnIDOf)
	}
	return v.Elem().Interface().(Payload), nil
}

// Encode turns a payload into an event with the given id and metadata.
func Encode(id string, p Payload, md Metadata) (Event, error) {
	data, err := json.Marshal(p)
	if err != nil {
		return Event{}, fmt.Errorf("encode %s: %w", p.EventType(), err)
	}
	return Event{ID: id, Type: p.EventType(), Data: data, Metadata: md}, nil
}

// decodeStrict decodes data into into. json.Unmarshal checks the whole input is valid JSON
// before it decodes anything, so it is not scanned twice: a rebuild decodes every event.
func decodeStrict(data []byte, into any) error {
	err := json.Unmarshal(data, into)
	if _, syntax := err.(*json.SyntaxError); syntax {
		return fmt.Errorf("data is not valid JSON")
	}
	return err
}
