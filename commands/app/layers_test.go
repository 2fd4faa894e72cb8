package app_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/adapters/tools/shell"
	"github.com/zuno-run/zuno/commands/app"
	"github.com/zuno-run/zuno/domain"
	"github.com/zuno-run/zuno/domain/settings"
)

// layers is a configuration as the loader hands it over: each key's value per layer, in order.
type layers map[string][]settings.Raw

func (l layers) Raw(key string) []settings.Raw { return l[key] }

func raw(layer settings.Layer, js string) settings.Raw {
	return settings.Raw{Layer: layer, Source: string(layer) + ".json", JSON: json.RawMessage(js)}
}

// docs/config.md, "Merge": shell.env.exclude, sentence by sentence.
func TestMergeEnvExclude(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shell []settings.Raw
		want  []string
		code  string // "" when accepted
		says  string // in the error
	}{
		{name: "the lists of every trusted layer are united", shell: []settings.Raw{
			raw(settings.Global, `{"env":{"exclude":["AWS_*"]}}`), raw(settings.Explicit, `{"env":{"exclude":["OPENAI_API_KEY","AWS_*"]}}`)},
			want: []string{"AWS_*", "OPENAI_API_KEY"}},
		{name: "a later layer withholds more, never puts back what a lower one withholds", shell: []settings.Raw{
			raw(settings.Global, `{"env":{"exclude":["AWS_*"]}}`), raw(settings.Env, `{"env":{"exclude":[]}}`), raw(settings.Managed, `{"env":{"exclude":["GH_TOKEN"]}}`)},
			want: []string{"AWS_*", "GH_TOKEN"}},
		{name: "the project layer is not trusted to set it", shell: []settings.Raw{
			raw(settings.Project, `{"env":{"exclude":["HOME"]}}`)}},
		{name: "an agent contract is not trusted to set it", shell: []settings.Raw{
			raw(settings.Agent, `{"env":{"exclude":["HOME"]}}`)}},
		{name: "shell as a program name is not an exclude list", shell: []settings.Raw{
			raw(settings.Global, `"/bin/zsh"`), raw(settings.Explicit, `{"env":{"exclude":["A"]}}`)}, want: []string{"A"}},
		{name: "null leaves the lower layers' list", shell: []settings.Raw{
			raw(settings.Global, `{"env":{"exclude":["A"]}}`), raw(settings.Explicit, `null`)}, want: []string{"A"}},
		{name: "there is no negation", shell: []settings.Raw{raw(settings.Global, `{"env":{"exclude":["!ZUNO_DB"]}}`)},
			code: app.CodeBadConfig, says: "never puts a name back"},
		{name: "an empty name withholds nothing and is refused", shell: []settings.Raw{raw(settings.Global, `{"env":{"exclude":[" "]}}`)},
			code: app.CodeBadConfig, says: "global.json"},
		{name: "an invalid glob is refused", shell: []settings.Raw{raw(settings.Global, `{"env":{"exclude":["AWS_["]}}`)},
			code: app.CodeBadConfig, says: "not a valid glob"},
		{name: "exclude of another type names the shape to write", shell: []settings.Raw{raw(settings.Global, `{"env":{"exclude":"AWS_*"}}`)},
			code: app.CodeBadConfig, says: `{"env": {"exclude": ["NAME", "PATTERN_*"]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := app.MergeEnvExclude(layers{"shell": tc.shell}, shell.ValidateExclude)
			if code := domain.CodeOf(err); code != tc.code || (tc.says != "" && !strings.Contains(err.Error(), tc.says)) {
				t.Fatalf("error %v, want code %q saying %q", err, tc.code, tc.says)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("exclude %q, want %q", got, tc.want)
			}
		})
	}
}

// docs/config.md, "Merge": a tools entry for a tool the specification names but this build
// lacks loads and is a note; shell beyond env, mcp, lsp, formatter and productAgent load and are
// reported as not used yet.
func TestSettingsNotActedOnAreNotes(t *testing.T) {
	tools := map[string]bool{"council_run": false, "shell": false, "lsp": true}
	notes := app.DropUnbuiltTools(tools)
	if len(tools) != 1 || tools["shell"] || len(notes) != 2 || !strings.Contains(notes[0]+notes[1], "tools.council_run: false is ignored") {
		t.Fatalf("tools %v notes %q", tools, notes)
	}
	for _, tc := range []struct {
		name   string
		shell  string
		unused map[string]json.RawMessage
		want   []string
	}{
		{"shell setting only env is acted on", `{"env":{"exclude":["A"]}}`, nil, nil},
		{"shell with more than env is not used yet", `{"env":{},"program":"zsh"}`, nil,
			[]string{"shell is accepted but not used beyond env.exclude: this build does not run it yet"}},
		{"shell as a program name is not used yet", `"/bin/zsh"`, nil,
			[]string{"shell is accepted but not used beyond env.exclude: this build does not run it yet"}},
		{"nothing set, nothing said", ``, map[string]json.RawMessage{"mcp": nil, "lsp": json.RawMessage(`null`)}, nil},
		{"each host program set is a note", ``, map[string]json.RawMessage{"mcp": json.RawMessage(`{}`), "productAgent": json.RawMessage(`{"x":1}`)},
			[]string{"mcp is accepted but not used: this build does not run it yet", "productAgent is accepted but not used: this build does not run it yet"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sh json.RawMessage
			if tc.shell != "" {
				sh = json.RawMessage(tc.shell)
			}
			if got := app.UnusedNotes(sh, tc.unused); !slices.Equal(got, tc.want) {
				t.Fatalf("notes %q, want %q", got, tc.want)
			}
		})
	}
}

// docs/config.md: concurrency.* is 1..64 (0 the default), tool_output bounds are not negative.
func TestCheckLimits(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits app.Limits
		says   string // "" when accepted
	}{
		{"defaults", app.Limits{Concurrency: []app.Setting{{Key: "tool_calls"}}}, ""},
		{"one at a time", app.Limits{Concurrency: []app.Setting{{Key: "tool_calls", Value: 1}}}, ""},
		{"the most", app.Limits{Concurrency: []app.Setting{{Key: "delegations", Value: 64}}}, ""},
		{"one too many", app.Limits{Concurrency: []app.Setting{{Key: "delegations", Value: 65}}}, "concurrency.delegations is 65: use 1..64"},
		{"negative", app.Limits{Concurrency: []app.Setting{{Key: "lsp_requests", Value: -1}}}, "concurrency.lsp_requests is -1"},
		{"the first bad key is named", app.Limits{Concurrency: []app.Setting{{Key: "tool_calls", Value: 99}, {Key: "delegations", Value: 0}, {Key: "mcp_connections", Value: -3}}},
			"concurrency.tool_calls is 99"},
		{"negative output bytes", app.Limits{ToolOutputBytes: -1}, "tool_output.max_bytes and max_lines must be positive"},
		{"negative output lines", app.Limits{ToolOutputLines: -1}, "tool_output.max_bytes and max_lines must be positive"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := app.CheckLimits(tc.limits)
			if tc.says == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if domain.CodeOf(err) != app.CodeBadConfig || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v, want bad_config saying %q", err, tc.says)
			}
		})
	}
}

// The gates' layers are checked at load: a bad permission rule or sandbox value is refused
// before any command runs, and the sandbox layers come back merged.
func TestCheckGates(t *testing.T) {
	sb, err := app.CheckGates(layers{"sandbox": {raw(settings.Global, `{"mode":"read-only"}`)}})
	if err != nil || sb.Mode != "read-only" {
		t.Fatalf("sandbox %+v, %v", sb, err)
	}
	if _, err := app.CheckGates(layers{"permission": {raw(settings.Global, `{"rules":{"edit":"perhaps"}}`)}}); err == nil {
		t.Fatal("a permission action that does not exist was accepted")
	}
	if _, err := app.CheckGates(layers{"sandbox": {raw(settings.Global, `{"mode":"wide-open"}`)}}); err == nil {
		t.Fatal("a sandbox mode that does not exist was accepted")
	}
}
