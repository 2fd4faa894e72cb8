package events_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/zuno-run/zuno/events"
)

// DecodeMetadata decodes as encoding/json does, whatever the input: the same metadata, and an
// error exactly when encoding/json gives one, in its words.
func FuzzDecodeMetadata(f *testing.F) {
	for _, s := range []string{
		`{"commandId":"c","actor":"user","time":"2026-12-03T06:00:00.123456789Z","hash":"ab"}`,
		`{"commandId":"c","commandDigest":"d","causationId":"x","correlationId":"y","actor":"a","time":"2026-12-03T06:00:00Z"}`,
		`{"COMMANDID":"c","actor":null,"time":"2026-12-03T06:00:00+02:00","extra":[1,{"a":2}]}`,
		`{"commandId":"a","commandId":"b","time":"not a time"}`,
		`{"commandId":1}`, `{"actor":"\ud800"}`, `null`, `[]`, `{`, `{"time":null}`, ` {"actor":"x"} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got, want events.Metadata
		gotErr, wantErr := events.DecodeMetadata(data, &got), json.Unmarshal(data, &want)
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("%q: error %v, encoding/json %v", data, gotErr, wantErr)
		}
		if gotErr == nil && (!reflect.DeepEqual(got, want) || !got.Time.Equal(want.Time)) {
			t.Fatalf("%q: %+v, encoding/json %+v", data, got, want)
		}
	})
}
