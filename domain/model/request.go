// Package model is the provider-neutral contract between the agent turn and the model
// providers: the request a turn sends, the events a response streams, the response they add
// up to, and the typed errors a provider returns. It is pure (no I/O), so the turn driver can
// be tested against it with the scripted provider, and a recorded request can be checked
// without any network.
//
// The adapters that speak to real services live in adapters/provider.
package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"unsafe"
)

// Role says who a message speaks for.
type Role string

const (
	// RoleSystem and RoleDeveloper both carry host instructions. They are kept apart because
	// OpenAI ranks developer below system for reasoning models, and the prompt receipt must
	// record which one the host chose; a provider without the distinction merges them.
	RoleSystem    Role = "system"
	RoleDeveloper Role = "developer"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool is the result of one tool call, answering ToolCallID.
	RoleTool Role = "tool"
)

// Message is one entry of the conversation sent to the model.
type Message struct {
	Role Role   `json:"role"`
	Text string `json:"text,omitempty"`
	// ToolCalls are the calls an assistant message made; they are replayed so the model sees
	// its own earlier calls next to their results.
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// ToolCallID is the call a tool message answers.
	ToolCallID string `json:"toolCallId,omitempty"`
	// IsError marks a tool result that reports a failure, which Anthropic tells the model
	// explicitly; other providers only see the text.
	IsError bool `json:"isError,omitempty"`
	// Reasoning are the reasoning items an assistant message came with (the Responses API),
	// sent back to that API as it requires; other providers ignore them.
	Reasoning []Reasoning `json:"reasoning,omitempty"`
}

// Equal reports whether m and o are the same message, field by field. Identical strings
// compare in constant time, so comparing a conversation with the one it was copied from costs
// little per message: the caches that keep a conversation's work between steps use it to
// check that what they hold is still a prefix of what they are given.
func (m Message) Equal(o Message) bool { return m.equal(&o) }

// equal is Equal without copying either message, which was half the cost of comparing a
// long conversation.
func (m *Message) equal(o *Message) bool {
	return m.Role == o.Role && m.Text == o.Text && m.ToolCallID == o.ToolCallID && m.IsError == o.IsError &&
		equalSlices(m.ToolCalls, o.ToolCalls) && equalSlices(m.Reasoning, o.Reasoning)
}

// CommonPrefix returns how many leading messages a and b have in common (Equal, one by one).
// The caches that keep a conversation's work between steps use it to find how much of what
// they hold is still what they are given, at every step, so it is made cheap: a cache holds
// copies of the messages it was given, which are the same bytes (the same string and slice
// headers), and messages whose bytes are the same are Equal (a string's bytes never change,
// and equalSlices takes two views of one array as equal). So runs of messages are compared
// as memory first, which is several times faster than field by field; a run whose memory
// differs (a message changed, or equal strings held at other addresses, or padding) is
// compared field by field.
func CommonPrefix(a, b []Message) int {
	const run = 32
	n := min(len(a), len(b))
	for i := 0; i < n; {
		j := min(i+run, n)
		if sameMemory(a[i:j], b[i:j]) {
			i = j
			continue
		}
		for ; i < j; i++ {
			if !a[i].equal(&b[i]) {
				return i
			}
		}
	}
	return n
}

// sameMemory reports whether a and b, of one length, hold the same bytes.
func sameMemory(a, b []Message) bool {
	size := len(a) * int(unsafe.Sizeof(Message{}))
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), size), unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), size))
}

// equalSlices is slices.Equal, in constant time for two views of the same array: a copied
// message shares its calls with the original, and comparing them call by call, field by
// field, was most of the cost of comparing a long conversation.
func equalSlices[T comparable](a, b []T) bool {
	if len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) {
		return true
	}
	return slices.Equal(a, b)
}

// Reasoning is a reasoning item: its id, its summary, and its content encrypted by the
// provider, opaque here and returned unchanged so the model keeps its chain of thought across
// steps without the provider storing the conversation.
type Reasoning struct {
	ID               string `json:"id"`
	Summary          string `json:"summary,omitempty"`
	EncryptedContent string `json:"encryptedContent,omitempty"`
}

