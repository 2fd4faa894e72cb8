package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// route is one endpoint: its method and path pattern (net/http's), whether it writes (and so
// must come from the same origin and records an actor), and its handler.
type route struct {
	method, pattern string
	write           bool
	handle          func(w http.ResponseWriter, r *http.Request, actor string) error
}

// table is every route the server answers; /openapi.json documents exactly these
// (TestOpenAPIMatchesRoutes).
func (s *Server) table() []route {
	return []route{
		{"GET", "/openapi.json", false, s.openAPI},
		{"GET", "/metrics", false, s.metrics},
		{"GET", "/api/sessions", false, s.listSessions},
		{"POST", "/api/sessions", true, s.startSession},
		{"GET", "/api/sessions/{sessionId}", false, s.getSession},
		{"POST", "/api/sessions/{sessionId}/messages", true, s.postMessage},
		{"POST", "/api/session/prune", true, s.prune},
		{"GET", "/api/sessions/{sessionId}/plan", false, s.plan},
		{"GET", "/api/sessions/{sessionId}/goal", false, s.goal},
		{"GET", "/api/sessions/{sessionId}/todos", false, s.todos},
		{"GET", "/api/sessions/{sessionId}/jobs", false, s.jobs},
		{"GET", "/api/sessions/{sessionId}/jobs/{jobId}", false, s.job},
		{"GET", "/api/sessions/{sessionId}/inbox", false, s.inbox},
		{"POST", "/api/sessions/{sessionId}/abort", true, s.abort},
		{"GET", "/api/sessions/{sessionId}/asks", false, s.listAsks},
		{"POST", "/api/sessions/{sessionId}/asks/{askId}/reply", true, s.reply},
		{"GET", "/api/session/questions", false, s.listQuestions},
		{"POST", "/api/session/question/reply", true, s.replyQuestion},
		{"GET", "/api/sessions/{sessionId}/prompt", false, s.prompt},
		{"GET", "/api/sessions/{sessionId}/events", false, s.sessionEvents},
		{"GET", "/api/events", false, s.allEvents},
		{"GET", "/api/receipts/{receiptId}", false, s.receipt},
		{"POST", "/api/verify", true, s.verify},
	}
}

// guard is what every request passes before its handler: a body limit, authentication, the
// CSRF check on writes, and the path's ids checked; a handler's error is written as JSON.
// Nothing here logs a header's value.
func (s *Server) guard(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
		actor, err := s.authenticate(r)
		if err == nil && rt.write {
			err = sameOrigin(r)
		}
		if err == nil {
			err = checkIDs(r, rt.pattern)
		}
		if err == nil {
			err = rt.handle(w, r, actor)
		}
		if err != nil && !errors.Is(err, errWritten) {
			writeError(w, err)
		}
		s.logf("%s %s %s %s", r.Method, rt.pattern, orDash(actor), time.Since(start).Round(time.Microsecond))
	})
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// errWritten is a handler's error after it has written its response (a stream that ended).
var errWritten = errors.New("response written")

// idPattern is what an id in a path may be: Zuno's ids (ses_…, ask_…, rcp_…) and clients'
// names, never a path separator, a dot-dot, a NUL or anything to escape.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,200}$`)

// CodeBadID: an id in the path is not an id.
const CodeBadID = "bad_id"

// checkIDs refuses a path whose wildcards are not plain ids: ../, %2e%2e, an encoded slash or
// a NUL never reaches a query.
func checkIDs(r *http.Request, pattern string) error {
	for _, part := range strings.Split(pattern, "/") {
		name, ok := strings.CutPrefix(part, "{")
		if !ok {
			continue
		}
		name = strings.TrimSuffix(name, "}")
		if v := r.PathValue(name); !idPattern.MatchString(v) {
			return &Error{code: CodeBadID, Message: fmt.Sprintf("%s %q is not an id", name, v),
				Fix: "ids are letters, digits, '_' and '-' (ses_…, ask_…, rcp_…)"}
		}
	}
	return nil
}

// Codes of a body the server does not take.
const (
	// CodeBadRequest: the body or a query parameter is not what the route takes.
	CodeBadRequest = "bad_request"
	// CodeBodyTooLarge: the body is over the server's limit (Config.MaxBody).
	CodeBodyTooLarge = "body_too_large"
)

// decode reads the request's JSON body into v strictly: one object, no unknown field.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	return bodyError(err)
}

// bodyError is the typed form of a failure to read or decode a body.
func bodyError(err error) error {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return &Error{code: CodeBodyTooLarge, Message: fmt.Sprintf("the body is over %d bytes", tooLarge.Limit),
			Fix: "send a smaller request"}
	case err != nil:
		return &Error{code: CodeBadRequest, Message: "the body is not valid: " + err.Error(),
			Fix: "send one JSON object with the fields /openapi.json lists"}
	}
	return nil
}

// decodeOptional is decode for a body that may be empty (or only white space).
func decodeOptional(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return bodyError(err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	return decode(r, v)
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}

// requestContext bounds a handler's work by the request and the server's write timeout.
func (s *Server) requestContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.cfg.WriteTimeout)
}
