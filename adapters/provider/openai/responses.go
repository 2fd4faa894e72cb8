package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/zuno-run/zuno/adapters/provider/internal/wire"
	"github.com/zuno-run/zuno/domain/model"
)

// Responses is the model provider for OpenAI's Responses API (`openai-responses/MODEL`),
// which OpenAI's newest models are served best by. It keeps no state at OpenAI (store: false):
// every request carries the whole conversation, and the reasoning items of earlier responses
// go back with their encrypted content, as the API requires for a stateless conversation. It
// shares the Chat Completions adapter's errors, receipts and metrics. It is safe for
// concurrent use.
type Responses struct {
	chat *Provider // the options, the endpoint and the error classification
	svc  responses.ResponseService
}

// NewResponses returns a Responses API provider with the same options as New.
func NewResponses(o Options) *Responses {
	p := New(o)
	return &Responses{chat: p, svc: responses.NewResponseService(p.opts...)}
}

var _ model.Provider = (*Responses)(nil)

// Models lists the models the endpoint serves, as New's provider does.
func (r *Responses) Models(ctx context.Context) ([]model.ModelInfo, error) { return r.chat.Models(ctx) }

// Stream sends req as a streamed response.
func (r *Responses) Stream(ctx context.Context, req model.Request) model.Stream {
	return func(yield func(model.Event, error) bool) {
		if err := req.ValidateFor(r.chat.ep.Provider); err != nil {
			yield(nil, err)
			return
		}
		params, err := responseParams(req)
		if err != nil {
			yield(nil, err)
			return
		}
		s := r.svc.NewStreaming(ctx, params, option.WithMiddleware(wire.Tap(ctx, r.mappingFor(req))))
		defer s.Close()
		var st responseState
		for s.Next() {
			evs, err := st.events(s.Current(), r.chat.ep)
			for _, ev := range evs {
				if !yield(ev, nil) {
					return
				}
			}
			if err != nil {
				yield(nil, err)
				return
			}
		}
		if err := s.Err(); err != nil {
			yield(nil, r.chat.classify(ctx, err, req.Model))
			return
		}
		if !st.done {
			yield(nil, r.chat.ep.Truncated())
		}
	}
}

// ResponsesMappingVersion versions how responseParams turns a request into a Responses API
// body; bump it with any change to the bytes (docs/turns.md, "Wire receipts").
const ResponsesMappingVersion = 1

// Mapping is how this provider builds bodies. The Responses mapping has no settings: it sends
// the developer role and no tool choice quirks.
func (r *Responses) Mapping() wire.Mapping {
	return wire.Mapping{Adapter: AdapterResponses, Version: ResponsesMappingVersion, Settings: map[string]string{}}
}

// mappingFor is the mapping req is sent with: Mapping, and the prompt cache key the body
// carries, if any (as the Chat mapping records it).
func (r *Responses) mappingFor(req model.Request) wire.Mapping {
	m := r.Mapping()
	if req.PromptCacheKey != "" {
		m.Settings[wire.SettingPromptCacheKey] = req.PromptCacheKey
	}
	return m
}

// RenderWire returns the body Stream would send for req, without sending it.
func (r *Responses) RenderWire(req model.Request) ([]byte, error) {
	if err := req.ValidateFor(r.chat.ep.Provider); err != nil {
		return nil, err
	}
	params, err := responseParams(req)
	if err != nil {
		return nil, err
	}
	return wire.Render(func(mw wire.Middleware) error {
		s := r.svc.NewStreaming(context.Background(), params, option.WithMiddleware(mw))
		defer s.Close()
		return s.Err()
	})
}

// ResponsesForMapping returns a Responses provider that renders bodies; it is never sent
// anything.
func ResponsesForMapping() *Responses {
	return NewResponses(Options{BaseURL: renderURL, IgnoreEnv: true})
}

func responseParams(req model.Request) (responses.ResponseNewParams, error) {
	params := responses.ResponseNewParams{
		Model: shared.ResponsesModel(req.Model),
		// Nothing is kept at OpenAI; the encrypted reasoning is what lets a stateless
		// conversation keep the model's reasoning across steps.
		Store:   openaiBool(false),
		Include: []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
	}
	if req.PromptCacheKey != "" {
		params.PromptCacheKey = openaiString(req.PromptCacheKey)
	}
	var items []responses.ResponseInputItemUnionParam
	var ids model.WireIDs
	for _, m := range req.Messages {
		items = append(items, inputItems(m, &ids)...)
	}
	params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.SchemaOrEmpty(), &schema); err != nil {
			return params, fmt.Errorf("openai responses: tool %q schema: %w", t.Name, err)
		}
		tool := responses.ToolParamOfFunction(t.Name, schema, false)
		if t.Description != "" {
			tool.OfFunction.Description = openaiString(t.Description)
		}
		params.Tools = append(params.Tools, tool)
	}
	switch req.ToolChoice.Mode {
	case model.ToolChoiceAuto, model.ToolChoiceNone, model.ToolChoiceRequired:
		params.ToolChoice.OfToolChoiceMode = openaiOpt(responses.ToolChoiceOptions(req.ToolChoice.Mode))
	case model.ToolChoiceTool:
		params.ToolChoice.OfFunctionTool = &responses.ToolChoiceFunctionParam{Name: req.ToolChoice.Name}
	}
	if req.MaxTokens > 0 {
		params.MaxOutputTokens = openaiInt(int64(req.MaxTokens))
	}
	return params, nil
}