// ToolCall is a call the model asked for.
type ToolCall struct {
	// ID is the runtime's id of the call, unique in its session (AssignCallIDs): tool events,
	// asks and results name the call by it.
	ID string `json:"id"`
	// ProviderID is the id the provider gave the call, "" if none. It is what the adapter
	// sends back to that provider (WireIDs), and may be empty or repeated (docs/turns.md,
	// "Tool call ids").
	ProviderID string `json:"providerId,omitempty"`
	Name       string `json:"name"`
	// Arguments is the JSON text exactly as the model produced it. It is text, not a decoded
	// value, because a model can emit invalid JSON: that is the model's mistake, reported back
	// to it by the tool validator, not a provider failure, and the log must keep what was
	// actually said.
	Arguments string `json:"arguments"`
}

// Tool declares a tool the model may call.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Schema is the JSON Schema of the arguments object. Empty means "no arguments".
	Schema json.RawMessage `json:"schema,omitempty"`
}

// ToolChoiceMode constrains whether and which tool the model calls.
type ToolChoiceMode string

const (
	// ToolChoiceAuto lets the model decide; it is what the zero ToolChoice means.
	ToolChoiceAuto ToolChoiceMode = "auto"
	// ToolChoiceNone forbids tool calls while still showing the tools, which keeps the prompt
	// (and its cache) identical to the tool-capable steps, e.g. for the step-limit
	// finalisation request.
	ToolChoiceNone     ToolChoiceMode = "none"
	ToolChoiceRequired ToolChoiceMode = "required"
	// ToolChoiceTool forces the tool named in ToolChoice.Name.
	ToolChoiceTool ToolChoiceMode = "tool"
)

// ToolChoice is the tool constraint of a request. The zero value is ToolChoiceAuto.
type ToolChoice struct {
	Mode ToolChoiceMode `json:"mode,omitempty"`
	Name string         `json:"name,omitempty"`
}

// Request is one provider request, in the terms every provider can be mapped from.
type Request struct {
	Model      string     `json:"model"`
	Messages   []Message  `json:"messages"`
	Tools      []Tool     `json:"tools,omitempty"`
	ToolChoice ToolChoice `json:"toolChoice,omitzero"`
	// MaxTokens bounds the output. Zero leaves it to the provider adapter's default, since
	// some APIs (Anthropic) require a value and others are better left unbounded.
	MaxTokens int `json:"maxTokens,omitempty"`
	// PromptCacheKey, when set, asks a provider that routes requests to its prompt cache by
	// a key (OpenAI's prompt_cache_key) to keep the requests of one session together
	// (docs/providers.md, "Prompt caching"). It is no part of the prompt: the receipt's
	// digests leave it out, and the adapter that sends it records it in the request's wire
	// mapping, from which the body is rendered again.
	PromptCacheKey string `json:"-"`
}

// toolNamePattern is the intersection of what OpenAI (64 chars) and Anthropic (128 chars)
// accept, so a tool set valid here is valid for every provider.
var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Validate reports the first fault that every provider would reject, as an invalid_request
// error naming the field. Checking here gives the turn driver one clear error before any
// request is recorded or sent, instead of a different opaque 400 per provider.
func (r Request) Validate() error {
	var c ConversationCheck
	return r.ValidateWith(&c)
}

