package openai

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	sdk "github.com/openai/openai-go/v3"

	"github.com/zuno-run/zuno/domain/model"
)

// body encodes a request as the SDK would encode its parameters, but with each message's
// encoding taken from the cache when the same message was encoded before: an agent resends
// its whole, growing conversation every step, and encoding it again through the SDK's
// reflective encoder made each step's cost grow with the history (docs/turns.md, "Wire
// receipts"). The bytes are the SDK's own: encoding/json writes an array element exactly as
// it writes the element alone, so the messages are spliced into the encoding of the rest.
func (p *Provider) body(req model.Request) ([]byte, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, err
	}
	params.Messages = []sdk.ChatCompletionMessageParamUnion{}
	rest, err := marshal(params)
	if err != nil {
		return nil, err
	}
	const head = `{"messages":[]`
	if !bytes.HasPrefix(rest, []byte(head)) {
		// Not the layout this splice knows (another SDK version): encode it all.
		var ids model.WireIDs
		for _, m := range req.Messages {
			calls, result := wireIDs(m, &ids)
			params.Messages = append(params.Messages, p.message(m, calls, result))
		}
		return marshal(params)
	}
	encs := make([][]byte, len(req.Messages))
	size := len(rest)
	var ids model.WireIDs
	for i, m := range req.Messages {
		if encs[i], err = p.encoded(m, &ids); err != nil {
			return nil, err
		}
		size += len(encs[i]) + 1
	}
	out := make([]byte, 0, size)
	out = append(out, head[:len(head)-1]...)
	for i, e := range encs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, e...)
	}
	out = append(out, ']')
	return append(out, rest[len(head):]...), nil
}

// msgKey is everything message renders a message from, so equal keys encode equally.
type msgKey struct {
	role, text, wireID string
	// calls holds each call's wire id, name and arguments.
	calls string
}

// maxCached bounds the cache; it is emptied when full (a provider outlives sessions).
const maxCached = 1 << 16

// msgCache maps a message's key to its encoding. It is shared by the provider's requests.
type msgCache struct {
	mu sync.Mutex
	m  map[msgKey][]byte
}

// encoded returns m's encoding in the request, from the cache when it is there. ids advances
// as message does, so the call ids of later results are those of this request.
func (p *Provider) encoded(m model.Message, ids *model.WireIDs) ([]byte, error) {
	calls, result := wireIDs(m, ids)
	k := msgKey{role: string(m.Role), text: m.Text, wireID: result}
	if len(calls) > 0 {
		var b strings.Builder
		for i, id := range calls {
			c := m.ToolCalls[i]
			b.WriteString(id + "\x00" + c.Name + "\x00" + c.Arguments + "\x00")
		}
		k.calls = b.String()
	}
	c := &p.cache
	c.mu.Lock()
	enc, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return enc, nil
	}
	enc, err := marshal(p.message(m, calls, result))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCached {
		c.m = map[msgKey][]byte{}
	}
	c.m[k] = enc
	c.mu.Unlock()
	return enc, nil
}

// wireIDs advances ids over m: the wire ids of an assistant message's calls, or the wire id
// of the call a tool message answers.
func wireIDs(m model.Message, ids *model.WireIDs) (calls []string, result string) {
	switch m.Role {
	case model.RoleAssistant:
		return ids.Calls(m.ToolCalls), ""
	case model.RoleTool:
		return nil, ids.Result(m.ToolCallID)
	}
	return nil, ""
}

// marshal encodes v as the SDK encodes a body: without escaping <, > and &.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
