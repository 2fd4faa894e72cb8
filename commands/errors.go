package commands

import (
	"errors"

	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/events"
)

// ErrorReply carries a typed error across the bus as JSON, so that the sender gets back the
// same typed error (and stable code) the handler returned.
type ErrorReply struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// The fields of a *domain.Error.
	Fix      string   `json:"fix,omitempty"`
	Field    string   `json:"field,omitempty"`
	ID       string   `json:"id,omitempty"`
	Expected uint64   `json:"expected,omitempty"`
	Current  uint64   `json:"current,omitempty"`
	Valid    []string `json:"valid,omitempty"`
	// Stream names the stream of a command_id_reused or contention error.
	Stream   string `json:"stream,omitempty"`
	Attempts int    `json:"attempts,omitempty"`
}

// CodeInternal marks an error that is not one of the typed ones (a database failure, say).
const CodeInternal = "internal"

// InternalError is an untyped failure that crossed the bus; Message is its text.
type InternalError struct{ Message string }

func (e *InternalError) Error() string { return e.Message }

// Code returns the stable error code.
func (e *InternalError) Code() string { return CodeInternal }

// NewErrorReply converts err for the wire.
func NewErrorReply(err error) *ErrorReply {
	r := &ErrorReply{Code: CodeInternal, Message: err.Error()}
	var (
		de       *domain.Error
		reused   *CommandIDReusedError
		contend  *ContentionError
		withCode interface{ Code() string }
	)
	switch {
	case errors.As(err, &de):
		r.Code, r.Message, r.Fix, r.Field, r.ID = de.Code(), de.Message, de.Fix, de.Field, de.ID
		r.Expected, r.Current, r.Valid = de.Expected, de.Current, de.Valid
	case errors.As(err, &reused):
		r.Code, r.Stream, r.ID = reused.Code(), reused.Stream, reused.CommandID
	case errors.As(err, &contend):
		r.Code, r.Stream, r.Attempts = contend.Code(), contend.Stream, contend.Attempts
	case errors.As(err, &withCode):
		r.Code = withCode.Code()
	}
	return r
}

// Typed rebuilds the typed error.
func (r *ErrorReply) Typed() error {
	switch r.Code {
	case CodeInternal:
		return &InternalError{Message: r.Message}
	case CodeCommandIDReused:
		return &CommandIDReusedError{Stream: r.Stream, CommandID: r.ID}
	case CodeContention:
		return &ContentionError{Stream: r.Stream, Attempts: r.Attempts}
	case events.CodeInvalidAppend, events.CodeUnknownEventType, events.CodeMalformedEvent,
		events.CodeWrongExpectedRevision, events.CodeEventIDConflict:
		return &remoteError{code: r.Code, message: r.Message}
	}
	e := domain.NewError(r.Code, r.Message, r.Fix)
	e.Field, e.ID, e.Expected, e.Current, e.Valid = r.Field, r.ID, r.Expected, r.Current, r.Valid
	return e
}

// remoteError is a store error that crossed the bus: its code and text survive, its Go type
// (which would name positions and types the sender cannot use) does not.
type remoteError struct{ code, message string }

func (e *remoteError) Error() string { return e.message }
func (e *remoteError) Code() string  { return e.code }
