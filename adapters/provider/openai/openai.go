// Package openai is the model provider for the OpenAI Chat Completions API and the servers
// that imitate it (Ollama, vLLM, llama.cpp, LM Studio, proxies), and for OpenAI's Responses
// API (NewResponses), built on github.com/openai/openai-go/v3.
//
// Chat Completions is the dialect the local servers speak, so one adapter serves them all;
// the Responses API is OpenAI's own, where its newest models are served best.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/zuno-run/zuno/adapters/provider/internal/wire"
	"github.com/zuno-run/zuno/domain/model"
)

// DefaultBaseURL is OpenAI's own endpoint.
const DefaultBaseURL = "https://api.openai.com/v1"

// Dialect selects between the official API and what compatible servers understand.
type Dialect string

const (
	// DialectAuto picks DialectOpenAI for api.openai.com and DialectCompatible elsewhere.
	DialectAuto Dialect = ""
	// DialectOpenAI sends developer messages with the developer role and the output limit as
	// max_completion_tokens, which reasoning models require.
	DialectOpenAI Dialect = "openai"
	// DialectCompatible sends developer messages as system messages and the output limit as
	// max_tokens, because Ollama, vLLM and llama.cpp chat templates know only those.
	DialectCompatible Dialect = "compatible"
)

// Options configure a provider. The zero value talks to OpenAI with the key in
// OPENAI_API_KEY.
type Options struct {
	// Name is the provider's name in errors and logs ("ollama"); default "openai".
	Name string
	// BaseURL defaults to OPENAI_BASE_URL, then DefaultBaseURL. For Ollama it is
	// http://localhost:11434/v1.
	BaseURL string
	// APIKey defaults to OPENAI_API_KEY. Empty sends no Authorization header, which local
	// servers accept.
	APIKey  string
	Dialect Dialect
	// HTTPClient replaces the default client, e.g. to set a proxy or timeouts.
	HTTPClient *http.Client
	// MaxRetries is how often the SDK itself retries a failed request. It defaults to none:
	// the turn driver retries, so that every attempt is a provider request in the log.
	MaxRetries int
	// IgnoreEnv reads no OPENAI_* variable for options left empty: a provider configured for
	// a local server must not send the host's OpenAI key to it (docs/config.md, "Providers").
	IgnoreEnv bool
	// Headers are sent with every request (a gateway's routing or tenant header).
	Headers map[string]string
	// NoToolChoice leaves tool_choice out of requests, for servers that refuse or ignore it
	// (Ollama): the turn still runs no call made after it closed the tools.
	NoToolChoice bool
}

// Provider is an OpenAI-compatible model provider. It is safe for concurrent use.
type Provider struct {
	opts         []option.RequestOption // for the Responses API's service (NewResponses)
	ep           wire.Endpoint
	dialect      Dialect
	noToolChoice bool
	chat         sdk.ChatCompletionService
	models       sdk.ModelService
	threads      threads
}

// New returns a provider. It reads the environment only for options left empty.
func New(o Options) *Provider {
	if o.Name == "" {
		o.Name = "openai"
	}
	if o.BaseURL == "" && !o.IgnoreEnv {
		o.BaseURL = os.Getenv("OPENAI_BASE_URL")
	}
	if o.BaseURL == "" {
		o.BaseURL = DefaultBaseURL
	}
	if o.APIKey == "" && !o.IgnoreEnv {
		o.APIKey = os.Getenv("OPENAI_API_KEY")
	}
	if o.Dialect == DialectAuto {
		o.Dialect = DialectCompatible
		if u, err := url.Parse(o.BaseURL); err == nil && u.Hostname() == "api.openai.com" {
			o.Dialect = DialectOpenAI
		}
	}
	// The services are built without sdk.NewClient so that no other OPENAI_* variable
	// (organisation, project, custom headers) joins the request unseen: what is sent must be
	// what the options say.
	opts := []option.RequestOption{
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
		opts:         opts,
		ep:           wire.Endpoint{Provider: o.Name, BaseURL: o.BaseURL, KeyEnv: "OPENAI_API_KEY"},
		dialect:      o.Dialect,
		noToolChoice: o.NoToolChoice,
		chat:         sdk.NewChatCompletionService(opts...),
		models:       sdk.NewModelService(opts...),
	}
}

var _ model.Provider = (*Provider)(nil)

