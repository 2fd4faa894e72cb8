package schema_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/bg"
	"github.com/zuno-run/zuno/adapters/tools/delegate"
	"github.com/zuno-run/zuno/adapters/tools/toolset"
	"github.com/zuno-run/zuno/adapters/tools/worktools"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/tools"
)

// sameAsEncodingJSON: what Decode stored is what encoding/json stores from the same bytes.
// bg reads its Args from the validated values itself (clamping), so it is not compared.
func sameAsEncodingJSON(t *testing.T, name string, data []byte, got any) {
	if name == tools.NameBg {
		return
	}
	if len(data) == 0 || string(data) == "null" {
		data = []byte("{}")
	}
	want := reflect.New(reflect.TypeOf(got))
	if err := json.Unmarshal(data, want.Interface()); err != nil {
		t.Fatalf("%s accepted %q, which encoding/json does not decode: %v", name, data, err)
	}
	if !reflect.DeepEqual(got, want.Elem().Interface()) {
		t.Fatalf("%s %q: decoded %#v, encoding/json %#v", name, data, got, want.Elem().Interface())
	}
}

// everyTool is every built-in tool whose arguments this package validates.
func everyTool(t testing.TB) []tools.Tool {
	t.Helper()
	set, err := toolset.New(toolset.Config{Root: t.TempDir(), ArtifactDir: filepath.Join(t.TempDir(), "artifacts"), SessionID: "ses_fuzz"})
	if err != nil {
		t.Fatal(err)
	}
	var all []tools.Tool
	for _, tl := range set.Tools() {
		all = append(all, tl)
	}
	all = append(all, worktools.New(nil)...)
	all = append(all, delegate.New(nil)...)
	return append(all, bg.NewTool(nil))
}

// FuzzValidate: arbitrary argument bytes against each tool's schema never panic; the answer
// is an acceptance of a JSON object (or of the empty arguments a tool takes as {}) or a
// *domain.Error naming a field, a message and a fix.
func FuzzValidate(f *testing.F) {
	for _, seed := range []string{``, `null`, `{}`, `[]`, `{"path":"a"}`, `{"path":"a","path":"a"}`, "{\"path\":\"\xff\"}",
		`{"path":"\ud800"}`, `{"path":"\ud83d\ude00"}`, `{"a":{"b":[1,{"c":null}]}}`, `{"limit":1e400}`, `{"offset":-0}`,
		`{"action":"wait","taskID":"x","timeoutMs":1e19,"cursor":12.0}`, `{"action":"create","title":"t","steps":[{"title":"a"}]}`,
		`{"items":[{"id":"a","dependencies":["b",1]}]}`, `{"command":"ls","exitPolicy":"all","background":true}`,
		`{"name":"r.md","content":"x\u0000"}`, `{"":""}`, `{"patch":"*** Begin Patch\n*** End Patch"} {}`, `{"a":"\u00e9\\"}`} {
		f.Add([]byte(seed))
	}
	all := everyTool(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tl := range all {
			p, err := tl.Validate(json.RawMessage(data))
			if err != nil {
				var de *domain.Error
				if !errors.As(err, &de) || de.Field == "" || de.Message == "" || de.Fix == "" {
					t.Fatalf("%s %q: refusal %v (%T) is not a typed error with field and fix", tl.Declaration().Name, data, err, err)
				}
				continue
			}
			if p.Args == nil {
				t.Fatalf("%s %q: accepted without arguments", tl.Declaration().Name, data)
			}
			trimmed := bytes.TrimSpace(data)
			if len(trimmed) > 0 && string(trimmed) != "null" {
				var obj map[string]json.RawMessage
				if err := json.Unmarshal(trimmed, &obj); err != nil || obj == nil {
					t.Fatalf("%s accepted %q, which is not one JSON object: %v", tl.Declaration().Name, data, err)
				}
			}
			sameAsEncodingJSON(t, tl.Declaration().Name, trimmed, p.Args)
		}
	})
}
