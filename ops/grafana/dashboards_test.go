package grafana_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// The datasources the dashboards may name (provisioning/datasources/zuno.yaml).
const (
	promUID   = "zuno-prometheus"
	readerUID = "zuno-readmodels"
	promType  = "prometheus"
	pgType    = "grafana-postgresql-datasource"
)

type dashboard struct {
	file   string
	UID    string  `json:"uid"`
	Title  string  `json:"title"`
	Panels []panel `json:"panels"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type panel struct {
	ID          int        `json:"id"`
	Type        string     `json:"type"`
	Title       string     `json:"title"`
	Description string     `json:"description"`
	Datasource  datasource `json:"datasource"`
	GridPos     struct {
		X, Y, W, H int
	} `json:"gridPos"`
	Targets []target `json:"targets"`
}

type target struct {
	RefID      string     `json:"refId"`
	Datasource datasource `json:"datasource"`
	Expr       string     `json:"expr"`
	RawSQL     string     `json:"rawSql"`
	Format     string     `json:"format"`
}

// query is one target of one panel, named for failures.
type query struct {
	name string // dashboard uid / panel title / refId
	t    target
}

func loadDashboards(t *testing.T) []dashboard {
	t.Helper()
	files, err := filepath.Glob("dashboards/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards (%v)", err)
	}
	var out []dashboard
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d := dashboard{file: f}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, d)
	}
	return out
}

// queries returns every target of the dashboards on the datasource uid.
func queries(ds []dashboard, uid string) []query {
	var out []query
	for _, d := range ds {
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				if tg.Datasource.UID == uid {
					out = append(out, query{name: d.UID + " / " + p.Title + " / " + tg.RefID, t: tg})
				}
			}
		}
	}
	return out
}

// Every dashboard parses, has a unique uid, and every panel is placed on the grid, says what
// it answers, names one of the provisioned datasources and has queries for it whose macros
// are the ones Zuno allows; the dashboards cover the four subjects of docs/operations.md.
func TestDashboardsAreWellFormed(t *testing.T) {
	ds := loadDashboards(t)
	provisioned := provisionedDatasources(t)
	uids := map[string]bool{}
	for _, d := range ds {
		if d.UID == "" || d.Title == "" || uids[d.UID] || len(d.Panels) == 0 {
			t.Errorf("%s: uid %q (unique?), title %q, %d panels", d.file, d.UID, d.Title, len(d.Panels))
		}
		uids[d.UID] = true
		ids := map[int]bool{}
		for _, p := range d.Panels {
			where := d.UID + " / " + p.Title
			if p.ID == 0 || ids[p.ID] {
				t.Errorf("%s: panel id %d is zero or repeated", where, p.ID)
			}
			ids[p.ID] = true
			if p.Title == "" || len(p.Description) < 20 {
				t.Errorf("%s: a panel needs a title and a description of what it answers", where)
			}
			if g := p.GridPos; g.W <= 0 || g.H <= 0 || g.X < 0 || g.X+g.W > 24 {
				t.Errorf("%s: gridPos %+v is off Grafana's 24-column grid", where, g)
			}
			if want, ok := provisioned[p.Datasource.UID]; !ok || want != p.Datasource.Type {
				t.Errorf("%s: datasource %+v is not provisioned (provisioned: %v)", where, p.Datasource, provisioned)
			}
			if !panelTypes[p.Type] {
				t.Errorf("%s: panel type %q is none of Grafana's built-in panels the dashboards use", where, p.Type)
			}
			if len(p.Targets) == 0 {
				t.Errorf("%s: no queries", where)
			}
			for _, tg := range p.Targets {
				checkTarget(t, where, p, tg)
			}
		}
	}
	for _, want := range []string{"zuno-runtime", "zuno-sessions", "zuno-permissions", "zuno-audit"} {
		if !uids[want] {
			t.Errorf("no dashboard %s", want)
		}
	}
}

func checkTarget(t *testing.T, where string, p panel, tg target) {
	t.Helper()
	if tg.Datasource != p.Datasource {
		t.Errorf("%s / %s: the target's datasource %+v is not the panel's %+v", where, tg.RefID, tg.Datasource, p.Datasource)
	}
	now := time.Now()
	switch tg.Datasource.UID {
	case promUID:
		if tg.Expr == "" || tg.RawSQL != "" {
			t.Errorf("%s / %s: a Prometheus target has an expr and no SQL", where, tg.RefID)
		}
		if _, err := expandPromQL(tg.Expr); err != nil {
			t.Errorf("%s / %s: %v", where, tg.RefID, err)
		}
	case readerUID:
		if tg.RawSQL == "" || tg.Expr != "" || (tg.Format != "table" && tg.Format != "time_series") {
			t.Errorf("%s / %s: a read-model target has rawSql, no expr and format table or time_series", where, tg.RefID)
		}
		if _, err := expandSQL(tg.RawSQL, timeRange{now.Add(-time.Hour), now}); err != nil {
			t.Errorf("%s / %s: %v", where, tg.RefID, err)
		}
	}
}

// panelTypes are Grafana's built-in panels the dashboards use: no plugin to install.
var panelTypes = map[string]bool{"timeseries": true, "stat": true, "table": true, "piechart": true, "bargauge": true}

// provisionedDatasources reads provisioning/datasources/zuno.yaml: uid → type. The read
// models' datasource must log in as a role given by the environment (the reader), never a
// fixed owner.
func provisionedDatasources(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("provisioning/datasources/zuno.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		APIVersion  int `yaml:"apiVersion"`
		Datasources []struct {
			UID            string            `yaml:"uid"`
			Type           string            `yaml:"type"`
			URL            string            `yaml:"url"`
			User           string            `yaml:"user"`
			JSONData       map[string]any    `yaml:"jsonData"`
			SecureJSONData map[string]string `yaml:"secureJsonData"`
		} `yaml:"datasources"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Datasources {
		out[d.UID] = d.Type
		if d.Type == pgType && (d.User != "${ZUNO_READER_USER}" || d.SecureJSONData["password"] != "${ZUNO_READER_PASSWORD}") {
			t.Errorf("the read-model datasource logs in as %q: it must be the reader role, from ZUNO_READER_USER and ZUNO_READER_PASSWORD", d.User)
		}
	}
	if f.APIVersion != 1 || out[promUID] != promType || out[readerUID] != pgType {
		t.Fatalf("provisioned datasources %v (apiVersion %d): want %s (%s) and %s (%s)", out, f.APIVersion, promUID, promType, readerUID, pgType)
	}
	return out
}