// Stream sends req as a streamed chat completion.
func (p *Provider) Stream(ctx context.Context, req model.Request) model.Stream {
	return func(yield func(model.Event, error) bool) {
		t, err := p.validated(req)
		if err != nil {
			yield(nil, err)
			return
		}
		body, err := p.body(req, t)
		if err != nil {
			yield(nil, err)
			return
		}
		s := p.send(ctx, body, option.WithMiddleware(wire.Tap(ctx, p.mappingFor(req))))
		defer s.Close()
		st := chunkState{}
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
		if st.finish == "" {
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

// ChatMappingVersion versions how params and message turn a request into a Chat Completions
// body. Bump it with any change to the bytes they produce: a recorded request names the
// version it was built with, and only that mapping renders its body again (docs/turns.md,
// "Wire receipts").
const ChatMappingVersion = 1

// Mapping is how this provider builds bodies: the Chat Completions mapping with its dialect
// and whether tool choice is sent.
func (p *Provider) Mapping() wire.Mapping {
	choice := "sent"
	if p.noToolChoice {
		choice = "omitted"
	}
	return wire.Mapping{Adapter: AdapterChat, Version: ChatMappingVersion,
		Settings: map[string]string{"dialect": string(p.dialect), "toolChoice": choice}}
}

// mappingFor is the mapping req is sent with: Mapping, and the prompt cache key when the body
// carries one. A body without a key is the version 1 body it always was, so the key is a
// setting rather than a new version: the requests recorded before it render as they did.
func (p *Provider) mappingFor(req model.Request) wire.Mapping {
	m := p.Mapping()
	if key := p.cacheKey(req); key != "" {
		m.Settings[wire.SettingPromptCacheKey] = key
	}
	return m
}

// cacheKey is the prompt_cache_key the body carries: OpenAI's own API only, since a
// compatible server may refuse a field it does not know.
func (p *Provider) cacheKey(req model.Request) string {
	if p.dialect != DialectOpenAI {
		return ""
	}
	return req.PromptCacheKey
}

// RenderWire returns the body Stream would send for req, built by the SDK as a real request
// is, without sending it.
func (p *Provider) RenderWire(req model.Request) ([]byte, error) {
	t, err := p.validated(req)
	if err != nil {
		return nil, err
	}
	body, err := p.body(req, t)
	if err != nil {
		return nil, err
	}
	return wire.Render(func(mw wire.Middleware) error {
		s := p.send(context.Background(), body, option.WithMiddleware(mw))
		defer s.Close()
		return s.Err()
	})
}

// renderSum returns the SHA-256 and size of body as the SDK would send it, without sending
// it; the SDK's fields are spliced in as they are when a body is sent.
func renderSum(p *Provider, body encoded) ([]byte, int64, error) {
	return wire.RenderSum(func(mw wire.Middleware) error {
		s := p.send(context.Background(), body, option.WithMiddleware(mw))
		defer s.Close()
		return s.Err()
	})
}

// send streams a chat completion whose body is already encoded. The SDK is given an empty
// body and adds "stream": true to it (it would parse and copy the whole body to do so, a cost
// growing with the conversation); splice then sends the body with the SDK's fields added
// where the SDK adds them. The middleware given (the wire tap, a renderer) sees the result.
func (p *Provider) send(ctx context.Context, body encoded, opts ...option.RequestOption) *ssestream.Stream[sdk.ChatCompletionChunk] {
	all := append([]option.RequestOption{option.WithRequestBody("application/json", []byte("{}")), option.WithMiddleware(splice(body))}, opts...)
	return p.chat.NewStreaming(ctx, sdk.ChatCompletionNewParams{}, all...)
}

// Adapter names of the recorded mappings.
const (
	AdapterChat      = "openai.chat"
	AdapterResponses = "openai.responses"
)

// ForMapping returns a provider that renders bodies with a recorded Chat Completions or
// Responses mapping's settings; it is never sent anything.
func ForMapping(settings map[string]string) (*Provider, error) {
	d := Dialect(settings["dialect"])
	if d != DialectOpenAI && d != DialectCompatible {
		return nil, fmt.Errorf("dialect %q is not openai or compatible", settings["dialect"])
	}
	choice := settings["toolChoice"]
	if choice != "sent" && choice != "omitted" {
		return nil, fmt.Errorf("toolChoice %q is not sent or omitted", choice)
	}
	return New(Options{BaseURL: renderURL, IgnoreEnv: true, Dialect: d, NoToolChoice: choice == "omitted"}), nil
}

// renderURL is where a rendering provider points; nothing is ever sent there.
const renderURL = "http://wire-render.invalid/v1"

// params are the request's parameters but its messages, which body encodes one by one.
func (p *Provider) params(req model.Request) (sdk.ChatCompletionNewParams, error) {
	params := sdk.ChatCompletionNewParams{
		Model: shared.ChatModel(req.Model),
		// Without include_usage a stream reports no token counts at all.
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.SchemaOrEmpty(), &schema); err != nil {
			// Validate has checked the schema, so this is a bug, not the caller's fault.
			return params, fmt.Errorf("openai: tool %q schema: %w", t.Name, err)
		}
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			def.Description = sdk.String(t.Description)
		}
		params.Tools = append(params.Tools, sdk.ChatCompletionFunctionTool(def))
	}
	switch mode := req.ToolChoice.Mode; {
	case p.noToolChoice:
	case mode == model.ToolChoiceAuto || mode == model.ToolChoiceNone || mode == model.ToolChoiceRequired:
		params.ToolChoice.OfAuto = sdk.String(string(req.ToolChoice.Mode))
	case mode == model.ToolChoiceTool:
		params.ToolChoice = sdk.ToolChoiceOptionFunctionToolChoice(sdk.ChatCompletionNamedToolChoiceFunctionParam{Name: req.ToolChoice.Name})
	}
	if key := p.cacheKey(req); key != "" {
		params.PromptCacheKey = sdk.String(key)
	}
	if req.MaxTokens > 0 {
		if p.dialect == DialectOpenAI {
			params.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = sdk.Int(int64(req.MaxTokens))
		}
	}
	return params, nil
}

// message renders one message; call ids go back as the provider gave them (model.WireIDs
// maps the runtime's, docs/turns.md): calls are an assistant message's wire call ids, result
// the wire id a tool message answers.
func (p *Provider) message(m model.Message, calls []string, result string) sdk.ChatCompletionMessageParamUnion {
	switch m.Role {
	case model.RoleSystem:
		return sdk.SystemMessage(m.Text)
	case model.RoleDeveloper:
		if p.dialect == DialectOpenAI {
			return sdk.DeveloperMessage(m.Text)
		}
		return sdk.SystemMessage(m.Text)
	case model.RoleAssistant:
		var a sdk.ChatCompletionAssistantMessageParam
		if m.Text != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = sdk.String(m.Text)
		}
		for i, c := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
					ID:       calls[i],
					Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments},
				},
			})
		}
		return sdk.ChatCompletionMessageParamUnion{OfAssistant: &a}
	case model.RoleTool:
		return sdk.ToolMessage(m.Text, result)
	default: // RoleUser; Validate refused the rest
		return sdk.UserMessage(m.Text)
	}
}

