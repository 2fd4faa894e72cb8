package mcp

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain"
)

// Every spelling of a malformed server entry is a typed error naming the field.
func TestParseServersRefuses(t *testing.T) {
	for _, tc := range []struct{ name, js, code, field string }{
		{"not an object", `[1]`, CodeBadServer, "mcp"},
		{"unknown key", `{"a":{"command":["x"],"cmd":"y"}}`, CodeBadServer, "mcp.a"},
		{"command and url", `{"a":{"command":["x"],"url":"https://h/mcp"}}`, CodeBadServer, "mcp.a"},
		{"neither", `{"a":{"enabled":true}}`, CodeBadServer, "mcp.a"},
		{"empty program", `{"a":{"command":[" "]}}`, CodeBadServer, "mcp.a.command[0]"},
		{"NUL in argument", `{"a":{"command":["x","a\u0000b"]}}`, CodeBadServer, "mcp.a.command[1]"},
		{"command as a string with spaces", `{"a":{"command":"npx server"}}`, CodeBadServer, "mcp.a"},
		{"command neither string nor array", `{"a":{"command":7}}`, CodeBadServer, "mcp.a"},
		{"ftp url", `{"a":{"url":"ftp://h/mcp"}}`, CodeBadServer, "mcp.a.url"},
		{"url without host", `{"a":{"url":"https:///mcp"}}`, CodeBadServer, "mcp.a.url"},
		{"credentials in url", `{"a":{"url":"https://user:key@h/mcp"}}`, CodeBadServer, "mcp.a.url"},
		{"headers on local", `{"a":{"command":["x"],"headers":{"A":"b"}}}`, CodeBadServer, "mcp.a.headers"},
		{"env on remote", `{"a":{"url":"https://h/mcp","env":{"A":"b"}}}`, CodeBadServer, "mcp.a.env"},
		{"remote type with command", `{"a":{"type":"remote","command":["x"]}}`, CodeBadServer, "mcp.a.type"},
		{"local type with url", `{"a":{"type":"local","url":"https://h/mcp"}}`, CodeBadServer, "mcp.a.type"},
		{"timeout too short", `{"a":{"command":["x"],"timeout":10}}`, CodeBadServer, "mcp.a.timeout"},
		{"timeout too long", `{"a":{"command":["x"],"timeout":6000000}}`, CodeBadServer, "mcp.a.timeout"},
		{"name too long", `{"` + strings.Repeat("a", 33) + `":{"command":["x"]}}`, CodeBadServer, "mcp." + strings.Repeat("a", 33)},
		{"names that fold to one by case", `{"GitHub":{"command":["x"]},"github":{"command":["y"]}}`, CodeServerNameCollision, "mcp.github"},
		{"names that fold to one by punctuation", `{"my-docs":{"command":["x"]},"my_docs":{"command":["y"]}}`, CodeServerNameCollision, "mcp.my_docs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseServers(json.RawMessage(tc.js))
			var de *domain.Error
			if !errors.As(err, &de) || de.Code() != tc.code || de.Field != tc.field {
				t.Fatalf("got %v, want %s at %s", err, tc.code, tc.field)
			}
		})
	}
}

