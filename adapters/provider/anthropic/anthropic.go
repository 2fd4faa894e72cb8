// Package anthropic is the model provider for Anthropic's Messages API, built on
// github.com/anthropics/anthropic-sdk-go/v2.
//
// Overload (HTTP 529, or an overloaded_error event inside a stream) is reported as
// rate_limit, not transport: both mean "the service asks you to back off; the request
// itself is fine", so the turn driver's answer is the same (wait, then retry the same
// request), while transport would suggest checking the network, which is wrong advice.
// The fix text and ProviderCode ("overloaded_error") keep the two apart for people.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/zuno-run/zuno/adapters/provider/internal/wire"
	"github.com/zuno-run/zuno/domain/model"
)

// DefaultBaseURL is Anthropic's endpoint; the SDK appends v1/messages to it.
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultMaxTokens is the output limit sent when a request sets none. The API requires a
// value; 8192 is within every current model's output limit and enough for a large edit.
const DefaultMaxTokens = 8192

// Options configure a provider. The zero value talks to Anthropic with the key in
// ANTHROPIC_API_KEY.
type Options struct {
	// BaseURL defaults to ANTHROPIC_BASE_URL, then DefaultBaseURL.
	BaseURL string
	// APIKey defaults to ANTHROPIC_API_KEY.
	APIKey     string
	HTTPClient *http.Client
	// MaxRetries is how often the SDK itself retries. It defaults to none: the turn driver
	// retries, so that every attempt is a provider request in the log.
	MaxRetries int
	// DefaultMaxTokens replaces DefaultMaxTokens.
	DefaultMaxTokens int
	// Headers are sent with every request (a gateway's routing or tenant header).
	Headers map[string]string
}

// Provider is the Anthropic model provider. It is safe for concurrent use.
type Provider struct {
	ep        wire.Endpoint
	client    sdk.Client
	keyless   bool // no key configured for Anthropic's own endpoint
	maxTokens int
}

// New returns a provider. It reads the environment only for options left empty.
func New(o Options) *Provider {
	if o.BaseURL == "" {
		o.BaseURL = os.Getenv("ANTHROPIC_BASE_URL")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.APIKey == "" {
		o.APIKey = os.Getenv("ANTHROPIC_API_KEY")
	}
	if o.DefaultMaxTokens <= 0 {
		o.DefaultMaxTokens = DefaultMaxTokens
	}
	// WithoutEnvironmentDefaults keeps the SDK's own credential chain (profiles on disk,
	// federation, other ANTHROPIC_* variables) out: what is sent must be what the options say.
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(o.BaseURL),
		option.WithMaxRetries(o.MaxRetries),
	}
	if o.APIKey != "" {
		opts = append(opts, option.WithAPIKey(o.APIKey))
	}
	if o.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(o.HTTPClient))
	}
	for k, v := range o.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return &Provider{
		ep:     wire.Endpoint{Provider: "anthropic", BaseURL: o.BaseURL, KeyEnv: "ANTHROPIC_API_KEY"},
		client: sdk.NewClient(opts...),
		// A gateway at another URL may add the key itself, so only Anthropic's own
		// endpoint is refused up front.
		keyless:   o.APIKey == "" && strings.TrimSuffix(o.BaseURL, "/") == DefaultBaseURL,
		maxTokens: o.DefaultMaxTokens,
	}
}

var _ model.Provider = (*Provider)(nil)

