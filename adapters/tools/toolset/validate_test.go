package toolset

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/zuno-run/zuno/domain/tools"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
)

const samplePatch = "*** Begin Patch\n*** Add File: new.txt\n+hello\n*** End Patch\n"

// sampleArgs has, per tool, a minimal valid argument object and a valid value for every
// property the schema lists. The agreement test fails when a schema property has no sample,
// so the table cannot fall behind the schema.
var sampleArgs = map[string]struct {
	base   string
	values map[string]any
}{
	tools.NameRead: {`{"path":"a.txt"}`, map[string]any{"path": "a.txt", "offset": 3, "limit": 10}},
	tools.NameGlob: {`{"pattern":"*.go"}`, map[string]any{"pattern": "**/*.go", "path": "src", "limit": 5}},
	tools.NameGrep: {`{"pattern":"func"}`, map[string]any{"pattern": "a|b", "path": "src", "include": "*.go",
		"caseInsensitive": true, "context": 2, "limit": 7}},
	tools.NameWrite:       {`{"path":"a.txt","content":""}`, map[string]any{"path": "b/c.txt", "content": "x\x00y"}},
	tools.NameApplyPatch:  {args("patch", samplePatch), map[string]any{"patch": samplePatch}},
	tools.NameShell:       {`{"command":"true"}`, map[string]any{"command": "echo hi", "workdir": "sub", "timeoutMs": 1500, "exitPolicy": "last", "background": true}},
	tools.NameReportWrite: {`{"name":"r.md","content":"x"}`, map[string]any{"name": "audit.md", "content": "# Findings\n"}},
}

type schemaDoc struct {
	Type       string `json:"type"`
	Properties map[string]struct {
		Type      string   `json:"type"`
		Enum      []string `json:"enum"`
		Minimum   *int64   `json:"minimum"`
		Maximum   *int64   `json:"maximum"`
		MinLength *int     `json:"minLength"`
	} `json:"properties"`
	Required             []string `json:"required"`
	AdditionalProperties *bool    `json:"additionalProperties"`
}

func with(base string, key string, v any) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		panic(err)
	}
	m[key] = v
	b, _ := json.Marshal(m)
	return string(b)
}

func without(base, key string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(base), &m); err != nil {
		panic(err)
	}
	delete(m, key)
	b, _ := json.Marshal(m)
	return string(b)
}

// wantField asserts that err is an invalid_argument *domain.Error about field, with a fix.
func wantField(t *testing.T, err error, field, what string) {
	t.Helper()
	var de *domain.Error
	if !errors.As(err, &de) {
		t.Errorf("%s: got %v (%T), want a *domain.Error about %q", what, err, err, field)
		return
	}
	if de.Code() != domain.CodeInvalidArgument || de.Field != field || de.Fix == "" {
		t.Errorf("%s: got code %q field %q fix %q (%v), want field %q", what, de.Code(), de.Field, de.Fix, de, field)
	}
}