func TestParseServersAdmits(t *testing.T) {
	got, err := ParseServers(json.RawMessage(`{"Git-Hub":{"command":["npx","srv"],"env":{"K":"v"},"timeout":5000},
		"docs":{"type":"remote","url":"https://docs.example/mcp","headers":{"Authorization":"Bearer k"},"enabled":false}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "git_hub" || got[0].Configured != "Git-Hub" || got[0].Transport != TransportStdio ||
		got[0].Timeout.Milliseconds() != 5000 || !got[0].Enabled || got[0].Environment["K"] != "v" {
		t.Fatalf("stdio server: %+v", got[0])
	}
	if got[1].Name != "docs" || got[1].Transport != TransportHTTP || got[1].Enabled || got[1].Timeout != DefaultTimeout {
		t.Fatalf("http server: %+v", got[1])
	}
	if s, err := ParseServers(json.RawMessage(`{"x":{"command":"node"}}`)); err != nil || len(s) != 1 || !slices.Equal(s[0].Command, []string{"node"}) {
		t.Fatalf("a command as one program's name: %+v %v", s, err)
	}
	if s, err := ParseServers(json.RawMessage(`null`)); err != nil || s != nil {
		t.Fatalf("null: %v %v", s, err)
	}
}

func TestToolNames(t *testing.T) {
	for _, tc := range []struct{ server, tool, want string }{
		{"github", "create_issue", "mcp_github_create_issue"},
		{"github", "create-issue", "mcp_github_create_issue"},
		{"fs", "read.file", "mcp_fs_read_file"},
		{"fs", "lire fichier é", "mcp_fs_lire_fichier__"},
		{"fs", "Read", "mcp_fs_Read"},
		{"fs", "", ""},
		{"fs", "   ", ""},
		{"fs", strings.Repeat("x", 57), "mcp_fs_" + strings.Repeat("x", 57)}, // 64 characters
		{"fs", strings.Repeat("x", 58), ""},                                  // 65
	} {
		got, err := ToolName(tc.server, tc.tool)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s/%q: admitted as %s", tc.server, tc.tool, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s/%q: %q %v, want %q", tc.server, tc.tool, got, err, tc.want)
		}
	}
}

// The schema attack table: a server's schema must not make the validator read this
// machine's files or any URL, nor be other than an object.
func TestCompileSchemaRefuses(t *testing.T) {
	for _, tc := range []struct{ name, js string }{
		{"file ref", `{"$ref":"file:///etc/passwd"}`},
		{"http ref", `{"type":"object","properties":{"a":{"$ref":"https://evil.example/s.json"}}}`},
		{"relative ref", `{"type":"object","properties":{"a":{"$ref":"other.json"}}}`},
		{"ref in items", `{"type":"object","properties":{"a":{"type":"array","items":{"$ref":"/etc/passwd"}}}}`},
		{"ref in anyOf", `{"type":"object","anyOf":[{"$ref":"file:///x"}]}`},
		{"dynamic ref", `{"type":"object","$dynamicRef":"https://e/x"}`},
		{"ref not a string", `{"type":"object","$ref":{"a":1}}`},
		{"id moving the base", `{"$id":"file:///etc/","type":"object","properties":{"a":{"$ref":"#/x"}}}`},
		{"unknown meta-schema", `{"$schema":"https://evil.example/meta","type":"object"}`},
		{"not an object", `{"type":"string"}`},
		{"array", `[1,2]`},
		{"too large", `{"type":"object","description":"` + strings.Repeat("d", MaxSchemaBytes) + `"}`},
		{"invalid keyword value", `{"type":"object","properties":{"a":{"type":7}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v any
			if err := json.Unmarshal([]byte(tc.js), &v); err != nil {
				t.Fatal(err)
			}
			if _, err := compileSchema("mcp_x_y", v); err == nil {
				t.Fatalf("%s admitted", tc.js)
			}
		})
	}
}

func TestCompileSchemaAdmits(t *testing.T) {
	for _, js := range []string{
		`null`,
		`{"type":"object"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`,
		`{"type":"object","$defs":{"p":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/p"}}}`,
	} {
		var v any
		if err := json.Unmarshal([]byte(js), &v); err != nil {
			t.Fatal(err)
		}
		s, err := compileSchema("mcp_x_y", v)
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		if _, err := s.Validate(nil); js == `null` && err != nil {
			t.Fatalf("a tool without arguments refuses empty arguments: %v", err)
		}
	}
}

func FuzzParseServers(f *testing.F) {
	f.Add(`{"a":{"command":["x"]}}`)
	f.Add(`{"a":{"url":"https://u:p@h/x","headers":{"A":"b"}}}`)
	f.Add(`{"A-b":{"command":["x"]},"a_b":{"url":"http://h"}}`)
	f.Fuzz(func(t *testing.T, js string) {
		servers, err := ParseServers(json.RawMessage(js))
		if err != nil {
			var de *domain.Error
			if !errors.As(err, &de) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		seen := map[string]bool{}
		for _, s := range servers {
			if s.Name != Normalise(s.Name) || seen[s.Name] || (s.Transport != TransportStdio && s.Transport != TransportHTTP) {
				t.Fatalf("admitted %+v", s)
			}
			seen[s.Name] = true
		}
	})
}

func FuzzCompileSchema(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`)
	f.Add(`{"$ref":"file:///etc/passwd"}`)
	f.Fuzz(func(t *testing.T, js string) {
		var v any
		if json.Unmarshal([]byte(js), &v) != nil {
			return
		}
		if s, err := compileSchema("mcp_x_y", v); err == nil && localRefs(v, "") != nil {
			t.Fatalf("admitted %s with a reference outside it (%v)", js, s != nil)
		}
	})
}
