package httpapi_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/faces/httpapi"
)

// The OpenAPI document served at /openapi.json and the routes the server registers are the
// same set: every route documented, every documented operation served, every path parameter
// declared.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	f := newFixture(t, options{})
	r := f.do("GET", "/openapi.json", "")
	var doc struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			OperationID string `json:"operationId"`
			Parameters  []struct{ Name, In string }
			Responses   map[string]any
		} `json:"paths"`
	}
	r.decode(t, &doc)
	if r.status != 200 || doc.OpenAPI != "3.1.0" {
		t.Fatalf("%d openapi %q", r.status, doc.OpenAPI)
	}
	served := map[string]bool{}
	for _, rt := range httpapi.New(f.app, httpapi.Config{}).Routes() {
		key := strings.ToLower(rt[0]) + " " + rt[1]
		served[key] = true
		op, ok := doc.Paths[rt[1]][strings.ToLower(rt[0])]
		if !ok {
			t.Errorf("%s is served but not documented", key)
			continue
		}
		for _, name := range pathParams(rt[1]) {
			if !slices.ContainsFunc(op.Parameters, func(p struct{ Name, In string }) bool { return p.Name == name && p.In == "path" }) {
				t.Errorf("%s: path parameter %s is not declared", key, name)
			}
		}
		if op.OperationID == "" || len(op.Responses) == 0 {
			t.Errorf("%s: no operationId or responses", key)
		}
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			if !served[method+" "+path] {
				t.Errorf("%s %s is documented but not served", method, path)
			}
		}
	}
}

var paramRE = regexp.MustCompile(`\{([^}]+)\}`)

func pathParams(pattern string) []string {
	var out []string
	for _, m := range paramRE.FindAllStringSubmatch(pattern, -1) {
		out = append(out, m[1])
	}
	return out
}

// The document is valid JSON with every $ref resolving inside it.
func TestOpenAPIRefsResolve(t *testing.T) {
	f := newFixture(t, options{})
	r := f.do("GET", "/openapi.json", "")
	var doc map[string]any
	r.decode(t, &doc)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, m := range regexp.MustCompile(`"\$ref":"#/components/schemas/([A-Za-z]+)"`).FindAllStringSubmatch(compact(t, r.body), -1) {
		if _, ok := schemas[m[1]]; !ok {
			t.Errorf("$ref %s does not resolve", m[1])
		}
	}
}

func compact(t *testing.T, b []byte) string {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
