package projections

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zuno-run/zuno/events"
)

// Parts is the "part" table: the transcript of a session as parts, one row per user message,
// assistant text and tool call. A tool part is created pending when the provider request that
// asked for it completes, and its "state" follows the call: asking while the permission gate
// waits for an answer, then blocked, or running then settled. A tool part's data also keeps,
// for a confined command, its "sandbox" resolution, from the started event, through every
// later state. Who allowed or refused the call is the permission_decision row of the same
// (session_id, call id), and the request that asked for it the row's request_id column: the
// part's data no longer repeats them (they were a fifth of every tool part; docs/storage.md
// "Bytes per step").
//
// Part ids are stable: "user:<messageId>", "text:<requestId>" and the call id for tool parts
// (call ids are unique within a session: they become command ids). position and ordinal are
// the log position of the event that created the part and the part's index within it, so
// ORDER BY position, ordinal is transcript order.
type Parts struct{}

func (Parts) Name() string     { return "part" }
func (Parts) Tables() []string { return []string{"part"} }

// Part types.
const (
	PartText = "text"
	PartTool = "tool"
)

// textPart is the data of a text part: a user message (MessageID) or an assistant's text
// (RequestID).
type textPart struct {
	Type      string `json:"type"`
	Role      string `json:"role"`
	MessageID string `json:"messageId,omitempty"`
	RequestID string `json:"requestId,omitempty"`
	Text      string `json:"text"`
}

// toolPart is the data of a tool part. Input is the call's arguments as a JSON value when
// they are JSON, else as a JSON string; State is one of the tool*State shapes.
type toolPart struct {
	Type   string          `json:"type"`
	Tool   string          `json:"tool"`
	CallID string          `json:"callId"`
	Input  json.RawMessage `json:"input,omitempty"`
	// Sandbox is how the call was confined.
	Sandbox *events.SandboxResolution `json:"sandbox,omitempty"`
	State   any                       `json:"state"`
}

type toolPendingState struct {
	Status string `json:"status"`
}

// toolAskingState is a call waiting for the answer to its permission ask.
type toolAskingState struct {
	Status   string `json:"status"`
	AskID    string `json:"askId"`
	Key      string `json:"key"`
	Resource string `json:"resource,omitempty"`
	Always   string `json:"always,omitempty"`
}

type toolBlockedState struct {
	Status   string `json:"status"`
	Category string `json:"category"`
	Message  string `json:"message"`
	Fix      string `json:"fix,omitempty"`
	Field    string `json:"field,omitempty"`
	Output   string `json:"output"`
}

type toolRunningState struct {
	Status string `json:"status"`
	Action string `json:"action,omitempty"`
	Group  int    `json:"group"`
}

type toolSettledState struct {
	// Status is the outcome: completed, error, uncertain or cancelled.
	Status     string              `json:"status"`
	ErrorCode  string              `json:"errorCode,omitempty"`
	Output     string              `json:"output"`
	Metadata   events.ToolMetadata `json:"metadata,omitzero"`
	Recovered  bool                `json:"recovered,omitempty"`
	DurationMs int64               `json:"durationMs,omitempty"`
}

func (Parts) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	return applyPart(ctx, tx, partStatements{}, ev, p)
}

