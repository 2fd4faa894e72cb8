package httpapi

import (
	"net/http"
	"strconv"

	"github.com/zuno-run/zuno/commands/app"
)

// prompt is GET /api/sessions/{sessionId}/prompt[?step=N][&sensitive=true]: the prompt receipt
// of a step (the latest when no step), expanded and verified, as `zuno debug prompt --format
// json` prints it. Section content is redacted unless sensitive=true.
func (s *Server) prompt(w http.ResponseWriter, r *http.Request, _ string) error {
	step := 0
	if v := r.URL.Query().Get("step"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return &Error{code: CodeBadRequest, Message: "step " + strconv.Quote(v) + " is not a step number", Fix: "pass step=1 or more, or leave it out for the latest"}
		}
		step = n
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	v, err := s.app.Queries.Prompt(ctx, r.PathValue("sessionId"), step, r.URL.Query().Get("sensitive") == "true")
	if err != nil && v.ReceiptID == "" {
		return err
	}
	if err != nil { // a receipt that does not verify is shown with the mismatch, as the CLI does
		return writeJSON(w, http.StatusConflict, map[string]any{"prompt": v, "error": errorOf(err)})
	}
	return writeJSON(w, http.StatusOK, v)
}

// receipt is GET /api/receipts/{receiptId}: a shell call's verification receipt.
func (s *Server) receipt(w http.ResponseWriter, r *http.Request, _ string) error {
	ctx, cancel := s.requestContext(r)
	defer cancel()
	v, err := s.app.Queries.VerificationReceipt(ctx, r.PathValue("receiptId"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

// verifyRequest is POST /api/verify: one session, one stream, or (both empty) the whole log
// and the read models. Anchor files are the CLI's: the server writes no file a client names.
type verifyRequest struct {
	Session string `json:"session,omitempty"`
	Stream  string `json:"stream,omitempty"`
}

// verify runs `zuno verify` and answers its report: 200 when it verified, 409 with the report
// when it did not.
func (s *Server) verify(w http.ResponseWriter, r *http.Request, _ string) error {
	var req verifyRequest
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	if req.Session != "" && !idPattern.MatchString(req.Session) {
		return &Error{code: CodeBadID, Message: "session " + strconv.Quote(req.Session) + " is not an id", Fix: "name a session id (ses_…)"}
	}
	ctx := r.Context()
	rep, err := s.app.Commands.Verify(ctx, app.VerifyRequest{Session: req.Session, Stream: req.Stream})
	if err != nil && !rep.OK && app.CodeOf(err) == "verify_failed" {
		return writeJSON(w, http.StatusConflict, rep)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, rep)
}

// errorOf is err's JSON form.
func errorOf(err error) errorJSON {
	return errorJSON{Code: app.CodeOf(err), Message: err.Error()}
}
