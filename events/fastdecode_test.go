package events

import (
	"reflect"
	"slices"
	"testing"
)

// FuzzFastDecodeAgrees: the fast decoder (fastUnmarshal) and encoding/json (decodeStrict)
// accept the same data and decode it to the same payload, for every registered type. Decode
// takes the fast decoder's result where it succeeds, so a datum it accepted and
// encoding/json refused would let a malformed event through.
func FuzzFastDecodeAgrees(f *testing.F) {
	reg := NewRegistry(AllPayloads()...)
	names := reg.Names()
	f.Add(0, []byte(`{"sessionId":"s","title":"t","agent":"build"}`))
	f.Add(1, []byte(`{"items":[{"id":"a","dependencies":null}]}`))
	f.Add(2, []byte(`{"steps":[1,2]}`))
	f.Add(3, []byte(`{"title":`))
	f.Add(4, []byte(`{"SESSIONID":"s","sessionId":"t","sessionid":"u"}`))
	f.Add(5, []byte("{\"title\":\"\xff\\ud800\"}"))
	f.Add(6, []byte(`{"revision":1e2,"depth":-0,"steps":[{"id":"x","title":null}]}`))
	f.Add(7, []byte(`{"a":1,"a":2} `))
	// The payloads scanFlat takes (a tool call's start and settlement, a provider request):
	// what it takes, and each thing it must leave to the reference.
	flat := func(typ, data string) { f.Add(slices.Index(names, typ), []byte(data)) }
	for _, d := range []string{
		`{"requestId":"r","callId":"c","tool":"look","group":0,"sideEffect":"ReadOnly","replay":"Safe","concurrency":"ParallelSafe"}`,
		`{"requestId":"r","callId":"c","tool":"bash","group":-0,"permission":{"decision":"allow"}}`,
		`{"group":1e2}`, `{"group":1.0}`, `{"group":01}`, `{"group":9223372036854775808}`, `{"group":"1"}`, `{"group":null}`,
		`{"tool":"a","Tool":"b"}`, `{"tool":"a","tool":"b"}`, `{"TOOL":"a"}`, `{"unknown":1}`, `{}`, ` { } `, `{"tool":"a",}`,
	} {
		flat(TypeToolStarted, d)
	}
	for _, d := range []string{
		`{"requestId":"r","callId":"c","tool":"look","outcome":"completed","output":"seen \u003c{\"n\":3}\u003e ✓"}`,
		`{"output":"a\nb\t\"\\\/\b\f\r\u00e9\u2028"}`, `{"output":"\ud83d\ude00"}`, `{"output":"\ud800"}`,
		`{"output":"\u12"}`, `{"output":"\x"}`, "{\"output\":\"\xff\"}", "{\"output\":\"a\tb\"}",
		`{"recovered":true,"durationMs":12}`, `{"recovered":tru}`, `{"recovered":1}`, `{"metadata":{"writtenPaths":["a"]}}`,
	} {
		flat(TypeToolSettled, d)
	}
	for _, d := range []string{
		`{"requestId":"r","step":3,"status":"started","promptReceiptID":"p","provider":"audit","model":"m"}`,
		`{"requestId":"r","step":3,"status":"completed","wire":{"adapter":"openai.chat"},"durationMs":94}`,
		`{"step":-9223372036854775808,"attempt":2,"retryInMs":-1}`, `{"promptReceiptId":"p"}`,
		`{"wire":{"adapter":"a","mapping":{"k":"v","k":"w"},"requestBytes":1},"response":{"toolCalls":[{"id":"c","name":"n","arguments":"{}"},{}],"usage":{"inputTokens":3}}}`,
		`{"wire":{"mapping":{}},"response":{"toolCalls":[]},"error":{"code":"c","httpStatus":500}}`,
		`{"wire":null}`, `{"wire":{"mapping":null}}`, `{"wire":{"mapping":{"k":1}}}`, `{"wire":{"mapping":{"\u006b":"v"}}}`,
		"{\"wire\":{\"mapping\":{\"\xff\":\"v\"}}}", "{\"wire\":{\"mapping\":{\"k\xc3\":\"v\"}}}", "{\"tool\xff\":\"a\"}",
		`{"response":{"toolCalls":[null]}}`, `{"response":{"toolCalls":[{"id":"a"},]}}`, `{"response":{"usage":{"inputTokens":1.5}}}`,
		`{"response":{"reasoning":[]}}`, `{"response":{"ToolCalls":[]}}`, `{"wire":{},"wire":{}}`, `{"response":{"usage":{}},"stepLimitFinalization":{}}`,
	} {
		flat(TypeProviderRequest, d)
	}
	f.Fuzz(func(t *testing.T, which int, data []byte) {
		typ := names[uint(which)%uint(len(names))]
		decodersAgree(t, reg, typ, "s", data)
	})
}