// applyPart is Parts' rules, the rows read and written through rows: the table's statements,
// or a rebuild's fold (fold_part.go).
func applyPart(ctx context.Context, tx *Tx, rows partRows, ev events.Recorded, p events.Payload) error {
	switch e := p.(type) {
	case events.UserMessageAppended:
		data := textPart{Type: PartText, Role: "user", MessageID: e.MessageID, Text: e.Text}
		return upsertPart(ctx, tx, rows, ev, 0, e.SessionID, "user:"+e.MessageID, "", "", PartText, data)
	case events.ProviderRequest:
		if e.Status != events.RequestCompleted || e.Response == nil || e.Purpose == events.PurposeCompaction {
			return nil // a compaction's summary is not an answer (docs/compaction.md)
		}
		ordinal := 0
		if e.Response.Text != "" {
			data := textPart{Type: PartText, Role: "assistant", RequestID: e.RequestID, Text: e.Response.Text}
			if err := upsertPart(ctx, tx, rows, ev, ordinal, e.SessionID, "text:"+e.RequestID, e.TurnID, e.RequestID, PartText, data); err != nil {
				return err
			}
			ordinal++
		}
		for _, tc := range e.Response.ToolCalls {
			data := toolPart{Type: PartTool, Tool: tc.Name, CallID: tc.ID,
				Input: toolInput(tc.Arguments), State: toolPendingState{Status: "pending"}}
			if err := upsertPart(ctx, tx, rows, ev, ordinal, e.SessionID, tc.ID, e.TurnID, e.RequestID, PartTool, data); err != nil {
				return err
			}
			ordinal++
		}
	case events.PermissionAsked:
		return setToolState(ctx, tx, rows, ev, toolCall{e.SessionID, e.TurnID, e.RequestID, e.CallID, e.Tool}, toolAskingState{
			Status: "asking", AskID: e.AskID, Key: e.Key, Resource: e.Resource, Always: e.Always}, nil)
	case events.ToolBlocked:
		return setToolState(ctx, tx, rows, ev, toolCall{e.SessionID, e.TurnID, e.RequestID, e.CallID, e.Tool}, toolBlockedState{
			Status: "blocked", Category: e.Category, Message: e.Message, Fix: e.Fix, Field: e.Field, Output: e.Output}, nil)
	case events.ToolStarted:
		return setToolState(ctx, tx, rows, ev, toolCall{e.SessionID, e.TurnID, e.RequestID, e.CallID, e.Tool}, toolRunningState{
			Status: "running", Action: e.Action, Group: e.Group}, e.Sandbox)
	case events.ToolSettled:
		return setToolState(ctx, tx, rows, ev, toolCall{e.SessionID, e.TurnID, e.RequestID, e.CallID, e.Tool}, toolSettledState{
			Status: e.Outcome, ErrorCode: e.ErrorCode, Output: e.Output, Metadata: e.Metadata,
			Recovered: e.Recovered, DurationMs: e.DurationMs}, nil)
	}
	return nil
}

// toolInput is a call's arguments as a JSON value when they parse as one, else as a string:
// the model's bytes are kept either way.
func toolInput(arguments string) json.RawMessage {
	if json.Valid([]byte(arguments)) {
		return json.RawMessage(arguments)
	}
	s, _ := json.Marshal(arguments)
	return s
}

// upsertPart writes a part; a part written again (a message id or call id seen twice) takes
// the newer data and keeps its place in the transcript.
func upsertPart(ctx context.Context, tx *Tx, rows partRows, ev events.Recorded, ordinal int, sessionID, id, turnID, requestID, typ string, data any) error {
	js, err := json.Marshal(data)
	if err != nil {
		return err
	}
	at := tx.eventTime(ev)
	return rows.upsert(ctx, tx, partRow{id: id, sessionID: sessionID, turnID: nullable(turnID), requestID: nullable(requestID),
		typ: typ, data: string(js), position: int64(ev.Position), ordinal: ordinal, created: at, updated: at})
}

// partRow is a part row, its values typed as the upsert binds them.
type partRow struct {
	id, sessionID     string
	turnID, requestID any // NULL or text
	typ, data         string
	position          int64
	ordinal           int
	created, updated  string
}

// partRows reads and writes Parts' rows.
type partRows interface {
	// upsert writes a part; a part written again takes the newer turn, request, type, data and
	// update time, and keeps its place in the transcript (position, ordinal) and its creation.
	upsert(ctx context.Context, tx *Tx, r partRow) error
	// data is the stored data of a part, and whether it exists.
	data(ctx context.Context, tx *Tx, sessionID, id string) (string, bool, error)
}

// partStatements are the part table's statements.
type partStatements struct{}

func (partStatements) upsert(ctx context.Context, tx *Tx, r partRow) error {
	return tx.Exec(ctx, `INSERT INTO part (id, session_id, turn_id, request_id, type, data, position, ordinal, time_created, time_updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id, id) DO UPDATE SET turn_id = excluded.turn_id, request_id = excluded.request_id,
			type = excluded.type, data = excluded.data, time_updated = excluded.time_updated`,
		r.id, r.sessionID, r.turnID, r.requestID, r.typ, r.data, r.position, r.ordinal, r.created, r.updated)
}

