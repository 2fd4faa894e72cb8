package commands

import (
	"errors"
	"fmt"
	"time"

	"github.com/zuno-run/zuno/domain"
)

// ErrorReply carries a typed error across the bus as JSON, so that the sender gets back the
// same typed error (and stable code) the handler returned. At most one of the typed fields is
// set; an error without one keeps its code and text.
type ErrorReply struct {
	Code    string `json:"code"`
	Message string `json:"message"`

	Domain     *domain.Error         `json:"domain,omitempty"`
	Reused     *CommandIDReusedError `json:"reused,omitempty"`
	Contention *ContentionError      `json:"contention,omitempty"`
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
	if code := domain.CodeOf(err); code != "" {
		r.Code = code
	}
	switch {
	case errors.As(err, &r.Domain), errors.As(err, &r.Reused), errors.As(err, &r.Contention):
	}
	return r
}

// Typed rebuilds the typed error.
func (r *ErrorReply) Typed() error {
	switch {
	case r.Domain != nil:
		return r.Domain
	case r.Reused != nil:
		return r.Reused
	case r.Contention != nil:
		return r.Contention
	case r.Code == CodeInternal:
		return &InternalError{Message: r.Message}
	}
	return &remoteError{code: r.Code, message: r.Message}
}

// remoteError is an error that crossed the bus with a code but no typed fields (a store
// error): its code and text survive, its Go type (which would name positions and types the
// sender cannot use) does not.
type remoteError struct{ code, message string }

func (e *remoteError) Error() string { return e.message }
func (e *remoteError) Code() string  { return e.code }

// CodeNoWorker: no worker answered a command sent on the durable bus within the bound; the
// command stays queued and a worker that starts later applies it once.
const CodeNoWorker = "no_worker"

// NoWorkerError is a command on the durable bus that no worker took within Waited
// (docs/storage.md, "The command bus and workers").
type NoWorkerError struct {
	Waited    time.Duration
	CommandID string
}

func (e *NoWorkerError) Error() string {
	return "no worker has taken the command; start one with zuno worker (it stays queued, and the first worker applies it once; " +
		resendHint(e.CommandID) + ")"
}

// CodeCommandPending: a command was sent but its sender stopped waiting before the reply (its
// caller gave up, or the wait timed out); it may still be applied, once, and sending it again
// with the same command id returns its result.
const CodeCommandPending = "command_pending"

// CommandPendingError is a sent command whose reply did not come; Cause is why the wait
// ended (the caller's context, or the reply timeout), and errors.Is sees it.
type CommandPendingError struct {
	CommandID string
	Cause     error
}

func (e *CommandPendingError) Error() string {
	return fmt.Sprintf("the command was sent but no reply came (%v): it may still be applied; %s", e.Cause, resendHint(e.CommandID))
}

// Code returns the stable error code.
func (e *CommandPendingError) Code() string { return CodeCommandPending }

func (e *CommandPendingError) Unwrap() error { return e.Cause }

// resendHint tells the caller how to learn the outcome: a command id is applied at most once.
func resendHint(id string) string {
	if id == "" {
		return "send it again with the same command id to learn its result"
	}
	return fmt.Sprintf("send it again with the same command id (%s) to learn its result: it is applied at most once", id)
}

// Code returns the stable error code.
func (e *NoWorkerError) Code() string { return CodeNoWorker }