// chunkState turns chunks into events. Chat Completions identifies a streamed tool call by
// its index and names its id only in the first delta, and never marks a call's end, so the
// state keeps the calls until the finish reason closes them all.
type chunkState struct {
	started bool
	calls   []*toolCall
	byIndex map[int64]*toolCall
	finish  string
	usage   *sdk.CompletionUsage
}

type toolCall struct {
	key, id, name string // key: the call's index in this response; id: the provider's, if any
	args          strings.Builder
}

func (st *chunkState) events(chunk sdk.ChatCompletionChunk) []model.Event {
	var out []model.Event
	if !st.started {
		st.started = true
		out = append(out, model.ResponseStart{ID: chunk.ID, Model: chunk.Model})
	}
	if chunk.JSON.Usage.Valid() {
		u := chunk.Usage
		st.usage = &u
	}
	for _, choice := range chunk.Choices {
		if choice.Index != 0 {
			continue // n is never set, so there is only choice 0
		}
		d := choice.Delta
		if d.Content != "" {
			out = append(out, model.TextDelta{Text: d.Content})
		}
		if d.Refusal != "" {
			out = append(out, model.TextDelta{Text: d.Refusal, Refusal: true})
		}
		for _, tc := range d.ToolCalls {
			c := st.byIndex[tc.Index]
			if c == nil {
				// The index keys the call: some compatible servers omit ids or number them
				// per response (call_0); the runtime assigns its own (docs/turns.md).
				c = &toolCall{key: strconv.FormatInt(tc.Index, 10), id: tc.ID, name: tc.Function.Name}
				if st.byIndex == nil {
					st.byIndex = map[int64]*toolCall{}
				}
				st.byIndex[tc.Index] = c
				st.calls = append(st.calls, c)
				out = append(out, model.ToolCallStart{ID: c.key, ProviderID: c.id, Name: c.name})
			} else if tc.Function.Name != "" && tc.Function.Name != c.name {
				c.name += tc.Function.Name
			}
			if a := tc.Function.Arguments; a != "" {
				c.args.WriteString(a)
				out = append(out, model.ToolCallArgsDelta{ID: c.key, Delta: a})
			}
		}
		if choice.FinishReason != "" && st.finish == "" {
			st.finish = choice.FinishReason
			for _, c := range st.calls {
				args := c.args.String()
				if args == "" {
					args = "{}" // a call without arguments streams none
				}
				out = append(out, model.ToolCallEnd{ID: c.key, ProviderID: c.id, Name: c.name, Arguments: args})
			}
		}
	}
	return out
}

