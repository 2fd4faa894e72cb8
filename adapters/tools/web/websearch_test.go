package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/web"
	"github.com/zuno-run/zuno/adapters/tools/web/search"
	"github.com/zuno-run/zuno/domain/tools"
)

// TestSearchTool: a batch of queries against a real SearxNG-speaking server; one failing
// query is reported in place with its diagnostic only; the details never carry a query.
func TestSearchTool(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("q") == "broken secret-words" {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"results": []map[string]string{{"title": "T " + r.URL.Query().Get("q"), "url": "https://r.example/"}}})
	}))
	t.Cleanup(srv.Close)
	p, err := search.NewSearxNG(srv.URL+"/search", "k-123")
	if err != nil {
		t.Fatal(err)
	}
	tool := web.NewSearch(p, allow, nil)
	r := call(t, tool, `{"queries": ["alpha", "broken secret-words"], "limit": 3}`)
	if r.Outcome != tools.OutcomeCompleted || !strings.Contains(r.Output, `"T alpha"`) || !strings.Contains(r.Output, "class status") {
		t.Fatalf("%s %s", r.Outcome, r.Output)
	}
	det := string(r.Metadata.Details)
	if strings.Contains(det, "secret-words") || strings.Contains(det, "alpha") || strings.Contains(det, "k-123") || !strings.Contains(det, `"status":502`) {
		t.Fatalf("details %s", det)
	}
	all := call(t, tool, `{"queries": ["broken secret-words"]}`)
	if all.Outcome != tools.OutcomeError || all.ErrorCode != search.CodeSearchFailed || strings.Contains(all.Output, "secret-words") {
		t.Fatalf("all failed: %s %s", all.ErrorCode, all.Output)
	}
	if r := call(t, web.NewSearch(p, denied, nil), `{"queries": ["alpha"]}`); r.ErrorCode != web.CodeNetworkDenied {
		t.Fatalf("network deny: %s", r.Output)
	}
	for _, bad := range []string{`{"queries": []}`, `{"queries": ["a","b","c","d","e","f"]}`, `{"queries": [" "]}`,
		fmt.Sprintf(`{"queries": [%q]}`, strings.Repeat("q", 501)), `{"queries": ["a"], "limit": 11}`} {
		if _, err := tool.Validate(json.RawMessage(bad)); err == nil {
			t.Errorf("%s validated", bad)
		}
	}
}

// TestScriptedSearchUnderDeny: the scripted provider touches no network, so the sandbox's
// network deny does not refuse it.
func TestScriptedSearchUnderDeny(t *testing.T) {
	file := filepath.Join(t.TempDir(), "hits.json")
	os.WriteFile(file, []byte(`{"zuno": [{"title": "Zuno", "url": "https://zuno.example/"}]}`), 0o644)
	p, err := search.OpenScripted(file)
	if err != nil {
		t.Fatal(err)
	}
	r := call(t, web.NewSearch(p, denied, nil), `{"queries": ["zuno"]}`)
	if r.Outcome != tools.OutcomeCompleted || !strings.Contains(r.Output, "https://zuno.example/") {
		t.Fatalf("%s", r.Output)
	}
}
