package events

import (
	"reflect"
	"strings"
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

// TestFlatMemberTables: each member table names every field of its struct by the field's own
// tag and hands back that field, or leaves the field to the reference on purpose (listed
// here). A field added to a struct and not to its table, or a tag mapped to the wrong field,
// fails here rather than in a fuzz run nobody made.
func TestFlatMemberTables(t *testing.T) {
	leftToReference := map[string]bool{
		"ToolStarted.permission": true, "ToolStarted.sandbox": true, "ToolStarted.withheldEnv": true,
		"ToolSettled.metadata":                  true,
		"ProviderRequest.stepLimitFinalization": true,
		"ProviderResponse.reasoning":            true,
	}
	for _, c := range []struct {
		v      any
		member func(key []byte) (uint64, any)
	}{
		{new(ToolStarted), nil}, {new(ToolSettled), nil}, {new(ProviderRequest), nil},
		{new(WireExchange), nil}, {new(ProviderResponse), nil}, {new(ToolCall), nil},
		{new(Usage), nil}, {new(ErrorInfo), nil},
	} {
		switch p := c.v.(type) {
		case *ToolStarted:
			c.member = p.member
		case *ToolSettled:
			c.member = p.member
		case *ProviderRequest:
			c.member = p.member
		case *WireExchange:
			c.member = p.member
		case *ProviderResponse:
			c.member = p.member
		case *ToolCall:
			c.member = p.member
		case *Usage:
			c.member = p.member
		case *ErrorInfo:
			c.member = p.member
		}
		v := reflect.ValueOf(c.v).Elem()
		bits := uint64(0)
		for i := range v.NumField() {
			f := v.Type().Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			name := v.Type().Name() + "." + tag
			bit, field := c.member([]byte(tag))
			if leftToReference[name] {
				if bit != 0 {
					t.Errorf("%s: listed as left to the reference, but the table takes it", name)
				}
				continue
			}
			if bit == 0 {
				t.Errorf("%s: a field the member table does not name (add it, or list it here as left to the reference)", name)
				continue
			}
			if bits&bit != 0 || bit&(bit-1) != 0 {
				t.Errorf("%s: bit %#x is not a distinct single bit", name, bit)
			}
			bits |= bit
			if reflect.ValueOf(field).Pointer() != v.Field(i).Addr().Pointer() {
				t.Errorf("%s: the table hands back another field", name)
			}
			for _, other := range []string{strings.ToUpper(tag), strings.ToLower(tag) + "x", ""} {
				if other != tag {
					if b, _ := c.member([]byte(other)); b != 0 {
						t.Errorf("%s: the table takes the spelling %q", name, other)
					}
				}
			}
		}
	}
}

// TestMetadataMemberTable: scanMetadata's table names every field of Metadata by its tag and
// hands back that field (nil for the time, which it decodes itself), each with its own bit.
func TestMetadataMemberTable(t *testing.T) {
	var md Metadata
	v := reflect.ValueOf(&md).Elem()
	var bits uint8
	for i := range v.NumField() {
		f := v.Type().Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		bit, field := md.member([]byte(tag))
		if bit == 0 || bit&(bit-1) != 0 || bits&bit != 0 {
			t.Errorf("Metadata.%s: bit %#x (a field the table does not name, or a shared bit)", tag, bit)
			continue
		}
		bits |= bit
		switch {
		case f.Type.Kind() != reflect.String:
			if field != nil {
				t.Errorf("Metadata.%s: not a string, but the table hands back a string", tag)
			}
		case field == nil || reflect.ValueOf(field).Pointer() != v.Field(i).Addr().Pointer():
			t.Errorf("Metadata.%s: the table hands back another field", tag)
		}
		if b, _ := md.member([]byte(strings.ToUpper(tag))); b != 0 {
			t.Errorf("Metadata.%s: the table takes the spelling %q", tag, strings.ToUpper(tag))
		}
	}
}
