// Package domain holds what the aggregates share: the typed error that every decision returns
// and the validation of the text fields that users and models send.
//
// The aggregates live in sub-packages (session, work). Like events, they are pure: no I/O, no
// clock, no randomness, so a decision replayed from the log is the same decision.
package domain

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/zuno-run/zuno/events"
)

// Stable error codes. They reach the CLI's JSON output and the model's tool results, so they
// never change meaning; a new situation gets a new code.
const (
	CodeInvalidArgument  = "invalid_argument"
	CodeSessionExists    = "session_exists"
	CodeSessionNotFound  = "session_not_found"
	CodeDuplicateMessage = "duplicate_message_id"

	CodeInvalidAction            = "invalid_action"
	CodeExpectedRevisionRequired = "expected_revision_required"
	CodeStaleRevision            = "stale_revision"
	CodeNoPlan                   = "no_plan"
	CodeNoSubPlan                = "no_sub_plan"
	CodeStepNotFound             = "step_not_found"
	CodeTerminalState            = "terminal_state"
	CodeDependencyNotFound       = "dependency_not_found"
	CodeDependencyCycle          = "dependency_cycle"
	CodeDependencyUnmet          = "dependency_unmet"

	// CodeUnexpectedEvent: a fold met an event its aggregate does not know. The reader stops
	// there instead of deciding on a state it could not build.
	CodeUnexpectedEvent = "unexpected_event"
)

// Error is a rejected command. Nothing was decided, so nothing is appended. Its text is read by
// models as well as people, so it always says what to do next, not only what went wrong.
type Error struct {
	code string
	// Message says what is wrong; Fix says what to do instead.
	Message string
	Fix     string
	// Field is the argument at fault, as a path into the command's JSON ("steps[2].title").
	Field string
	// ID is the step, item, plan, session or message id the error is about.
	ID string
	// Expected and Current are the revisions of a stale_revision error.
	Expected, Current uint64
	// Valid lists the accepted values when the fault is an unknown value (invalid_action).
	Valid []string
}

// NewError returns an error with a stable code from this package's constants.
func NewError(code, message, fix string) *Error {
	return &Error{code: code, Message: message, Fix: fix}
}

// Code returns the stable error code, the same method the typed errors of package events have,
// so callers can report either without knowing which layer refused.
func (e *Error) Code() string { return e.code }

func (e *Error) Error() string { return FormatError(e.code, "", e.Field, e.Message, e.Fix) }

// FormatError is the one text form of a typed error, shared by the layers' error types:
// "code: [who: ][field: ]message; fix". Who and the field are left out when the message
// already names them, so each is stated once.
func FormatError(code, who, field, message, fix string) string {
	var b strings.Builder
	b.WriteString(code)
	b.WriteString(": ")
	if who != "" && !mentions(message, who) {
		b.WriteString(who)
		b.WriteString(": ")
	}
	if field != "" && !mentions(message, field) {
		b.WriteString(field)
		b.WriteString(": ")
	}
	b.WriteString(message)
	if fix != "" {
		b.WriteString("; ")
		b.WriteString(fix)
	}
	return b.String()
}

// mentions reports whether message already names subject as a word of its own ("no agent is
// named" names agent), so FormatError states each subject once: never "unknown_agent: agent:
// no agent is named …" (issue 12 item 4).
func mentions(message, subject string) bool {
	for i := 0; ; {
		j := strings.Index(message[i:], subject)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(subject)
		if !wordByte(message, start-1) && !wordByte(message, end) {
			return true
		}
		i = start + 1
	}
}

// wordByte: the byte at i continues a word (letters, digits, _, ., [ ]); outside the text does not.
func wordByte(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c == '.' || c == '[' || c == ']' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Invalid is the invalid_argument error for one field.
func Invalid(field, message, fix string) *Error {
	e := NewError(CodeInvalidArgument, message, fix)
	e.Field = field
	return e
}

// StaleRevision rejects a command whose expected revision is not the current one. getTool is
// the read tool that returns the current revision ("plan_get").
func StaleRevision(subject string, expected, current uint64, getTool string) *Error {
	e := NewError(CodeStaleRevision,
		fmt.Sprintf("expected_revision is %d but the %s is at revision %d", expected, subject, current),
		fmt.Sprintf("call %s, check the current state, and retry with expected_revision %d if the change still applies", getTool, current))
	e.Field = "expected_revision"
	e.Expected, e.Current = expected, current
	return e
}

// UnexpectedEvent is the error of a fold that meets a payload its aggregate does not know:
// a newer build's event, or an event appended to the wrong stream.
func UnexpectedEvent(aggregate string, p events.Payload) *Error {
	e := NewError(CodeUnexpectedEvent, fmt.Sprintf("the %s fold does not know event type %s", aggregate, p.EventType()),
		"run a zuno build that knows this event type; nothing was decided")
	e.ID = p.EventType()
	return e
}

// Coded is an error with a stable code. Every typed error of every layer (domain, events,
// commands, model, tools) has this method, so a caller reports any of them without knowing
// which layer refused; the codes are listed in docs/errors.md.
type Coded interface {
	error
	Code() string
}

// CodeOf returns the code of err, or of the first error it wraps that has one; "" when none
// has.
func CodeOf(err error) string {
	var c Coded
	if errors.As(err, &c) {
		return c.Code()
	}
	return ""
}

// errorJSON is the wire form of an Error, so that it crosses the command bus whole.
type errorJSON struct {
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	Fix      string   `json:"fix,omitempty"`
	Field    string   `json:"field,omitempty"`
	ID       string   `json:"id,omitempty"`
	Expected uint64   `json:"expected,omitempty"`
	Current  uint64   `json:"current,omitempty"`
	Valid    []string `json:"valid,omitempty"`
}

// MarshalJSON writes the error with its code.
func (e *Error) MarshalJSON() ([]byte, error) {
	return json.Marshal(errorJSON{Code: e.code, Message: e.Message, Fix: e.Fix, Field: e.Field, ID: e.ID,
		Expected: e.Expected, Current: e.Current, Valid: e.Valid})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (e *Error) UnmarshalJSON(b []byte) error {
	var j errorJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = Error{code: j.Code, Message: j.Message, Fix: j.Fix, Field: j.Field, ID: j.ID,
		Expected: j.Expected, Current: j.Current, Valid: j.Valid}
	return nil
}

// HasCode reports whether err is, or wraps, a *Error with the given code.
func HasCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.code == code
}
