// Package scripted is the `scripted:<file>` model provider: it plays a recorded list of
// model turns, one per request, so demos and end-to-end tests drive the real agent loop
// deterministically and offline.
//
// The file is JSON:
//
//	{"turns": [
//	  {"text": "Let me look.",
//	   "toolCalls": [{"id": "call_1", "name": "read", "arguments": {"path": "go.mod"}}],
//	   "usage": {"inputTokens": 120, "outputTokens": 14}},
//	  {"text": "It is a Go module."}
//	]}
//
// A turn may instead carry "error": {"code": "rate_limit", "message": "...", "retryAfterMs": 500}
// to make that request fail with the typed error, so error paths can be scripted too. A turn's
// "delayMs" (at most 60000) makes the model take that long to answer, as a real one does: a
// parent's step and its children's then happen in the order a person watching would see.
// Usage may also give cacheReadTokens and cacheWriteTokens.
//
// A compaction request (docs/compaction.md) takes no turn of the script: it is answered with
// a summary naming how many messages it summarises and quoting the first user message.
//
// A script that plays a parent and the children it delegates to (docs/delegation.md) adds
// "sessions": [{"when": "lane A", "turns": [...]}, ...]. A request whose first user message
// contains a session's "when" (the first that matches) plays that session's turns, the others
// play the top-level turns; and each request plays the turn numbered by the assistant
// messages its conversation already holds, so a session's later turns, each opening the
// provider anew, continue where its conversation stands.
package scripted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/zuno-run/zuno/domain/model"
	"github.com/zuno-run/zuno/domain/transcript"
)

// Script is a parsed, validated script.
type Script struct {
	Turns    []Turn    `json:"turns"`
	Sessions []Session `json:"sessions,omitempty"`
}

// Session is the turns of the sessions whose first user message contains When.
type Session struct {
	When  string `json:"when"`
	Turns []Turn `json:"turns"`
}

// Turn is what the model "says" in answer to one request.
type Turn struct {
	// DelayMs is how long the model takes before it answers (0: at once).
	DelayMs   int64      `json:"delayMs,omitempty"`
	Text      string     `json:"text,omitempty"`
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	Usage     *Usage     `json:"usage,omitempty"`
	Error     *TurnError `json:"error,omitempty"`
}