// ValidateWith is Validate with the conversation checked incrementally by c: across the steps
// of a turn only the new messages are walked.
func (r Request) ValidateWith(c *ConversationCheck) error {
	if r.Model == "" {
		return invalidField("model", "is empty", "choose a model id; `zuno models` lists the ones the provider serves")
	}
	if r.MaxTokens < 0 {
		return invalidField("maxTokens", fmt.Sprintf("is %d", r.MaxTokens), "use 0 for the provider default or a positive limit")
	}
	tools := make(map[string]bool, len(r.Tools))
	// An agent declares the same tools at every step: once c has seen them valid, only the
	// duplicate check (which needs the map anyway) runs again.
	known := c != nil && c.toolsValid(r.Tools)
	for i, t := range r.Tools {
		if known {
			if tools[t.Name] {
				return invalidField(fmt.Sprintf("tools[%d].name", i), fmt.Sprintf("%q is declared twice", t.Name), "declare each tool once")
			}
			tools[t.Name] = true
			continue
		}
		field := fmt.Sprintf("tools[%d]", i)
		if !toolNamePattern.MatchString(t.Name) {
			return invalidField(field+".name", fmt.Sprintf("%q is not 1-64 letters, digits, '_' or '-'", t.Name),
				"rename the tool; providers reject other names")
		}
		if tools[t.Name] {
			return invalidField(field+".name", fmt.Sprintf("%q is declared twice", t.Name), "declare each tool once")
		}
		tools[t.Name] = true
		if err := checkSchema(field+".schema", t.Schema); err != nil {
			return err
		}
	}
	if err := r.validateToolChoice(tools); err != nil {
		return err
	}
	if err := c.Check(r.Messages); err != nil {
		return err
	}
	if !known {
		c.tools = cloneTools(r.Tools)
	}
	return nil
}

// toolsValid reports whether ts are the tools c last saw valid: same names and schemas (what
// the checks read) in the same order.
func (c *ConversationCheck) toolsValid(ts []Tool) bool {
	return c.tools != nil && slices.EqualFunc(c.tools, ts, func(a, b Tool) bool {
		return a.Name == b.Name && bytes.Equal(a.Schema, b.Schema)
	})
}

// cloneTools copies ts deeply: a caller may reuse its slices.
func cloneTools(ts []Tool) []Tool {
	out := make([]Tool, len(ts))
	for i, t := range ts {
		out[i] = Tool{Name: t.Name, Description: t.Description, Schema: bytes.Clone(t.Schema)}
	}
	return out
}

func (r Request) validateToolChoice(tools map[string]bool) error {
	switch r.ToolChoice.Mode {
	case "", ToolChoiceAuto, ToolChoiceNone:
		return nil
	case ToolChoiceRequired:
		if len(tools) == 0 {
			return invalidField("toolChoice.mode", "is required but no tools are declared", "declare tools or use auto")
		}
		return nil
	case ToolChoiceTool:
		if !tools[r.ToolChoice.Name] {
			return invalidField("toolChoice.name", fmt.Sprintf("%q is not a declared tool", r.ToolChoice.Name),
				"name one of the request's tools")
		}
		return nil
	default:
		return invalidField("toolChoice.mode", fmt.Sprintf("%q is not a tool choice", r.ToolChoice.Mode),
			"use auto, none, required or tool")
	}
}

// ConversationCheck enforces the pairing both big APIs require: every tool call of an
// assistant message is answered by a tool message before the conversation moves on, and no
// tool message answers a call that was not made. A run recovered after a crash must
// therefore answer an unsettled call (as uncertain) rather than leave it open.
//
// It validates a conversation incrementally: a turn's conversation only grows,
// so each step checks only the messages added since the last check, instead of walking the
// whole history again. The zero value is ready; it is not safe for concurrent use.
type ConversationCheck struct {
	n         int             // messages already checked
	seen      map[string]bool // every call id, since ids are command ids and must be unique
	open      map[string]bool // calls of the latest assistant message not yet answered
	openOrder []string
	tools     []Tool // the tools last found valid (nil: none yet)
}

// Reset forgets the checked prefix.
func (c *ConversationCheck) Reset() { *c = ConversationCheck{} }

// Checked returns how many messages of the conversation have been checked.
func (c *ConversationCheck) Checked() int { return c.n }