func (partStatements) data(ctx context.Context, tx *Tx, sessionID, id string) (string, bool, error) {
	var stored string
	err := tx.get(ctx, &stored, `SELECT data FROM part WHERE session_id = ? AND id = ?`, sessionID, id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return stored, err == nil, err
}

// toolCall names the call a tool event is about.
type toolCall struct{ sessionID, turnID, requestID, callID, tool string }

// setToolState replaces a tool part's state, keeping its tool and input. A part the log never
// created pending (a call blocked before its request was recorded) is created here. A non-nil
// sandbox is recorded on the part; nil keeps what the part has.
func setToolState(ctx context.Context, tx *Tx, rows partRows, ev events.Recorded, c toolCall, state any, sandbox *events.SandboxResolution) error {
	data := toolPart{Type: PartTool, Tool: c.tool, CallID: c.callID}
	stored, found, err := rows.data(ctx, tx, c.sessionID, c.callID)
	if err != nil {
		return err
	}
	if found {
		if err := json.Unmarshal([]byte(stored), &data); err != nil {
			return fmt.Errorf("part %s/%s: stored data is not a tool part: %w", c.sessionID, c.callID, err)
		}
	}
	data.State = state
	if sandbox != nil {
		data.Sandbox = sandbox
	}
	return upsertPart(ctx, tx, rows, ev, 0, c.sessionID, c.callID, c.turnID, c.requestID, PartTool, data)
}

// PromptReceipts is the "prompt_receipt" read model: one row per assembled prompt, its
// metadata and digests. Contents (the receipt's blobs) stay in the event log, which `zuno
// debug prompt` reads. prompt_receipt is a view joining prompt_receipt_row, one row per
// receipt, and prompt_receipt_header, the sections and tool names once per header: a run's
// steps share one (docs/storage.md, "Bytes per step"). prompt_receipt_key holds each row's
// key, its receipt id and its header id; where the log shares the database,
// prompt_receipt_row is a view reading the rest from the receipt's event (adapters/readmodel),
// and only the key is written.
type PromptReceipts struct{}

func (PromptReceipts) Name() string { return "prompt_receipt" }

// Tables lists the views last: a rebuild empties the tables, and a drift check compares the
// views as well.
func (PromptReceipts) Tables() []string {
	return []string{"prompt_receipt_header", "prompt_receipt_key", "prompt_receipt_row", "prompt_receipt"}
}

func (PromptReceipts) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	e, ok := p.(events.PromptAssembled)
	if !ok {
		return nil
	}
	headerID, err := receiptHeader(ctx, tx, e)
	if err != nil {
		return err
	}
	if err := tx.Exec(ctx, `INSERT INTO prompt_receipt_key (session_id, position, id, header_id) VALUES (?, ?, ?, ?)
		ON CONFLICT (session_id, position) DO NOTHING`, e.SessionID, int64(ev.Position), e.ReceiptID, headerID); err != nil {
		return err
	}
	if tx.IsView("prompt_receipt_row") {
		return nil
	}
	return tx.Exec(ctx, `INSERT INTO prompt_receipt_row (id, session_id, event_id, position, model, assembly_digest, actual_digest,
			estimated_input_tokens, context_window, header_id, time_created)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id, position) DO NOTHING`,
		e.ReceiptID, e.SessionID, ev.ID, int64(ev.Position), e.Model, e.AssemblyDigest, e.ActualDigest,
		e.EstimatedInputTokens, e.ContextWindow, headerID, tx.eventTime(ev))
}