// ToolCall is a scripted tool call. Arguments is any JSON object.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Usage is a scripted token count.
type Usage struct {
	InputTokens      int64 `json:"inputTokens"`
	OutputTokens     int64 `json:"outputTokens"`
	CacheReadTokens  int64 `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64 `json:"cacheWriteTokens,omitempty"`
}

// TurnError makes a turn fail instead of answering.
type TurnError struct {
	Code         string `json:"code"`
	Message      string `json:"message,omitempty"`
	RetryAfterMs int64  `json:"retryAfterMs,omitempty"`
}

// scriptableCodes are the codes a turn may fail with: the provider failures a turn driver
// must handle. script_exhausted and script_invalid are the script's own faults.
var scriptableCodes = map[string]bool{
	model.CodeAuth: true, model.CodeRateLimit: true, model.CodeContextOverflow: true,
	model.CodeTransport: true, model.CodeInvalidRequest: true, model.CodeUnknown: true,
}

// Provider plays a script. It is safe for concurrent use; concurrent requests take turns
// in the order they start, which is only deterministic if the caller's order is.
type Provider struct {
	name   string // "scripted:<file>", the provider name in errors
	script Script

	mu       sync.Mutex
	requests int // requests that asked for a turn, including refused ones
	// conv is the conversation of the latest request: the next step's request continues it,
	// and only its new messages are validated (a script plays one session).
	conv model.Conversation
}

// Open reads and validates a script file.
func Open(path string) (*Provider, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		e := model.NewError(model.CodeScriptInvalid, "cannot read the script: "+err.Error(), "check the path after scripted:")
		e.Provider, e.Err = "scripted:"+path, err
		return nil, e
	}
	if s, ok := parsed.Load(cacheKey{path, string(data)}); ok {
		return &Provider{name: "scripted:" + path, script: s.(Script)}, nil
	}
	p, err := Parse(path, data)
	if err == nil {
		parsed.Store(cacheKey{path, string(data)}, p.script)
	}
	return p, err
}

// parsed keeps the scripts this process has validated, by path and content: every turn opens
// its provider anew, and a parent's script with its children's is read again by each of
// their turns. A changed file is a new key. The turns are never changed once parsed.
var parsed sync.Map

type cacheKey struct{ path, content string }

// Parse validates a script; source names it in errors.
func Parse(source string, data []byte) (*Provider, error) {
	s, err := decode(data)
	if err != nil {
		err.Provider = "scripted:" + source
		return nil, err
	}
	return &Provider{name: "scripted:" + source, script: s}, nil
}

// New returns a provider for a script built in code. It is validated like a file.
func New(s Script) (*Provider, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return Parse("script", data)
}

// decode parses strictly, level by level, so that an error names the turn and the field:
// a typo such as "toolcalls" must fail loudly instead of playing a turn without its calls.
// (encoding/json matches field names case-insensitively and ignores unknown ones, hence
// the exact-key decoding in decodeObject.)
func decode(data []byte) (Script, *model.Error) {
	if !utf8.Valid(data) {
		return Script{}, scriptErr("", "is not valid UTF-8", "save the script as UTF-8")
	}
	var turns, sessions []json.RawMessage
	if err := decodeObject("", data, map[string]any{"turns": &turns, "sessions": &sessions}); err != nil {
		return Script{}, err
	}
	var s Script
	var err *model.Error
	if s.Turns, err = decodeTurns("turns", turns); err != nil {
		return Script{}, err
	}
	for i, raw := range sessions {
		field := fmt.Sprintf("sessions[%d]", i)
		var ss Session
		var st []json.RawMessage
		if err := decodeObject(field, raw, map[string]any{"when": &ss.When, "turns": &st}); err != nil {
			return Script{}, err
		}
		if ss.When == "" {
			return Script{}, scriptErr(field+".when", "is empty", "give text the session's first user message contains")
		}
		if ss.Turns, err = decodeTurns(field+".turns", st); err != nil {
			return Script{}, err
		}
		s.Sessions = append(s.Sessions, ss)
	}
	return s, nil
}

func decodeTurns(field string, turns []json.RawMessage) ([]Turn, *model.Error) {
	if len(turns) == 0 {
		return nil, scriptErr(field, "is empty or missing", "give at least one turn")
	}
	out := make([]Turn, len(turns))
	for i, raw := range turns {
		f := fmt.Sprintf("%s[%d]", field, i)
		t, err := decodeTurn(f, raw)
		if err != nil {
			return nil, err
		}
		if err := checkTurn(f, &t); err != nil {
			return nil, err
		}
		out[i] = t
	}
	return out, nil
}

const turnFix = "a turn has text, toolCalls (id, name, arguments), usage (inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens), delayMs (0 to 60000) or error (code, message, retryAfterMs)"

// maxDelayMs bounds a turn's delayMs: a script is a demo or a test, not a wait.
const maxDelayMs = 60000

func decodeTurn(field string, raw json.RawMessage) (Turn, *model.Error) {
	var t Turn
	var calls []json.RawMessage
	var usage, fail json.RawMessage
	if err := decodeObject(field, raw, map[string]any{
		"text": &t.Text, "toolCalls": &calls, "usage": &usage, "error": &fail, "delayMs": &t.DelayMs,
	}); err != nil {
		return Turn{}, err
	}
	if t.DelayMs < 0 || t.DelayMs > maxDelayMs {
		return Turn{}, scriptErr(field+".delayMs", fmt.Sprintf("is %d", t.DelayMs), "give 0 to 60000 milliseconds")
	}
	for j, rc := range calls {
		var c ToolCall
		if err := decodeObject(fmt.Sprintf("%s.toolCalls[%d]", field, j), rc, map[string]any{
			"id": &c.ID, "name": &c.Name, "arguments": &c.Arguments,
		}); err != nil {
			return Turn{}, err
		}
		t.ToolCalls = append(t.ToolCalls, c)
	}
	if present(usage) {
		t.Usage = new(Usage)
		if err := decodeObject(field+".usage", usage, map[string]any{
			"inputTokens": &t.Usage.InputTokens, "outputTokens": &t.Usage.OutputTokens,
			"cacheReadTokens": &t.Usage.CacheReadTokens, "cacheWriteTokens": &t.Usage.CacheWriteTokens,
		}); err != nil {
			return Turn{}, err
		}
	}
	if present(fail) {
		t.Error = new(TurnError)
		if err := decodeObject(field+".error", fail, map[string]any{
			"code": &t.Error.Code, "message": &t.Error.Message, "retryAfterMs": &t.Error.RetryAfterMs,
		}); err != nil {
			return Turn{}, err
		}
	}
	return t, nil
}

func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// decodeObject decodes a JSON object whose keys must be exactly those of fields, each into
// its destination.
func decodeObject(field string, data []byte, fields map[string]any) *model.Error {
	join := func(name string) string {
		if field == "" {
			return name
		}
		return field + "." + name
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return scriptErr(field, fmt.Sprintf("is a JSON %s, want an object", typ.Value), turnFix)
		}
		return scriptErr(field, "is not valid JSON: "+strings.TrimPrefix(err.Error(), "json: "), "fix the JSON syntax")
	}
	if obj == nil {
		return scriptErr(field, "is null, want an object", turnFix)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys) // report the same fault on every run
	for _, k := range keys {
		dst, ok := fields[k]
		if !ok {
			return scriptErr(join(k), "is not a known field", turnFix)
		}
		if err := json.Unmarshal(obj[k], dst); err != nil {
			var typ *json.UnmarshalTypeError
			if errors.As(err, &typ) {
				return scriptErr(join(k), fmt.Sprintf("is a JSON %s, want %s", typ.Value, jsonKind(typ.Type)), turnFix)
			}
			return scriptErr(join(k), "is not valid: "+err.Error(), turnFix)
		}
	}
	return nil
}

func checkTurn(field string, t *Turn) *model.Error {
	if t.Error != nil {
		if t.Text != "" || len(t.ToolCalls) > 0 || t.Usage != nil {
			return scriptErr(field+".error", "is given together with an answer", "a turn either answers or fails; split it into two turns")
		}
		if !scriptableCodes[t.Error.Code] {
			return scriptErr(field+".error.code", fmt.Sprintf("%q is not a provider error code", t.Error.Code),
				"use auth, rate_limit, context_overflow, transport, invalid_request or unknown")
		}
		if t.Error.RetryAfterMs < 0 {
			return scriptErr(field+".error.retryAfterMs", "is negative", "give a wait in milliseconds, or leave it out")
		}
		return nil
	}
	if t.Text == "" && len(t.ToolCalls) == 0 {
		return scriptErr(field, "has neither text nor toolCalls", "give the turn some text or tool calls")
	}
	for j := range t.ToolCalls {
		c := &t.ToolCalls[j]
		cf := fmt.Sprintf("%s.toolCalls[%d]", field, j)
		// An id may be empty or repeated, as real servers send them: the runtime owns call ids
		// (docs/turns.md), so a script can play such a server.
		if c.Name == "" {
			return scriptErr(cf+".name", "is empty", "name the tool to call")
		}
		if len(c.Arguments) == 0 {
			c.Arguments = json.RawMessage(`{}`)
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(c.Arguments, &obj); err != nil || obj == nil {
			return scriptErr(cf+".arguments", "is not a JSON object", `write the arguments as an object, e.g. {"path": "go.mod"}`)
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, c.Arguments) // valid: it just unmarshalled
		c.Arguments = compact.Bytes()
	}
	if u := t.Usage; u != nil && (u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0) {
		return scriptErr(field+".usage", "has a negative count", "token counts are zero or more")
	}
	return nil
}

// jsonKind names a Go type by the JSON that decodes into it, for a script author who never
// sees the Go types.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return t.String()
}

func scriptErr(field, message, fix string) *model.Error {
	subject := field
	if subject == "" {
		subject = "the script"
	}
	e := model.NewError(model.CodeScriptInvalid, subject+" "+message, fix)
	e.Field = field
	return e
}

// Turns returns how many turns the script has.
func (p *Provider) Turns() int { return len(p.script.Turns) }

// Used returns how many turns requests have consumed.
func (p *Provider) Used() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return min(p.requests, len(p.script.Turns))
}

// take consumes the turn req plays: the next one, or in a script with sessions the one its
// conversation has reached.
func (p *Provider) take(req model.Request) (int, *Turn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.script.Sessions) > 0 {
		return p.takeFor(req)
	}
	p.requests++
	if p.requests > len(p.script.Turns) {
		e := model.NewError(model.CodeScriptExhausted,
			fmt.Sprintf("the script has %d turns and all were played; request %d has no turn", len(p.script.Turns), p.requests),
			"add a turn to the script for this request, or end the scenario earlier")
		e.Provider = p.name
		return 0, nil, e
	}
	i := p.requests - 1
	return i, &p.script.Turns[i], nil
}

// Stream plays the next turn. The request is validated like a real provider would, so a
// scripted test catches a malformed conversation too.
func (p *Provider) Stream(ctx context.Context, req model.Request) model.Stream {
	return func(yield func(model.Event, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		// A request the provider would refuse never reaches it, so it takes no turn.
		if err := p.validate(req); err != nil {
			yield(nil, err)
			return
		}
		if summary, ok := compactionSummary(req); ok {
			// A compaction request takes no turn: the script plays the session's own steps.
			for _, ev := range turnEvents(-1, req.Model, &Turn{Text: summary}) {
				if !yield(ev, nil) {
					return
				}
			}
			return
		}
		i, turn, err := p.take(req)
		if err != nil {
			yield(nil, err)
			return
		}
		if err := delay(ctx, turn.DelayMs); err != nil {
			yield(nil, err)
			return
		}
		if turn.Error != nil {
			yield(nil, p.turnError(i, turn.Error))
			return
		}
		for _, ev := range turnEvents(i, req.Model, turn) {
			if err := ctx.Err(); err != nil {
				yield(nil, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// compactionSummary answers a compaction request (docs/compaction.md), one ending with the
// host's compaction instruction, with a summary that names how many messages it summarises
// and quotes the first user message, so a script with sessions still recognises the session
// by its first user message after the compaction.
func compactionSummary(req model.Request) (string, bool) {
	n := len(req.Messages)
	if n == 0 || req.Messages[n-1].Role != model.RoleDeveloper || req.Messages[n-1].Text != transcript.CompactionInstruction {
		return "", false
	}
	first, count := "", 0
	for _, m := range req.Messages[:n-1] {
		if m.Role == model.RoleSystem || m.Role == model.RoleDeveloper {
			continue
		}
		count++
		if m.Role == model.RoleUser && first == "" {
			first = m.Text
		}
	}
	if _, ok := transcript.SummarisedResponses(first); ok {
		// An earlier summary: quote what it quoted, so summaries do not nest.
		if i := strings.Index(first, summaryQuote); i >= 0 {
			first = first[i+len(summaryQuote):]
		}
	}
	return fmt.Sprintf("Scripted summary of %d messages.%s%s", count, summaryQuote, first), true
}

// summaryQuote introduces the first user message in a scripted summary.
const summaryQuote = " The conversation began with: "

// validate checks req as a real provider would, the conversation from where the previous
// request's stopped.
// delay waits ms milliseconds, or until ctx ends.
func delay(ctx context.Context, ms int64) error {
	if ms <= 0 {
		return nil
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (p *Provider) validate(req model.Request) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.conv.Validate(p.name, req)
}

func (p *Provider) turnError(i int, te *TurnError) *model.Error {
	msg := te.Message
	if msg == "" {
		msg = "scripted failure"
	}
	retry := time.Duration(te.RetryAfterMs) * time.Millisecond
	fix := fmt.Sprintf("turn %d of the script fails on purpose; the next request plays the next turn", i)
	if te.Code == model.CodeRateLimit {
		fix = model.RateLimitFix(retry)
	}
	e := model.NewError(te.Code, msg, fix)
	e.Provider, e.RetryAfter = p.name, retry
	return e
}

// turnEvents renders a turn as a stream: the text in a few chunks and each call's
// arguments in two pieces, so consumers exercise the same delta handling as with a real
// provider. The split points depend only on the turn, keeping runs deterministic.
func turnEvents(i int, modelID string, t *Turn) []model.Event {
	events := []model.Event{model.ResponseStart{ID: fmt.Sprintf("scripted-turn-%d", i), Model: modelID}}
	for _, chunk := range chunks(t.Text, 3) {
		events = append(events, model.TextDelta{Text: chunk})
	}
	for j, c := range t.ToolCalls {
		args, key := string(c.Arguments), strconv.Itoa(j) // the index keys the call, as on the wire
		events = append(events, model.ToolCallStart{ID: key, ProviderID: c.ID, Name: c.Name})
		for _, piece := range chunks(args, 2) {
			events = append(events, model.ToolCallArgsDelta{ID: key, Delta: piece})
		}
		events = append(events, model.ToolCallEnd{ID: key, ProviderID: c.ID, Name: c.Name, Arguments: args})
	}
	if u := t.Usage; u != nil {
		// Scripted counts are written like Anthropic's or OpenAI's alike, as the total input.
		events = append(events, model.UsageReport{Usage: model.Usage{
			InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
			CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens,
		}})
	}
	reason, raw := model.FinishStop, "stop"
	if len(t.ToolCalls) > 0 {
		reason, raw = model.FinishToolCalls, "tool_calls"
	}
	return append(events, model.Finish{Reason: reason, ProviderReason: raw})
}

// chunks splits s into at most n non-empty pieces of about equal length, on rune
// boundaries.
func chunks(s string, n int) []string {
	runes := utf8.RuneCountInString(s)
	if runes == 0 {
		return nil
	}
	n = min(n, runes)
	size := (runes + n - 1) / n
	var out []string
	for len(s) > 0 {
		cut, count := 0, 0
		for cut < len(s) && count < size {
			_, w := utf8.DecodeRuneInString(s[cut:])
			cut += w
			count++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return out
}

// Models lists the one pseudo-model: a script answers whatever model id is requested.
func (p *Provider) Models(ctx context.Context) ([]model.ModelInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return []model.ModelInfo{{
		ID: "scripted", DisplayName: p.name,
		Tools: model.Supported, Reasoning: model.Unsupported,
	}}, nil
}

var _ model.Provider = (*Provider)(nil)

// takeFor picks the session script of req's conversation and its turn there.
func (p *Provider) takeFor(req model.Request) (int, *Turn, error) {
	p.requests++
	turns, name := p.script.Turns, "turns"
	first, played := "", 0
	for _, m := range req.Messages {
		switch {
		case m.Role == model.RoleUser && first == "":
			first = m.Text
		case m.Role == model.RoleAssistant:
			played++
		}
		if n, ok := transcript.SummarisedResponses(m.Text); ok && m.Role == model.RoleUser {
			played += n // a compaction's summary stands for the answers it replaced
		}
	}
	for k, s := range p.script.Sessions {
		if strings.Contains(first, s.When) {
			turns, name = s.Turns, fmt.Sprintf("sessions[%d].turns", k)
			break
		}
	}
	if played >= len(turns) {
		e := model.NewError(model.CodeScriptExhausted,
			fmt.Sprintf("%s has %d turns and the conversation has played them all", name, len(turns)),
			"add a turn to "+name+" for this request, or end the scenario earlier")
		e.Provider = p.name
		return 0, nil, e
	}
	return played, &turns[played], nil
}
