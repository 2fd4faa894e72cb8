package openai

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"net/http"
	"sync"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/zuno-run/zuno/adapters/provider/internal/wire"

	"github.com/zuno-run/zuno/domain/model"
)

// An agent sends its whole, growing conversation at every step. Encoding it again through the
// SDK's reflective encoder, walking it again for validation and for the wire ids, made each
// step's cost grow with the history (docs/turns.md, "Wire receipts"). So the provider keeps,
// for each conversation it sends, the state after the messages it sent last (a thread): the
// next request of that conversation validates, maps and encodes only the messages appended
// since. The bytes are the SDK's own: encoding/json writes an array element exactly as it
// writes the element alone, so the messages are spliced into the encoding of the rest of the
// parameters.
//
// The body's start, as far as the last message, only grows from one request of a
// conversation to the next: the thread keeps it, with its SHA-256 state, and a request sends
// it as it is, followed by the rest of its body, rather than copying it into a new one (a
// copy, and garbage, as large as the conversation at every step). The wire tap hashes only
// the rest.

// thread is the state after the messages of one conversation's latest request.
type thread struct {
	conv model.Conversation // the messages sent, validated
	ids  model.WireIDs      // has mapped the call ids of the first encoded messages
	// start is the body as far as the encoded messages: `{"messages":[` and their encodings,
	// comma separated. It is only appended to, so a body sent before, which reads a prefix of
	// its array, never changes; startSum is its SHA-256 state (nil if the hash cannot be
	// cloned).
	start    []byte
	startSum hash.Cloner
	encoded  int
}

// maxThreads bounds the conversations kept; the least recently sent one goes first. A provider
// serves the sessions of one process, each sending one conversation at a time.
const maxThreads = 16

// threads are a provider's conversations in progress, most recently sent last.
type threads struct {
	mu   sync.Mutex
	list []*thread
}

// take removes and returns the thread msgs continues, the longest if several do, or a new
// one. A thread is used by one request at a time: a concurrent request of the same
// conversation starts a thread of its own.
func (ts *threads) take(msgs []model.Message) *thread {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	best := -1
	for i, t := range ts.list {
		if t.conv.Continues(msgs) && (best < 0 || len(t.conv.Messages()) > len(ts.list[best].conv.Messages())) {
			best = i
		}
	}
	if best < 0 {
		return &thread{}
	}
	t := ts.list[best]
	ts.list = append(ts.list[:best], ts.list[best+1:]...)
	return t
}

// put keeps t as the most recently sent conversation.
func (ts *threads) put(t *thread) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if len(ts.list) >= maxThreads {
		ts.list = append(ts.list[:0], ts.list[1:]...)
	}
	ts.list = append(ts.list, t)
}

// validated checks req (its conversation from where its thread stopped) and returns the
// thread to encode it with; on an error the thread is dropped.
func (p *Provider) validated(req model.Request) (*thread, error) {
	t := p.threads.take(req.Messages) // a thread req continues: take compared them
	if err := t.conv.ValidateContinuation(p.ep.Provider, req); err != nil {
		return nil, err
	}
	return t, nil
}

// encoded is a request body: start, sent as it is, then rest; startSum is start's SHA-256
// state, nil when unknown.
type encoded struct {
	start    []byte
	startSum hash.Cloner
	rest     []byte
	// spliced, when set, receives the rest as sent, with the SDK's fields (SumRenderer).
	spliced *[]byte
}

// chatOpen is how a Chat Completions body starts, before its first message.
const chatOpen = `{"messages":[`

// body encodes req, validated with t, as the SDK would encode its parameters, and keeps t
// for the conversation's next request.
func (p *Provider) body(req model.Request, t *thread) (encoded, error) {
	params, err := p.params(req)
	if err != nil {
		return encoded{}, err
	}
	params.Messages = []sdk.ChatCompletionMessageParamUnion{}
	rest, err := marshal(params)
	if err != nil {
		return encoded{}, err
	}
	const head = chatOpen + `]`
	if !bytes.HasPrefix(rest, []byte(head)) {
		// Not the layout this splice knows (another SDK version): encode it all.
		var ids model.WireIDs
		for _, m := range req.Messages {
			calls, result := wireIDs(m, &ids)
			params.Messages = append(params.Messages, p.message(m, calls, result))
		}
		all, err := marshal(params)
		return encoded{rest: all}, err
	}
	if err := p.extend(t, req.Messages, chatOpen); err != nil {
		return encoded{}, err
	}
	out := encoded{start: t.start[:len(t.start):len(t.start)]}
	if t.startSum != nil {
		if c, err := t.startSum.Clone(); err == nil {
			out.startSum = c // the thread's goes on with the next request's messages
		}
	}
	// Room for the fields the SDK adds (splice).
	out.rest = make([]byte, 0, len(rest)-len(head)+1+len(`,"stream":true`))
	out.rest = append(append(out.rest, ']'), rest[len(head):]...)
	p.threads.put(t)
	return out, nil
}

// extend encodes the messages msgs has beyond those t encoded into t; open is how the body
// starts, before its first message.
func (p *Provider) extend(t *thread, msgs []model.Message, open string) error {
	from := len(t.start)
	if t.encoded == 0 {
		t.start = append(t.start[:0], open...)
		from = 0
		if s, ok := sha256.New().(hash.Cloner); ok {
			t.startSum = s
		}
	}
	for _, m := range msgs[t.encoded:] {
		calls, result := wireIDs(m, &t.ids)
		enc, err := marshal(p.message(m, calls, result))
		if err != nil {
			return err
		}
		if t.encoded > 0 {
			t.start = append(t.start, ',')
		}
		t.start = append(t.start, enc...)
		t.encoded++
	}
	if t.startSum != nil {
		t.startSum.Write(t.start[from:])
	}
	return nil
}

// cloneSum is a copy of the SHA-256 state after t's start, nil when the thread keeps none.
func cloneSum(t *thread) (hash.Hash, error) {
	if t.startSum == nil {
		return nil, nil
	}
	c, err := t.startSum.Clone()
	if err != nil {
		return nil, err
	}
	return c, nil
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

// splice is the middleware that sends body in place of the SDK's own, which must be a JSON
// object of the fields the SDK added to the empty body given to it ("stream": true). They are
// added to body as sjson adds a field the object lacks, after its last one, so the bytes are
// those the SDK would send had it been given body (TestCachedBodyIsTheSDKBody holds it to
// that). body's rest is the splice's own and was built with room for the fields: they are
// added in place, and the conversation's start is never copied.
func splice(body encoded) option.Middleware {
	var rest []byte
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		if rest == nil { // a retry sends the same bytes again
			added, err := readAll(req)
			if err != nil {
				return nil, err
			}
			b := body.rest
			if len(added) < 2 || added[0] != '{' || added[len(added)-1] != '}' || len(b) < 2 || b[len(b)-1] != '}' {
				return nil, fmt.Errorf("openai: the SDK's body %q is not a JSON object", added)
			}
			rest = b
			if fields := added[1 : len(added)-1]; len(bytes.TrimSpace(fields)) > 0 {
				rest = append(append(append(b[:len(b)-1], ','), fields...), '}')
			}
			if body.spliced != nil {
				*body.spliced = rest
			}
		}
		req.ContentLength = int64(len(body.start) + len(rest))
		req.GetBody = func() (io.ReadCloser, error) { return wire.NewPrefixedBody(body.start, body.startSum, rest), nil }
		req.Body, _ = req.GetBody()
		return next(req)
	}
}

// readAll reads and closes a request's body.
func readAll(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}