// receiptHeader returns the id of the prompt_receipt_header row holding the receipt's
// sections and tool names. A receipt that records its header writes that row (its own id); one
// that leaves it out (HeaderBase, docs/events.md) has its base's, which an earlier event of
// the same session wrote.
func receiptHeader(ctx context.Context, tx *Tx, e events.PromptAssembled) (string, error) {
	if b := e.HeaderBase; b != nil {
		id, err := baseHeader(ctx, tx, e.SessionID, b.ReceiptID)
		if err != nil {
			return "", fmt.Errorf("prompt receipt %s: its header base %s: %w", e.ReceiptID, b.ReceiptID, err)
		}
		return id, nil
	}
	sections := e.Sections
	if sections == nil {
		sections = []events.PromptSection{}
	}
	sectionsJSON, err := json.Marshal(sections)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(e.Tools))
	for _, t := range e.Tools {
		names = append(names, t.Name)
	}
	namesJSON, err := json.Marshal(names)
	if err != nil {
		return "", err
	}
	return e.ReceiptID, tx.Exec(ctx, `INSERT INTO prompt_receipt_header (id, section_count, sections, tool_names)
		VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, e.ReceiptID, len(e.Sections), string(sectionsJSON), string(namesJSON))
}

// baseHeader is the header id of the receipt base, which is the session's receipt before this
// one (a run compacts each receipt against the one before it): the last row of the session's
// range of prompt_receipt_key, whose key is (session_id, position). A base found elsewhere (an
// earlier receipt, another session's) is looked up by id, which reads the table: the table
// keeps no index by id (docs/storage.md "Bytes per step").
func baseHeader(ctx context.Context, tx *Tx, sessionID, base string) (string, error) {
	var last sql.NullInt64
	if err := tx.get(ctx, &last, `SELECT MAX(position) FROM prompt_receipt_key WHERE session_id = ?`, sessionID); err != nil {
		return "", err
	}
	var id string
	err := tx.get(ctx, &id, `SELECT header_id FROM prompt_receipt_key WHERE session_id = ? AND position = ? AND id = ?`,
		sessionID, last.Int64, base)
	if errors.Is(err, sql.ErrNoRows) {
		err = tx.get(ctx, &id, `SELECT header_id FROM prompt_receipt_key WHERE id = ?`, base)
	}
	return id, err
}

// ProviderRequests is the "provider_request" table: one row per provider request at its
// latest status. Counting "started" events in the event table counts provider calls; this
// table answers what each call was (step, receipt, tokens, finish reason, error).
type ProviderRequests struct{}

func (ProviderRequests) Name() string     { return "provider_request" }
func (ProviderRequests) Tables() []string { return []string{"provider_request"} }

func (ProviderRequests) Apply(ctx context.Context, tx *Tx, ev events.Recorded, p events.Payload) error {
	e, ok := p.(events.ProviderRequest)
	if !ok {
		return nil
	}
	var finish, errorCode any
	var inputTokens, outputTokens, duration any
	if r := e.Response; r != nil {
		finish = nullable(r.FinishReason)
		inputTokens, outputTokens = r.Usage.InputTokens, r.Usage.OutputTokens
	}
	if e.Error != nil {
		errorCode = nullable(e.Error.Code)
	}
	if e.DurationMs != 0 {
		duration = e.DurationMs
	}
	finalization := 0
	if e.StepLimitFinalization != nil {
		finalization = 1
	}
	at := tx.eventTime(ev)
	// The request's identity (turn, step, receipt, provider, model) is the same at every status
	// and kept from the first; what a later status learns is added to it.
	return tx.Exec(ctx, `INSERT INTO provider_request (id, session_id, turn_id, step, status, prompt_receipt_id, provider, model,
			finish_reason, input_tokens, output_tokens, error_code, step_limit_finalization, duration_ms, time_created, time_updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (session_id, step, id) DO UPDATE SET status = excluded.status,
			finish_reason = COALESCE(excluded.finish_reason, provider_request.finish_reason),
			input_tokens = COALESCE(excluded.input_tokens, provider_request.input_tokens),
			output_tokens = COALESCE(excluded.output_tokens, provider_request.output_tokens),
			error_code = COALESCE(excluded.error_code, provider_request.error_code),
			step_limit_finalization = CASE WHEN excluded.step_limit_finalization = 1 THEN 1
				ELSE provider_request.step_limit_finalization END,
			duration_ms = COALESCE(excluded.duration_ms, provider_request.duration_ms),
			time_updated = excluded.time_updated`,
		e.RequestID, e.SessionID, e.TurnID, e.Step, e.Status, nullable(e.PromptReceiptID), e.Provider, e.Model,
		finish, inputTokens, outputTokens, errorCode, finalization, duration, at, at)
}