// TestSchemaValidatorAgreement checks, from each published schema, that the validator
// accepts every property with a valid value, enforces every required one, and refuses what
// the schema excludes: other types, values outside the bounds, unknown enum values, empty
// strings under minLength, and properties the schema does not list.
func TestSchemaValidatorAgreement(t *testing.T) {
	s, _ := newSet(t)
	for _, tl := range s.Tools() {
		name := tl.Declaration().Name
		var doc schemaDoc
		if err := json.Unmarshal(tl.Spec().Schema, &doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sample, ok := sampleArgs[name]
		if !ok {
			t.Fatalf("%s: no samples", name)
		}
		if doc.Type != "object" || doc.AdditionalProperties == nil || *doc.AdditionalProperties {
			t.Errorf("%s: schema is not a closed object", name)
		}
		props := slices.Sorted(maps.Keys(doc.Properties))
		if got := slices.Sorted(maps.Keys(sample.values)); !slices.Equal(props, got) {
			t.Fatalf("%s: schema properties %v, samples for %v", name, props, got)
		}
		var base map[string]any
		json.Unmarshal([]byte(sample.base), &base)
		if got := slices.Sorted(maps.Keys(base)); !slices.Equal(got, slices.Sorted(slices.Values(doc.Required))) {
			t.Errorf("%s: base sample has %v, schema requires %v", name, got, doc.Required)
		}
		validate := func(a string) error { _, err := tl.Validate(json.RawMessage(a)); return err }
		if err := validate(sample.base); err != nil {
			t.Fatalf("%s: base %s: %v", name, sample.base, err)
		}
		for _, req := range doc.Required {
			wantField(t, validate(without(sample.base, req)), req, name+" without "+req)
		}
		wantField(t, validate(with(sample.base, "zzUnknown", 1)), "zzUnknown", name+" unknown property")
		for _, p := range props {
			prop := doc.Properties[p]
			label := name + "." + p
			if err := validate(with(sample.base, p, sample.values[p])); err != nil {
				t.Errorf("%s = %v refused: %v", label, sample.values[p], err)
			}
			switch prop.Type {
			case "string":
				wantField(t, validate(with(sample.base, p, 7)), p, label+" as number")
				wantField(t, validate(with(sample.base, p, nil)), p, label+" as null")
				if prop.MinLength != nil && *prop.MinLength == 1 {
					wantField(t, validate(with(sample.base, p, "")), p, label+" empty")
				}
				for _, v := range prop.Enum {
					if err := validate(with(sample.base, p, v)); err != nil {
						t.Errorf("%s = %q refused: %v", label, v, err)
					}
				}
				if prop.Enum != nil {
					wantField(t, validate(with(sample.base, p, "bogus")), p, label+" unknown enum")
				}
			case "integer":
				if prop.Minimum == nil || prop.Maximum == nil {
					t.Fatalf("%s: integer without bounds", label)
				}
				for _, v := range []int64{*prop.Minimum, *prop.Maximum} {
					if err := validate(with(sample.base, p, v)); err != nil {
						t.Errorf("%s = %d refused: %v", label, v, err)
					}
				}
				wantField(t, validate(with(sample.base, p, *prop.Minimum-1)), p, label+" below minimum")
				wantField(t, validate(with(sample.base, p, *prop.Maximum+1)), p, label+" above maximum")
				wantField(t, validate(with(sample.base, p, "1")), p, label+" as string")
				wantField(t, validate(with(sample.base, p, 1.5)), p, label+" fractional")
			case "boolean":
				wantField(t, validate(with(sample.base, p, "true")), p, label+" as string")
				wantField(t, validate(with(sample.base, p, 1)), p, label+" as number")
				for _, v := range []bool{true, false} {
					if err := validate(with(sample.base, p, v)); err != nil {
						t.Errorf("%s = %v refused: %v", label, v, err)
					}
				}
			default:
				t.Errorf("%s: unexpected type %q", label, prop.Type)
			}
		}
	}
}

// TestValidateCommon runs the shapes every tool refuses the same way.
func TestValidateCommon(t *testing.T) {
	s, _ := newSet(t)
	for _, tl := range s.Tools() {
		name := tl.Declaration().Name
		base := sampleArgs[name].base
		first := strings.TrimPrefix(strings.SplitN(base, ":", 2)[0], "{")
		var firstKey string
		json.Unmarshal([]byte(first), &firstKey)
		for _, tc := range []struct {
			args, field string
		}{
			{``, "arguments"},
			{`   `, "arguments"},
			{`null`, "arguments"},
			{`[]`, "arguments"},
			{`"x"`, "arguments"},
			{`42`, "arguments"},
			{`{`, "arguments"},
			{`{"a"`, "arguments"},
			{`{}`, firstKey},
			{base + `{}`, "arguments"},
			{base + ` x`, "arguments"},
			{base + `,`, "arguments"},
			{strings.Replace(base, "{", "{"+strings.TrimSuffix(strings.TrimPrefix(base, "{"), "}")+",", 1), firstKey}, // every key twice
			{strings.Replace(base, `"`+firstKey+`"`, `"`+strings.ToUpper(firstKey)+`"`, 1), strings.ToUpper(firstKey)},
			{strings.Replace(with(base, firstKey, "A"), `"A"`, "\"\xff\"", 1), firstKey},
			{strings.Replace(with(base, firstKey, "A"), `"A"`, `"\ud800"`, 1), firstKey},
			{strings.Replace(with(base, firstKey, "A"), `"A"`, `"\udc00x"`, 1), firstKey},
			{with(base, firstKey, []string{"a"}), firstKey},
			{with(base, firstKey, map[string]any{}), firstKey},
		} {
			_, err := tl.Validate(json.RawMessage(tc.args))
			wantField(t, err, tc.field, fmt.Sprintf("%s %q", name, tc.args))
		}
		// A surrogate pair is fine where a string is free text.
		if name == tools.NameWrite {
			if _, err := tl.Validate(json.RawMessage(`{"path":"a","content":"\ud83d\ude00 \\ud800"}`)); err != nil {
				t.Errorf("write with a surrogate pair and an escaped backslash: %v", err)
			}
		}
	}
}

func TestValidatePerTool(t *testing.T) {
	s, _ := newSet(t)
	big := strings.Repeat("x", MaxReportBytes+1)
	for _, tc := range []struct {
		tool, args, field string // field "" means valid
	}{
		{tools.NameRead, `{"path":"a","offset":0}`, "offset"},
		{tools.NameRead, `{"path":"a","offset":-1}`, "offset"},
		{tools.NameRead, `{"path":"a","limit":0}`, "limit"},
		{tools.NameRead, `{"path":"a","limit":1e3}`, "limit"},
		{tools.NameRead, `{"path":"a","limit":99999999999999999999}`, "limit"},
		{tools.NameRead, `{"path":"a\u0000b"}`, "path"},
		{tools.NameRead, `{"path":"a","offset":-0}`, "offset"},
		{tools.NameRead, `{"path":"dir/a.go","offset":10,"limit":5}`, ""},
		{tools.NameGlob, `{"pattern":""}`, "pattern"},
		{tools.NameGlob, `{"pattern":"*","path":""}`, "path"},
		{tools.NameGrep, `{"pattern":"x","context":51}`, "context"},
		{tools.NameGrep, `{"pattern":"x","context":0}`, ""},
		{tools.NameGrep, `{"pattern":"x","caseInsensitive":"yes"}`, "caseInsensitive"},
		{tools.NameGrep, `{"pattern":"x","case_insensitive":true}`, "case_insensitive"},
		{tools.NameWrite, `{"path":"a"}`, "content"},
		{tools.NameWrite, `{"content":"x"}`, "path"},
		{tools.NameWrite, `{"path":"a","content":null}`, "content"},
		{tools.NameApplyPatch, `{"patch":"not a patch"}`, "patch"},
		{tools.NameApplyPatch, `{"patch":"*** Begin Patch\n*** End Patch\n"}`, "patch"},
		{tools.NameApplyPatch, `{"patch":"*** Begin Patch\n*** Frobnicate File: x\n*** End Patch\n"}`, "patch"},
		{tools.NameShell, `{"command":"   "}`, "command"},
		{tools.NameShell, `{"command":"ls","timeoutMs":0}`, "timeoutMs"},
		{tools.NameShell, `{"command":"ls","timeoutMs":600001}`, "timeoutMs"},
		{tools.NameShell, `{"command":"ls","exitPolicy":"any"}`, "exitPolicy"},
		{tools.NameShell, `{"command":"ls","exitPolicy":"PIPEFAIL"}`, "exitPolicy"},
		{tools.NameShell, `{"command":"ls","background":true,"timeoutMs":1000}`, "timeoutMs"},
		{tools.NameShell, `{"command":"ls","background":false,"timeoutMs":1000,"exitPolicy":"all","workdir":"x"}`, ""},
		{tools.NameShell, `{"cmd":"ls"}`, "cmd"},
		{tools.NameReportWrite, `{"name":"a/b.md","content":"x"}`, "name"},
		{tools.NameReportWrite, `{"name":"a\\b.md","content":"x"}`, "name"},
		{tools.NameReportWrite, `{"name":".","content":"x"}`, "name"},
		{tools.NameReportWrite, `{"name":"..","content":"x"}`, "name"},
		{tools.NameReportWrite, `{"name":"a\u0001.md","content":"x"}`, "name"},
		{tools.NameReportWrite, `{"name":"a\u202e.md","content":"x"}`, "name"},
		{tools.NameReportWrite, `{"name":"a:b.md","content":"x"}`, "name"},
		{tools.NameReportWrite, `{"name":"report.","content":"x"}`, "name"},
		{tools.NameReportWrite, `{"name":" report.md","content":"x"}`, "name"},
		{tools.NameReportWrite, `{"name":"CON.txt","content":"x"}`, "name"},
		{tools.NameReportWrite, `{"name":"` + strings.Repeat("a", 129) + `","content":"x"}`, "name"},
		{tools.NameReportWrite, `{"name":"` + strings.Repeat("a", 128) + `","content":"x"}`, ""},
		{tools.NameReportWrite, `{"name":"r.md","content":""}`, "content"},
		{tools.NameReportWrite, `{"name":"r.md","content":"` + big + `"}`, "content"},
		{tools.NameReportWrite, `{"name":"r.md","content":"` + big[1:] + `"}`, ""},
		{tools.NameReportWrite, `{"name":"Prüfbericht 2024 (final).md","content":"ok"}`, ""},
		{tools.NameReportWrite, `{"name":".hidden-notes.md","content":"ok"}`, ""},
	} {
		_, err := toolNamed(t, s, tc.tool).Validate(json.RawMessage(tc.args))
		label := tc.tool + " " + clipForLog(tc.args)
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: %v", label, err)
			}
			continue
		}
		wantField(t, err, tc.field, label)
	}
}