// docs/operations.md says what every panel answers: a section per dashboard, each panel's
// title in bold where its answer is.
func TestOperationsDocNamesEveryPanel(t *testing.T) {
	b, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, d := range loadDashboards(t) {
		if !strings.Contains(doc, "\n### "+d.Title+"\n") {
			t.Errorf("docs/operations.md has no section for the dashboard %q", d.Title)
		}
		for _, p := range d.Panels {
			if !strings.Contains(doc, "**"+p.Title+"**") {
				t.Errorf("docs/operations.md does not say what %q / %q answers", d.Title, p.Title)
			}
		}
	}
}

// The macro expansion itself, as Grafana writes it.
func TestExpandSQLMacros(t *testing.T) {
	r := timeRange{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), time.Date(2026, 1, 2, 4, 4, 5, 500, time.UTC)}
	for _, c := range []struct{ in, want string }{
		{"WHERE $__timeFilter(time_created::timestamptz)", "WHERE time_created::timestamptz BETWEEN '2026-01-02T03:04:05Z' AND '2026-01-02T04:04:05.0000005Z'"},
		{"SELECT json_extract(d, '$.a'), $__timeGroupAlias(coalesce(a, b), '5m'), 1", `SELECT json_extract(d, '$.a'), floor(extract(epoch from coalesce(a, b))/300)*300 AS "time", 1`},
		{"x > $__timeFrom() AND x < $__timeTo()", "x > '2026-01-02T03:04:05Z' AND x < '2026-01-02T04:04:05.0000005Z'"},
	} {
		got, err := expandSQL(c.in, r)
		if err != nil || got != c.want {
			t.Errorf("expandSQL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"$__unixEpochFilter(x)", "WHERE s = '$session'", "$__timeFilter(x", "$__timeGroup(x, 'soon')", "$__timeFilter()", "x = ${v}", "x = [[v]]"} {
		if got, err := expandSQL(bad, r); err == nil {
			t.Errorf("expandSQL(%q) = %q, want an error", bad, got)
		}
	}
	if _, err := expandPromQL(`rate(x[$__interval_ms])`); err == nil {
		t.Error("an unknown PromQL variable was accepted")
	}
}

// metricNames are the series names a PromQL expression reads.
var metricNames = regexp.MustCompile(`\b(?:zuno|go|process)_[a-z0-9_]+\b|\bup\b`)
