package acp

import (
	"errors"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain"
)

// An error answered to the client is a JSON-RPC error whose data carries Zuno's stable code
// (docs/errors.md), the message and the fix: {"code", "message", "fix"}. The JSON-RPC code is
// the error's class (docs/acp.md, "Errors").
const (
	// codeResourceNotFound is ACP's "Resource not found".
	codeResourceNotFound = -32002
	codeInvalidParams    = -32602
	codeInternal         = -32603
	// codeConflict is Zuno's (JSON-RPC leaves -32000 to -32099 to the implementation): the
	// request conflicts with the log's state (the HTTP face's 409).
	codeConflict = -32009
)

// Codes of refusals only this face makes.
const (
	// CodeNotInitialized: a method other than initialize came before it.
	CodeNotInitialized = "not_initialized"
	// CodeSessionNotOpen: a method names a session this connection neither created nor loaded.
	CodeSessionNotOpen = "session_not_open"
	// CodePromptRunning: a prompt came while the session's previous prompt still runs.
	CodePromptRunning = "prompt_running"
	// CodeAskNotPending: the client's answer to a permission request came after the ask was
	// answered (by another face) or ended; it is not recorded (seeds 004: a committed reply
	// is final, and a second reply is answered 404 over HTTP).
	CodeAskNotPending = "ask_not_pending"
)

func errData(code, message, fix string) map[string]string {
	d := map[string]string{"code": code, "message": message}
	if fix != "" {
		d["fix"] = fix
	}
	return d
}

func invalidParams(code, message, fix string) error {
	return &sdk.RequestError{Code: codeInvalidParams, Message: "Invalid params", Data: errData(code, message, fix)}
}

func busy(sid string) error {
	return &sdk.RequestError{Code: codeInvalidRequest, Message: "Invalid request",
		Data: errData(CodePromptRunning, "session "+sid+" is running a prompt", "wait for its answer, or send session/cancel")}
}

// invalidParamCodes are the refusals of what the client sent: -32602.
var invalidParamCodes = map[string]bool{"bad_request": true, "question_item_not_found": true, "bad_id": true, "invalid_argument": true,
	"unknown_agent": true, app.CodeWorkspaceNotFound: true, "log_in_workspace": true, "model_refused": true}

// conflictCodes are the refusals of a request the log's state has overtaken: -32009.
var conflictCodes = map[string]bool{"stale_revision": true, "command_id_reused": true, "question_item_answered": true,
	"session_busy": true, "turn_in_progress": true, "session_pruned": true, "turn_suspended": true}

// toRPC is the JSON-RPC error of an error the Application returned.
func toRPC(err error) error {
	var re *sdk.RequestError
	if err == nil || errors.As(err, &re) {
		return err
	}
	code := app.CodeOf(err)
	fix := ""
	var de *domain.Error
	if errors.As(err, &de) {
		fix = de.Fix
	}
	data := errData(code, err.Error(), fix)
	switch {
	case code == domain.CodeSessionNotFound:
		return &sdk.RequestError{Code: codeResourceNotFound, Message: "Resource not found", Data: data}
	case invalidParamCodes[code]:
		return &sdk.RequestError{Code: codeInvalidParams, Message: "Invalid params", Data: data}
	case conflictCodes[code]:
		return &sdk.RequestError{Code: codeConflict, Message: "Conflict", Data: data}
	case code == "":
		data["code"] = "internal"
	}
	return &sdk.RequestError{Code: codeInternal, Message: "Internal error", Data: data}
}
