package events

import (
	"reflect"
	"testing"
)

// Attacks on scanFlat from review (issue 32): data a tamperer could write that scanFlat
// must either decode exactly as encoding/json does or leave to it.
func TestScanFlatReviewAttacks(t *testing.T) {
	for _, c := range []struct {
		into any
		data string
	}{
		// encoding/json replaces invalid UTF-8 in a map key with U+FFFD.
		{&ProviderRequest{}, "{\"wire\":{\"mapping\":{\"\xff\":\"v\"}}}"},
		{&ProviderRequest{}, "{\"wire\":{\"mapping\":{\"a\xc3\":\"v\"}}}"},
		// a member name with invalid UTF-8 that folds to a tag.
		{&ToolStarted{}, "{\"tool\xff\":\"a\"}"},
		{&ToolStarted{}, `{"Tool":"a"}`},
		{&ToolStarted{}, `{"toolK":"a"}`},
		{&ToolStarted{}, `{"tool":"a\u0000b"}`},
		{&ToolSettled{}, `{"durationMs":-0}`},
		{&ToolSettled{}, `{"durationMs":1E2}`},
		{&ToolSettled{}, `{"durationMs":-}`},
		{&ToolSettled{}, `{"recovered":truex}`},
		{&ProviderRequest{}, `{"response":{"usage":null}}`},
		{&ProviderRequest{}, `{"response":{"toolCalls":null}}`},
		{&ProviderRequest{}, `{"wire":{"mapping":{"k":null}}}`},
		{&ProviderRequest{}, `{"wire":{"mapping":{"k":"v",}}}`},
		{&ProviderRequest{}, `{"wire":{"mapping":{"k" : "v" , "l":"w"}}}`},
		{&ProviderRequest{}, `{"promptReceiptId":"a","promptReceiptID":"b"}`},
		{&ProviderRequest{}, `{"promptReceiptID":"b","promptReceiptId":"a"}`},
	} {
		got := reflect.New(reflect.TypeOf(c.into).Elem())
		gotErr := fastUnmarshal([]byte(c.data), got.Interface())
		want := reflect.New(reflect.TypeOf(c.into).Elem())
		wantErr := decodeStrict([]byte(c.data), want.Interface())
		if (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%T %q: fast %v, encoding/json %v", c.into, c.data, gotErr, wantErr)
			continue
		}
		if gotErr == nil && !reflect.DeepEqual(got.Interface(), want.Interface()) {
			t.Errorf("%T %q: fast %+v, encoding/json %+v", c.into, c.data, got.Elem(), want.Elem())
		}
	}
}