// end returns the closing events. Usage comes last on the wire, after the finish reason,
// so Finish waits for the end of the stream.
func (st *chunkState) end() []model.Event {
	var out []model.Event
	if u := st.usage; u != nil {
		out = append(out, model.UsageReport{Usage: model.Usage{
			InputTokens:      u.PromptTokens,
			OutputTokens:     u.CompletionTokens,
			CacheReadTokens:  u.PromptTokensDetails.CachedTokens,
			CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
			ReasoningTokens:  u.CompletionTokensDetails.ReasoningTokens,
		}})
	}
	reason := model.FinishOther
	switch st.finish {
	case "stop":
		reason = model.FinishStop
		if len(st.calls) > 0 {
			// Ollama and some vLLM versions say "stop" after tool calls; what the turn
			// driver must do next is run them.
			reason = model.FinishToolCalls
		}
	case "tool_calls", "function_call":
		reason = model.FinishToolCalls
	case "length":
		reason = model.FinishLength
	case "content_filter":
		reason = model.FinishContentFilter
	}
	return append(out, model.Finish{Reason: reason, ProviderReason: st.finish})
}

// classify maps an SDK error to a model error.
func (p *Provider) classify(ctx context.Context, err error, modelID string) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		var h http.Header
		if apiErr.Response != nil {
			h = apiErr.Response.Header
		}
		e := p.ep.HTTPError(wire.Failure{
			Status: apiErr.StatusCode, Code: apiErr.Code, Type: apiErr.Type, Message: apiErr.Message,
			Header: h, Cause: err,
		}, modelID)
		if e.Code() == model.CodeRateLimit && e.RetryAfter == 0 && apiErr.Code != "insufficient_quota" {
			e.RetryAfter = resetHint(h)
			e.Fix = model.RateLimitFix(e.RetryAfter)
		}
		return e
	}
	// An error object inside the stream (vLLM and proxies report late failures this way)
	// comes with HTTP 200 already sent, so it is classified by its body alone.
	var streamErr *ssestream.StreamError
	if errors.As(err, &streamErr) {
		var body struct {
			Error struct {
				Code    json.RawMessage `json:"code"`
				Type    string          `json:"type"`
				Message string          `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(streamErr.Event.Data, &body) // an undecodable body classifies as unknown
		f := wire.Failure{Type: body.Error.Type, Message: body.Error.Message, Cause: err}
		if n, err := strconv.Atoi(string(body.Error.Code)); err == nil {
			f.Status = n // vLLM puts the HTTP status in code
		} else {
			_ = json.Unmarshal(body.Error.Code, &f.Code)
		}
		if f.Message == "" {
			f.Message = streamErr.Message
		}
		return p.ep.HTTPError(f, modelID)
	}
	return p.ep.NetworkError(ctx, err)
}

// resetHint reads OpenAI's x-ratelimit-reset-* headers ("1.4s", "6m0s"), which it sends
// on a 429 more reliably than retry-after. The later of the two resets is the wait that
// lifts both limits.
func resetHint(h http.Header) (d time.Duration) {
	for _, name := range []string{"X-Ratelimit-Reset-Requests", "X-Ratelimit-Reset-Tokens"} {
		if v, err := time.ParseDuration(h.Get(name)); err == nil && v > d {
			d = v
		}
	}
	return d
}

// Models lists the models the endpoint serves. OpenAI's list carries ids only; vLLM adds
// max_model_len, which becomes the context window.
func (p *Provider) Models(ctx context.Context) ([]model.ModelInfo, error) {
	var out []model.ModelInfo
	iter := p.models.ListAutoPaging(ctx)
	for iter.Next() {
		m := iter.Current()
		info := model.ModelInfo{ID: m.ID}
		var extra struct {
			MaxModelLen int64 `json:"max_model_len"`
		}
		if json.Unmarshal([]byte(m.RawJSON()), &extra) == nil && extra.MaxModelLen > 0 {
			info.ContextWindow = extra.MaxModelLen
		}
		out = append(out, info)
	}
	if err := iter.Err(); err != nil {
		return nil, p.classify(ctx, err, "")
	}
	return out, nil
}
