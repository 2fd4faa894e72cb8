package httpapi

import (
	"errors"
	"net/http"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain"
)

// statusOf is the HTTP status of a typed error's code: the code says what happened, the status
// only which class of answer it is. A code not listed is a server error.
var statusOf = map[string]int{
	CodeUnauthorized:   http.StatusUnauthorized,
	CodeCrossOrigin:    http.StatusForbidden,
	CodeBadID:          http.StatusBadRequest,
	CodeBadRequest:     http.StatusBadRequest,
	CodeBodyTooLarge:   http.StatusRequestEntityTooLarge,
	CodeBadLastEventID: http.StatusBadRequest,
	CodeModelRefused:   http.StatusBadRequest,
	"usage":            http.StatusBadRequest,

	"invalid_argument":    http.StatusBadRequest,
	"unknown_agent":       http.StatusBadRequest,
	"unknown_provider":    http.StatusBadRequest,
	"workspace_not_found": http.StatusBadRequest,
	"log_in_workspace":    http.StatusBadRequest,

	CodeRouteNotFound:      http.StatusNotFound,
	CodeAskNotPending:      http.StatusNotFound,
	CodeQuestionNotPending: http.StatusNotFound,
	"session_not_found":    http.StatusNotFound,
	"ask_not_found":        http.StatusNotFound,
	"not_found":            http.StatusNotFound,

	"already_answered":        http.StatusConflict,
	"stale_revision":          http.StatusConflict,
	"question_item_answered":  http.StatusConflict,
	"question_item_not_found": http.StatusBadRequest,
	"command_id_reused":       http.StatusConflict,
	"session_busy":            http.StatusConflict,
	"session_exists":          http.StatusConflict,
	"turn_in_progress":        http.StatusConflict,
	"turn_not_running":        http.StatusConflict,
	"turn_suspended":          http.StatusConflict,
	"turn_open":               http.StatusConflict,
	"session_pruned":          http.StatusConflict,
	"contention":              http.StatusConflict,
	"receipt_mismatch":        http.StatusConflict,

	// The durable bus: no worker is running (503), or the reply did not come in time (504);
	// either way the command may still be applied, and re-sending its commandId tells.
	"no_worker":       http.StatusServiceUnavailable,
	"command_pending": http.StatusGatewayTimeout,
}

// errorBody is {"error": {...}}: the stable code (docs/errors.md), what is wrong, the fix, and
// the field or id at fault when the error names one.
type errorBody struct {
	Error errorJSON `json:"error"`
}

type errorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
	Field   string `json:"field,omitempty"`
	ID      string `json:"id,omitempty"`
}

// writeError writes err as JSON with the status its code maps to.
func writeError(w http.ResponseWriter, err error) {
	out := errorJSON{Code: app.CodeOf(err), Message: err.Error()}
	var de *domain.Error
	var se *Error
	switch {
	case errors.As(err, &de):
		out.Message, out.Fix, out.Field, out.ID = de.Message, de.Fix, de.Field, de.ID
	case errors.As(err, &se):
		out.Message, out.Fix = se.Message, se.Fix
	}
	status, ok := statusOf[out.Code]
	if !ok {
		status = http.StatusInternalServerError
	}
	if out.Code == "" {
		out.Code = "internal"
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="zuno"`)
	}
	writeJSON(w, status, errorBody{out})
}