func clipForLog(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// TestUnknownFieldListsValid: the error for an unknown field lists the accepted names, so
// the model can correct the spelling.
func TestUnknownFieldListsValid(t *testing.T) {
	s, _ := newSet(t)
	_, err := toolNamed(t, s, tools.NameGrep).Validate(json.RawMessage(`{"pattern":"x","ignoreCase":true}`))
	var de *domain.Error
	if !errors.As(err, &de) || !slices.Contains(de.Valid, "caseInsensitive") || !strings.Contains(de.Fix, "caseInsensitive") {
		t.Fatalf("got %v", err)
	}
}

// FuzzValidate: no input panics any validator; an accepted input is a JSON object that
// decodes into the tool's arguments; a refusal is a *domain.Error naming a field and a fix.
func FuzzValidate(f *testing.F) {
	for _, sample := range sampleArgs {
		f.Add([]byte(sample.base))
		for k, v := range sample.values {
			f.Add([]byte(with(sample.base, k, v)))
		}
	}
	for _, seed := range []string{``, `null`, `{}`, `{"path":"\ud800"}`, `{"a":1,"a":2}`, `{"patch":"*** Begin Patch\n*** Update File: a\n@@\n-x\n+y\n*** End Patch"}`,
		`{"command":"ls","timeoutMs":1.0}`, `{"name":"CON","content":"x"}`, "{\"path\":\"\xff\"}", `{"limit":-0}`} {
		f.Add([]byte(seed))
	}
	s, _ := newSet(f)
	decoders := map[string]func(json.RawMessage) error{
		tools.NameRead:        func(b json.RawMessage) error { var a readArgs; return json.Unmarshal(b, &a) },
		tools.NameGlob:        func(b json.RawMessage) error { var a globArgs; return json.Unmarshal(b, &a) },
		tools.NameGrep:        func(b json.RawMessage) error { var a grepArgs; return json.Unmarshal(b, &a) },
		tools.NameWrite:       func(b json.RawMessage) error { var a writeArgs; return json.Unmarshal(b, &a) },
		tools.NameApplyPatch:  func(b json.RawMessage) error { var a applyPatchArgs; return json.Unmarshal(b, &a) },
		tools.NameShell:       func(b json.RawMessage) error { var a shellArgs; return json.Unmarshal(b, &a) },
		tools.NameReportWrite: func(b json.RawMessage) error { var a reportArgs; return json.Unmarshal(b, &a) },
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, tl := range s.Tools() {
			name := tl.Declaration().Name
			action, err := tl.Validate(json.RawMessage(data))
			if err != nil {
				var de *domain.Error
				if !errors.As(err, &de) || de.Field == "" || de.Fix == "" {
					t.Fatalf("%s %q: refusal %v (%T) lacks a field or fix", name, data, err, err)
				}
				continue
			}
			if action.Action != "" || action.Args == nil {
				t.Fatalf("%s: parsed %+v", name, action)
			}
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
				t.Fatalf("%s accepted %q, which is not a JSON object: %v", name, data, err)
			}
			if err := decoders[name](data); err != nil {
				t.Fatalf("%s accepted %q, which does not decode: %v", name, data, err)
			}
		}
	})
}
