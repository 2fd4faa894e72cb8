package bg

import "fmt"

// Stable error codes. They reach the model's tool results, so they never
// change meaning.
const (
	// CodeInvalidArguments: the request itself is wrong (a cursor past the
	// end, a path outside the artifact roots, an empty command).
	CodeInvalidArguments = "invalid_arguments"
	// CodeNotFound: no task has that id, or no artifact is at that path.
	CodeNotFound = "not_found"
	// CodeUnavailable: the manager is closed, bash is missing, or a log file
	// can no longer be read.
	CodeUnavailable = "unavailable"
	// CodeExecFailed: the command could not be started.
	CodeExecFailed = "exec_failed"
	// CodeSandboxFailed: the session's sandbox launcher could not wrap the
	// command; nothing ran (never a reason to run it unconfined instead).
	CodeSandboxFailed = "sandbox_failed"
	// CodeSessionArtifactCap: the session's background logs and artifacts already fill
	// its disk cap (tool_output.max_session_artifact_bytes); the command was not started.
	CodeSessionArtifactCap = "session_artifact_cap"
)

// Error is a typed failure of a Manager call. Message is read by models, so
// it says what to do next, not only what went wrong.
type Error struct {
	Code    string
	Field   string // the argument at fault ("cursor", "taskID", "outputPath"), if any
	Message string
	Err     error // the underlying cause, if any
}

func (e *Error) Error() string {
	s := "bg: " + e.Code
	if e.Field != "" {
		s += ": " + e.Field
	}
	s += ": " + e.Message
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

func invalid(field, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidArguments, Field: field, Message: fmt.Sprintf(format, args...)}
}

func notFound(field, format string, args ...any) *Error {
	return &Error{Code: CodeNotFound, Field: field, Message: fmt.Sprintf(format, args...)}
}