// inputItems renders one message as input items: an assistant message is its reasoning
// items, its text and its function calls, in the order the API returned them.
func inputItems(m model.Message, ids *model.WireIDs) []responses.ResponseInputItemUnionParam {
	switch m.Role {
	case model.RoleAssistant:
		var out []responses.ResponseInputItemUnionParam
		for _, r := range m.Reasoning {
			item := responses.ResponseReasoningItemParam{ID: r.ID, Summary: []responses.ResponseReasoningItemSummaryParam{}}
			if r.Summary != "" {
				item.Summary = append(item.Summary, responses.ResponseReasoningItemSummaryParam{Text: r.Summary})
			}
			if r.EncryptedContent != "" {
				item.EncryptedContent = openaiString(r.EncryptedContent)
			}
			out = append(out, responses.ResponseInputItemUnionParam{OfReasoning: &item})
		}
		if m.Text != "" {
			out = append(out, responses.ResponseInputItemParamOfMessage(m.Text, responses.EasyInputMessageRoleAssistant))
		}
		wire := ids.Calls(m.ToolCalls)
		for i, c := range m.ToolCalls {
			out = append(out, responses.ResponseInputItemParamOfFunctionCall(c.Arguments, wire[i], c.Name))
		}
		return out
	case model.RoleTool:
		return []responses.ResponseInputItemUnionParam{{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
			CallID: openaiString(ids.Result(m.ToolCallID)), Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openaiString(m.Text)},
		}}}
	case model.RoleSystem:
		return []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage(m.Text, responses.EasyInputMessageRoleSystem)}
	case model.RoleDeveloper:
		return []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage(m.Text, responses.EasyInputMessageRoleDeveloper)}
	default:
		return []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage(m.Text, responses.EasyInputMessageRoleUser)}
	}
}

// responseState turns stream events into model events. A function call is keyed by its
// output index; its end carries the complete arguments.
type responseState struct {
	started bool
	calls   int
	done    bool
}

func (st *responseState) events(ev responses.ResponseStreamEventUnion, ep wire.Endpoint) ([]model.Event, error) {
	var out []model.Event
	if !st.started && (ev.Type == "response.created" || ev.Type == "response.in_progress") {
		st.started = true
		return append(out, model.ResponseStart{ID: ev.Response.ID, Model: ev.Response.Model}), nil
	}
	key := strconv.FormatInt(ev.OutputIndex, 10)
	switch ev.Type {
	case "response.output_text.delta", "response.refusal.delta":
		out = append(out, model.TextDelta{Text: ev.Delta, Refusal: ev.Type == "response.refusal.delta"})
	case "response.output_item.added":
		if ev.Item.Type == "function_call" {
			out = append(out, model.ToolCallStart{ID: key, ProviderID: ev.Item.CallID, Name: ev.Item.Name})
		}
	case "response.function_call_arguments.delta":
		out = append(out, model.ToolCallArgsDelta{ID: key, Delta: ev.Delta})
	case "response.output_item.done":
		out = append(out, st.itemDone(ev.Item, key)...)
	case "response.completed", "response.incomplete":
		st.done = true
		out = append(out, usage(ev.Response.Usage), st.finish(ev.Response))
	case "response.failed", "error":
		return out, streamFailure(ev, ep)
	}
	return out, nil
}

func (st *responseState) itemDone(item responses.ResponseOutputItemUnion, key string) []model.Event {
	switch item.Type {
	case "function_call":
		st.calls++
		args := item.Arguments.OfString
		if args == "" {
			args = "{}"
		}
		return []model.Event{model.ToolCallEnd{ID: key, ProviderID: item.CallID, Name: item.Name, Arguments: args}}
	case "reasoning":
		var summary []string
		for _, s := range item.Summary {
			summary = append(summary, s.Text)
		}
		return []model.Event{model.ReasoningItem{Reasoning: model.Reasoning{ID: item.ID, Summary: strings.Join(summary, "\n\n"),
			EncryptedContent: item.EncryptedContent}}}
	}
	return nil
}

func usage(u responses.ResponseUsage) model.Event {
	return model.UsageReport{Usage: model.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadTokens: u.InputTokensDetails.CachedTokens, ReasoningTokens: u.OutputTokensDetails.ReasoningTokens}}
}

func (st *responseState) finish(r responses.Response) model.Event {
	f := model.Finish{Reason: model.FinishStop, ProviderReason: string(r.Status)}
	switch {
	case r.Status == "incomplete" && r.IncompleteDetails.Reason == "max_output_tokens":
		f.Reason, f.ProviderReason = model.FinishLength, r.IncompleteDetails.Reason
	case r.Status == "incomplete" && r.IncompleteDetails.Reason == "content_filter":
		f.Reason, f.ProviderReason = model.FinishContentFilter, r.IncompleteDetails.Reason
	case r.Status == "incomplete":
		f.Reason = model.FinishOther
	case st.calls > 0:
		f.Reason = model.FinishToolCalls
	}
	return f
}

// streamFailure classifies a failure reported inside the stream (HTTP 200 already sent) by its
// code and message, as the Chat Completions adapter does.
func streamFailure(ev responses.ResponseStreamEventUnion, ep wire.Endpoint) error {
	code, msg := ev.Code, ev.Message
	if ev.Type == "response.failed" {
		code, msg = string(ev.Response.Error.Code), ev.Response.Error.Message
	}
	// The Responses API's codes double as types ("server_error", "rate_limit_exceeded"), which
	// is what the shared classification reads; no HTTP status is claimed.
	return ep.HTTPError(wire.Failure{Code: code, Type: code, Message: msg}, "")
}

func openaiBool(b bool) param.Opt[bool]        { return param.NewOpt(b) }
func openaiInt(n int64) param.Opt[int64]       { return param.NewOpt(n) }
func openaiString(s string) param.Opt[string]  { return param.NewOpt(s) }
func openaiOpt[T comparable](v T) param.Opt[T] { return param.NewOpt(v) }