// Stream sends req as a streamed message.
func (p *Provider) Stream(ctx context.Context, req model.Request) model.Stream {
	return func(yield func(model.Event, error) bool) {
		if err := req.ValidateFor(p.ep.Provider); err != nil {
			yield(nil, err)
			return
		}
		if p.keyless {
			yield(nil, p.noKey())
			return
		}
		params, err := p.params(req)
		if err != nil {
			yield(nil, err)
			return
		}
		s := p.client.Messages.NewStreaming(ctx, params, option.WithMiddleware(wire.Tap(ctx, p.Mapping())))
		defer s.Close()
		st := eventState{blocks: map[int64]*block{}}
		for s.Next() {
			for _, ev := range st.events(s.Current()) {
				if !yield(ev, nil) {
					return
				}
			}
		}
		if err := s.Err(); err != nil {
			yield(nil, p.classify(ctx, err, req.Model))
			return
		}
		if !st.stopped {
			yield(nil, p.ep.Truncated())
			return
		}
		for _, ev := range st.end() {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Adapter is the name of the recorded Messages mapping.
const Adapter = "anthropic.messages"

// MappingVersion versions how params turns a request into a Messages API body (the system
// prompt's gathering, merged roles, cache breakpoints); bump it with any change to the bytes
// (docs/turns.md, "Wire receipts").
const MappingVersion = 1

// SettingCacheControl names, in the recorded mapping, where the body asks Anthropic to cache
// (docs/providers.md, "Prompt caching"). Version 1 bodies have always carried these
// breakpoints (markCacheBreakpoints); the setting says so in the record and changes no byte,
// so a request recorded without it renders as it did.
const (
	SettingCacheControl = "cacheControl"
	CacheBreakpoints    = "ephemeral: system, tools, last message"
)

// Mapping is how this provider builds bodies: the Messages mapping with its default output
// limit, which a request without one is sent with, and its cache breakpoints.
func (p *Provider) Mapping() wire.Mapping {
	return wire.Mapping{Adapter: Adapter, Version: MappingVersion,
		Settings: map[string]string{"defaultMaxTokens": strconv.Itoa(p.maxTokens), SettingCacheControl: CacheBreakpoints}}
}

// RenderWire returns the body Stream would send for req, built by the SDK as a real request
// is, without sending it.
func (p *Provider) RenderWire(req model.Request) ([]byte, error) {
	if err := req.ValidateFor(p.ep.Provider); err != nil {
		return nil, err
	}
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	return wire.Render(func(mw wire.Middleware) error {
		s := p.client.Messages.NewStreaming(context.Background(), params, option.WithMiddleware(mw))
		defer s.Close()
		return s.Err()
	})
}

// ForMapping returns a provider that renders bodies with a recorded mapping's settings; it
// is never sent anything.
func ForMapping(settings map[string]string) (*Provider, error) {
	n, err := strconv.Atoi(settings["defaultMaxTokens"])
	if err != nil || n <= 0 {
		return nil, fmt.Errorf("defaultMaxTokens %q is not a positive number", settings["defaultMaxTokens"])
	}
	return New(Options{BaseURL: "http://wire-render.invalid", APIKey: "-", DefaultMaxTokens: n}), nil
}

func (p *Provider) noKey() *model.Error {
	e := model.NewError(model.CodeAuth, "no API key is configured",
		"export ZUNO_ANTHROPIC_API_KEY, or store it with zuno auth set anthropic, or export ANTHROPIC_API_KEY")
	e.Provider = p.ep.Provider
	return e
}

func (p *Provider) params(req model.Request) (sdk.MessageNewParams, error) {
	params := sdk.MessageNewParams{
		Model:     sdk.Model(req.Model),
		MaxTokens: int64(p.maxTokens),
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	msgs := req.Messages
	// Anthropic has one system prompt, outside the conversation, and no developer role: the
	// leading system and developer messages form it, in order.
	for len(msgs) > 0 && (msgs[0].Role == model.RoleSystem || msgs[0].Role == model.RoleDeveloper) {
		params.System = append(params.System, sdk.TextBlockParam{Text: msgs[0].Text})
		msgs = msgs[1:]
	}
	var ids model.WireIDs
	for _, m := range msgs {
		role, blocks := contentBlocks(m, &ids)
		if len(blocks) == 0 {
			continue // an empty assistant turn; the API refuses empty content
		}
		// Consecutive messages of one role become one message: all results of a step's tool
		// calls must arrive in the one user message that follows the calls.
		if n := len(params.Messages); n > 0 && messageRole(params.Messages[n-1]) == role {
			appendBlocks(&params.Messages[n-1], blocks)
			continue
		}
		if role == model.RoleAssistant {
			params.Messages = append(params.Messages, sdk.NewAssistantMessage(blocks...))
		} else {
			params.Messages = append(params.Messages, sdk.NewUserMessage(blocks...))
		}
	}
	if len(params.Messages) == 0 {
		e := model.NewError(model.CodeInvalidRequest, "the request has only system and developer messages",
			"add a user message; Anthropic needs at least one")
		e.Provider, e.Field = p.ep.Provider, "messages"
		return params, e
	}
	for _, t := range req.Tools {
		schema, err := inputSchema(t.SchemaOrEmpty())
		if err != nil {
			return params, fmt.Errorf("anthropic: tool %q schema: %w", t.Name, err)
		}
		tool := sdk.ToolUnionParamOfTool(schema, t.Name)
		if t.Description != "" {
			tool.OfTool.Description = sdk.String(t.Description)
		}
		params.Tools = append(params.Tools, tool)
	}
	switch req.ToolChoice.Mode {
	case model.ToolChoiceAuto:
		params.ToolChoice.OfAuto = &sdk.ToolChoiceAutoParam{}
	case model.ToolChoiceNone:
		params.ToolChoice.OfNone = &sdk.ToolChoiceNoneParam{}
	case model.ToolChoiceRequired:
		params.ToolChoice.OfAny = &sdk.ToolChoiceAnyParam{}
	case model.ToolChoiceTool:
		params.ToolChoice = sdk.ToolChoiceParamOfTool(req.ToolChoice.Name)
	}
	// Cache breakpoints always: an agent resends a long, growing prefix every step, and
	// without breakpoints Anthropic caches none of it.
	markCacheBreakpoints(&params)
	return params, nil
}

// contentBlocks renders one message. A system or developer message after the conversation
// has begun has no place in Anthropic's API but the user turn, so it goes there as text.
// Call ids go back as the provider gave them (ids maps the runtime's, docs/turns.md).
func contentBlocks(m model.Message, ids *model.WireIDs) (model.Role, []sdk.ContentBlockParamUnion) {
	switch m.Role {
	case model.RoleAssistant:
		var blocks []sdk.ContentBlockParamUnion
		if m.Text != "" {
			blocks = append(blocks, sdk.NewTextBlock(m.Text))
		}
		wire := ids.Calls(m.ToolCalls)
		for i, c := range m.ToolCalls {
			blocks = append(blocks, sdk.NewToolUseBlock(wire[i], toolInput(c.Arguments), c.Name))
		}
		return model.RoleAssistant, blocks
	case model.RoleTool:
		result := sdk.ToolResultBlockParam{ToolUseID: ids.Result(m.ToolCallID)}
		if m.Text != "" { // the API refuses an empty text block, but not an empty result
			result.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Text}}}
		}
		if m.IsError {
			result.IsError = sdk.Bool(true)
		}
		return model.RoleUser, []sdk.ContentBlockParamUnion{{OfToolResult: &result}}
	default:
		return model.RoleUser, []sdk.ContentBlockParamUnion{sdk.NewTextBlock(m.Text)}
	}
}

// toolInput replays a call's arguments. The API requires an object; arguments that are not
// one can only come from another provider's model, and are replaced by an empty object
// rather than making the whole conversation unsendable.
func toolInput(args string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(args)
}

func messageRole(m sdk.MessageParam) model.Role {
	if m.OfAssistant != nil {
		return model.RoleAssistant
	}
	return model.RoleUser
}

func appendBlocks(m *sdk.MessageParam, blocks []sdk.ContentBlockParamUnion) {
	if m.OfAssistant != nil {
		m.OfAssistant.Content = append(m.OfAssistant.Content, blocks...)
	} else {
		m.OfUser.Content = append(m.OfUser.Content, blocks...)
	}
}

// inputSchema splits a JSON Schema into the SDK's typed parts and the rest.
func inputSchema(raw json.RawMessage) (sdk.ToolInputSchemaParam, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return sdk.ToolInputSchemaParam{}, err
	}
	s := sdk.ToolInputSchemaParam{Properties: m["properties"]}
	if s.Properties == nil {
		s.Properties = map[string]any{}
	}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	for k, v := range m {
		switch k {
		case "type", "properties", "required":
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s, nil
}

// markCacheBreakpoints marks the end of the system prompt, of the tool list and of the
// conversation. Each request then reads the prefix the previous step wrote and writes the
// new one; the three marks stay under the API's limit of four.
func markCacheBreakpoints(params *sdk.MessageNewParams) {
	cc := sdk.NewCacheControlEphemeralParam()
	if n := len(params.System); n > 0 {
		params.System[n-1].CacheControl = cc
	}
	if n := len(params.Tools); n > 0 && params.Tools[n-1].OfTool != nil {
		params.Tools[n-1].OfTool.CacheControl = cc
	}
	if n := len(params.Messages); n > 0 {
		last := params.Messages[n-1]
		var content []sdk.ContentBlockParamUnion
		if last.OfAssistant != nil {
			content = last.OfAssistant.Content
		} else {
			content = last.OfUser.Content
		}
		switch b := content[len(content)-1]; {
		case b.OfText != nil:
			b.OfText.CacheControl = cc
		case b.OfToolResult != nil:
			b.OfToolResult.CacheControl = cc
		case b.OfToolUse != nil:
			b.OfToolUse.CacheControl = cc
		}
	}
}

// eventState turns stream events into model events. Anthropic streams content blocks by
// index, and a tool_use block's arguments arrive as input_json_delta pieces until its
// content_block_stop.
type eventState struct {
	blocks     map[int64]*block
	usage      sdk.Usage
	output     int64
	stopReason string
	stopped    bool
}

type block struct {
	tool                 bool
	id, providerID, name string
	args                 strings.Builder
}

func (st *eventState) events(ev sdk.MessageStreamEventUnion) []model.Event {
	switch ev.Type {
	case "message_start":
		st.usage = ev.Message.Usage
		st.output = ev.Message.Usage.OutputTokens
		return []model.Event{model.ResponseStart{ID: ev.Message.ID, Model: string(ev.Message.Model)}}
	case "content_block_start":
		cb := ev.ContentBlock
		switch cb.Type {
		case "text":
			st.blocks[ev.Index] = &block{}
			if cb.Text != "" {
				return []model.Event{model.TextDelta{Text: cb.Text}}
			}
		case "tool_use":
			// The block index keys the call in this response; the id is the provider's.
			st.blocks[ev.Index] = &block{tool: true, id: strconv.FormatInt(ev.Index, 10), providerID: cb.ID, name: cb.Name}
			return []model.Event{model.ToolCallStart{ID: st.blocks[ev.Index].id, ProviderID: cb.ID, Name: cb.Name}}
		}
		// Thinking and server-tool blocks are not requested, so they are not rendered.
	case "content_block_delta":
		b := st.blocks[ev.Index]
		switch {
		case b == nil:
		case ev.Delta.Type == "text_delta" && !b.tool:
			return []model.Event{model.TextDelta{Text: ev.Delta.Text}}
		case ev.Delta.Type == "input_json_delta" && b.tool && ev.Delta.PartialJSON != "":
			b.args.WriteString(ev.Delta.PartialJSON)
			return []model.Event{model.ToolCallArgsDelta{ID: b.id, Delta: ev.Delta.PartialJSON}}
		}
	case "content_block_stop":
		if b := st.blocks[ev.Index]; b != nil && b.tool {
			args := b.args.String()
			if args == "" {
				args = "{}" // a call without arguments streams no input_json_delta
			}
			return []model.Event{model.ToolCallEnd{ID: b.id, ProviderID: b.providerID, Name: b.name, Arguments: args}}
		}
	case "message_delta":
		st.stopReason = string(ev.Delta.StopReason)
		// message_delta's counts are cumulative; input counts appear there only when the
		// server revised them (e.g. after server tools), so absent ones keep message_start's.
		u := ev.Usage
		st.output = u.OutputTokens
		if u.JSON.InputTokens.Valid() {
			st.usage.InputTokens = u.InputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() {
			st.usage.CacheReadInputTokens = u.CacheReadInputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() {
			st.usage.CacheCreationInputTokens = u.CacheCreationInputTokens
		}
	case "message_stop":
		st.stopped = true
	}
	return nil
}

func (st *eventState) end() []model.Event {
	u := st.usage
	usage := model.Usage{
		// Anthropic's input_tokens excludes the cached parts; the model's Usage counts the
		// whole prompt.
		InputTokens:      u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		OutputTokens:     st.output,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
	reason := model.FinishOther
	switch st.stopReason {
	case "end_turn", "stop_sequence":
		reason = model.FinishStop
	case "tool_use":
		reason = model.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		reason = model.FinishLength
	case "refusal":
		reason = model.FinishContentFilter
	}
	return []model.Event{model.UsageReport{Usage: usage}, model.Finish{Reason: reason, ProviderReason: st.stopReason}}
}

func (p *Provider) classify(ctx context.Context, err error, modelID string) error {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		return p.ep.NetworkError(ctx, err)
	}
	var h http.Header
	if apiErr.Response != nil {
		h = apiErr.Response.Header
	}
	status := apiErr.StatusCode
	if status < 400 {
		status = 0 // an error event in a stream that had started with 200
	}
	typ := string(apiErr.Type())
	if status == 529 || typ == "overloaded_error" {
		e := model.NewError(model.CodeRateLimit, messageOr(apiErr.Message, "Anthropic is overloaded")+statusSuffix(status), "")
		e.Provider, e.Status, e.ProviderCode, e.Err = p.ep.Provider, status, typ, err
		e.RetryAfter = wire.RetryAfter(h, time.Now())
		e.Fix = "Anthropic is temporarily overloaded: " + model.RateLimitFix(e.RetryAfter) + ", or switch to another model"
		return e
	}
	return p.ep.HTTPError(wire.Failure{
		Status: status, Type: typ, Code: string(apiErr.ErrorCode()), Message: apiErr.Message, Header: h, Cause: err,
	}, modelID)
}

func messageOr(msg, fallback string) string {
	if msg == "" {
		return fallback
	}
	return msg
}

func statusSuffix(status int) string {
	if status == 0 {
		return ""
	}
	return fmt.Sprintf(" (HTTP %d)", status)
}

// Models lists the models the key may use. Every model on the Messages API takes tools;
// context window and thinking support come from the listing when it carries them.
func (p *Provider) Models(ctx context.Context) ([]model.ModelInfo, error) {
	if p.keyless {
		return nil, p.noKey()
	}
	var out []model.ModelInfo
	iter := p.client.Models.ListAutoPaging(ctx, sdk.ModelListParams{})
	for iter.Next() {
		m := iter.Current()
		info := model.ModelInfo{ID: m.ID, DisplayName: m.DisplayName, Tools: model.Supported}
		if m.JSON.MaxInputTokens.Valid() && m.MaxInputTokens > 0 {
			info.ContextWindow = m.MaxInputTokens
		}
		if m.JSON.MaxTokens.Valid() && m.MaxTokens > 0 {
			info.MaxOutputTokens = m.MaxTokens
		}
		if t := m.Capabilities.Thinking; m.JSON.Capabilities.Valid() && t.JSON.Supported.Valid() {
			info.Reasoning = model.Unsupported
			if t.Supported {
				info.Reasoning = model.Supported
			}
		}
		out = append(out, info)
	}
	if err := iter.Err(); err != nil {
		return nil, p.classify(ctx, err, "")
	}
	return out, nil
}