// Check validates msgs, whose first Checked() messages must be the ones checked before (the
// caller resets the check when an earlier message changed). On an error the check is reset.
func (c *ConversationCheck) Check(msgs []Message) (err error) {
	if len(msgs) == 0 {
		return invalidField("messages", "is empty", "send at least one user message")
	}
	if c.n > len(msgs) {
		c.Reset()
	}
	if c.seen == nil {
		c.seen, c.open = map[string]bool{}, map[string]bool{}
	}
	defer func() {
		if err != nil {
			c.Reset()
		}
	}()
	closeOpen := func(i int) error {
		for _, id := range c.openOrder {
			if c.open[id] {
				return invalidField(fmt.Sprintf("messages[%d]", i),
					fmt.Sprintf("follows an assistant message whose tool call %q has no tool result", id),
					"append a tool message with that toolCallId (report the call as failed or uncertain if it never settled)")
			}
		}
		clear(c.open)
		c.openOrder = c.openOrder[:0]
		return nil
	}
	for i := c.n; i < len(msgs); i++ {
		m := msgs[i]
		// The field path is only built for an error: this loop can run over a long
		// conversation.
		field := func() string { return fmt.Sprintf("messages[%d]", i) }
		switch m.Role {
		case RoleSystem, RoleDeveloper, RoleUser:
			if err := closeOpen(i); err != nil {
				return err
			}
			if m.Text == "" {
				return invalidField(field()+".text", "is empty", "drop the message or give it text; providers reject empty "+string(m.Role)+" messages")
			}
		case RoleAssistant:
			if err := closeOpen(i); err != nil {
				return err
			}
			for j, tc := range m.ToolCalls {
				cf := func() string { return fmt.Sprintf("%s.toolCalls[%d]", field(), j) }
				if tc.ID == "" {
					return invalidField(cf()+".id", "is empty", "keep the id the provider gave the call")
				}
				if c.seen[tc.ID] {
					return invalidField(cf()+".id", fmt.Sprintf("%q is used by an earlier tool call", tc.ID), "tool call ids must be unique in a conversation")
				}
				if tc.Name == "" {
					return invalidField(cf()+".name", "is empty", "keep the tool name the model called")
				}
				c.seen[tc.ID] = true
				c.open[tc.ID] = true
				c.openOrder = append(c.openOrder, tc.ID)
			}
		case RoleTool:
			if m.ToolCallID == "" {
				return invalidField(field()+".toolCallId", "is empty", "name the tool call this result answers")
			}
			if !c.open[m.ToolCallID] {
				return invalidField(field()+".toolCallId",
					fmt.Sprintf("%q is not an unanswered call of the preceding assistant message", m.ToolCallID),
					"put each tool result right after the assistant message that made the call, once per call")
			}
			delete(c.open, m.ToolCallID)
		default:
			return invalidField(field()+".role", fmt.Sprintf("%q is not a role", m.Role), "use system, developer, user, assistant or tool")
		}
	}
	if err := closeOpen(len(msgs)); err != nil {
		return err
	}
	c.n = len(msgs)
	return nil
}

func checkSchema(field string, schema json.RawMessage) error {
	if len(schema) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(schema, &obj); err != nil || obj == nil {
		return invalidField(field, "is not a JSON object", "give a JSON Schema object such as {\"type\":\"object\",\"properties\":{}}")
	}
	if t, ok := obj["type"]; ok && string(t) != `"object"` {
		return invalidField(field, fmt.Sprintf("has type %s", t), "tool arguments are an object: use \"type\": \"object\"")
	}
	return nil
}

// SchemaOrEmpty returns the tool's schema, or an empty object schema if it has none:
// providers require an object schema even for a tool that takes no arguments.
func (t Tool) SchemaOrEmpty() json.RawMessage {
	if len(t.Schema) == 0 {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return t.Schema
}

// ValidateFor is Validate with the error attributed to provider, as an adapter reports it.
func (r Request) ValidateFor(provider string) error {
	var c ConversationCheck
	return r.ValidateForWith(provider, &c)
}

// ValidateForWith is ValidateFor with the conversation checked incrementally by c, for an
// adapter that keeps a conversation's state between its requests.
func (r Request) ValidateForWith(provider string, c *ConversationCheck) error {
	err := r.ValidateWith(c)
	var e *Error
	if errors.As(err, &e) {
		e.Provider = provider
	}
	return err
}