// scanFlat takes the flat payloads as a turn writes them (FuzzFastDecodeAgrees checks that
// what it takes decodes as encoding/json decodes it; this, that it takes them at all), and
// leaves the others to the reference.
func TestScanFlatTakesWhatATurnWrites(t *testing.T) {
	for _, c := range []struct {
		into any
		data string
		took bool
	}{
		{&ToolStarted{}, `{"requestId":"r","callId":"c","tool":"look","group":0,"sideEffect":"ReadOnly","replay":"Safe","concurrency":"ParallelSafe"}`, true},
		{&ToolSettled{}, `{"requestId":"r","callId":"c","tool":"look","outcome":"completed","output":"seen \u003c{\"n\":3}\u003e ✓\n"}`, true},
		{&ProviderRequest{}, `{"requestId":"r","step":3,"status":"started","promptReceiptID":"p","provider":"audit","model":"m"}`, true},
		{&ProviderRequest{}, `{"requestId":"e4","step":3,"status":"completed","promptReceiptID":"9a","provider":"audit","model":"m","wire":{"adapter":"openai.chat","mappingVersion":1,"mapping":{"dialect":"compatible","toolChoice":"sent"},"endpoint":"http://127.0.0.1:42829/v1/chat/completions","requestSha256":"beb5","requestBytes":1954,"responseSha256":"52cc","responseBytes":571,"httpStatus":200},"response":{"id":"c3","model":"m","text":"step \u003ca\u003e \u0026 é","toolCalls":[{"id":"call_8a","providerId":"call_0","name":"look","arguments":"{\"n\":3}"}],"usage":{"inputTokens":0,"outputTokens":0},"finishReason":"tool_calls","providerFinishReason":"tool_calls"},"durationMs":94}`, true},
		{&ProviderRequest{}, `{"status":"failed","error":{"code":"provider_error","message":"m","httpStatus":500,"retryAfterMs":10},"response":{"toolCalls":[],"closedToolCalls":[{}]},"wire":{"mapping":{}}}`, true},
		{&ProviderRequest{}, `{"status":"completed","response":{"reasoning":[{"id":"r"}]}}`, false},
		{&ProviderRequest{}, `{"status":"completed","stepLimitFinalization":{}}`, false},
		{&ProviderRequest{}, `{"wire":null}`, false},
		{&ToolSettled{}, `{"output":"\ud83d\ude00"}`, false},
		{&PromptAssembled{}, `{"receiptId":"r"}`, false},
	} {
		v := reflect.New(reflect.TypeOf(c.into).Elem())
		if took := scanFlat([]byte(c.data), v.Interface()); took != c.took {
			t.Errorf("%T %s: scanFlat took it: %v, want %v", c.into, c.data, took, c.took)
			continue
		}
		want := reflect.New(v.Type().Elem())
		if err := decodeStrict([]byte(c.data), want.Interface()); err != nil {
			t.Fatal(err)
		}
		if c.took && !reflect.DeepEqual(v.Interface(), want.Interface()) {
			t.Errorf("%T %s: %+v, encoding/json %+v", c.into, c.data, v.Elem(), want.Elem())
		}
	}
}

// FuzzScanFlatAgrees is FuzzFastDecodeAgrees for the payloads scanFlat takes only, so that
// the fuzzer spends its time on them rather than on every registered type.
func FuzzScanFlatAgrees(f *testing.F) {
	reg := NewRegistry(AllPayloads()...)
	types := []string{TypeToolStarted, TypeToolSettled, TypeProviderRequest}
	f.Add(0, []byte(`{"requestId":"r","callId":"c","tool":"look","group":0,"sideEffect":"ReadOnly"}`))
	f.Add(1, []byte(`{"callId":"c","outcome":"completed","output":"a\u003c\n\"é","recovered":false,"durationMs":3}`))
	f.Add(2, []byte(`{"requestId":"r","step":3,"status":"completed","wire":{"adapter":"openai.chat","mappingVersion":1,"mapping":{"dialect":"compatible"},"requestBytes":19},"response":{"text":"t","toolCalls":[{"id":"c","name":"look","arguments":"{\"n\":3}"}],"usage":{"inputTokens":1}},"error":{"code":"x","httpStatus":500}}`))
	f.Fuzz(func(t *testing.T, which int, data []byte) {
		typ := types[uint(which)%uint(len(types))]
		decodersAgree(t, reg, typ, "session-s", data)
	})
}

// decodersAgree decodes data as an event of type typ in stream with the fast decoder and
// with encoding/json, and fails unless both refuse it or both give the same payload.
func decodersAgree(t *testing.T, reg *Registry, typ, stream string, data []byte) {
	t.Helper()
	rec := Recorded{Event: Event{ID: DeriveID("f", 0), Type: typ, Data: data}, Stream: stream, Position: 7}
	tp := reg.types[typ]
	fast, fastErr := reg.decodeWith(fastUnmarshal, tp, rec)
	slow, slowErr := reg.decodeWith(decodeStrict, tp, rec)
	if (fastErr == nil) != (slowErr == nil) {
		t.Fatalf("%s %q: fast decoder says %v, encoding/json %v", typ, data, fastErr, slowErr)
	}
	if fastErr == nil && !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s %q: fast decoder gives %#v, encoding/json %#v", typ, data, fast, slow)
	}
}
