package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zuno-run/zuno/domain/settings"
)

// world is a home, a repository and a managed directory on disk, with nothing in them.
type world struct {
	t                          *testing.T
	global, repo, cwd, managed string
	env                        map[string]string
}

func newWorld(t *testing.T) *world {
	dir := t.TempDir()
	w := &world{t: t, global: filepath.Join(dir, "home", "zuno"), repo: filepath.Join(dir, "repo"),
		managed: filepath.Join(dir, "etc"), env: map[string]string{}}
	w.cwd = filepath.Join(w.repo, "src", "pkg")
	for _, d := range []string{w.global, filepath.Join(w.repo, ".git"), filepath.Join(w.repo, ".zuno"), w.cwd, w.managed} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func (w *world) write(path, content string) string {
	w.t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return path
}

func (w *world) options() Options {
	return Options{Cwd: w.cwd, GlobalDir: w.global, ManagedDir: w.managed, Getenv: func(k string) string { return w.env[k] }}
}

func (w *world) load(o Options) (*Set, error) { return Load(o) }

// Every layer in its place, applied in settings.Layers order; Raw keeps that order.
func TestLayerOrder(t *testing.T) {
	w := newWorld(t)
	w.write(filepath.Join(w.global, "zuno.jsonc"), `{"model": "global", "order": ["global"], // comment
	  "sandbox": {"mode": "read-only"},}`)
	w.write(filepath.Join(w.repo, "zuno.json"), `{"note": "project-root", "sandbox": {"network": "deny"}}`)
	w.write(filepath.Join(w.repo, ".zuno", "zuno.json"), `{"note": "project-dot-zuno", "sandbox": {"writableRoots": []}}`)
	explicit := w.write(filepath.Join(t.TempDir(), "x.json"), `{"model": "explicit"}`)
	w.write(filepath.Join(w.managed, "managed.json"), `{"sandbox": {"onUnavailable": "deny"}}`)
	w.env["ZUNO_MODEL"] = "env"
	w.env["ZUNO_SANDBOX_BACKEND"] = "auto"
	o := w.options()
	o.Explicit, o.ExplicitFrom = explicit, "--config"
	o.AddCLI("--sandbox", "sandbox.mode", json.RawMessage(`"workspace-write"`))
	set, err := w.load(o)
	if err != nil {
		t.Fatal(err)
	}
	var layers []settings.Layer
	for _, d := range set.Docs {
		layers = append(layers, d.Layer)
	}
	want := []settings.Layer{settings.Global, settings.Project, settings.Project, settings.Explicit, settings.Env, settings.CLI, settings.Managed}
	if !equalLayers(layers, want) {
		t.Fatalf("layers %v, want %v", layers, want)
	}
	merged := compact(t, set.Merged())
	if want := `{"model":"env","order":["global"],"sandbox":{"mode":"workspace-write","network":"deny","writableRoots":[],"backend":"auto","onUnavailable":"deny"},"note":"project-dot-zuno"}`; merged != want {
		t.Fatalf("merged\n%s\nwant\n%s", merged, want)
	}
	raw := set.Raw("sandbox")
	var got []string
	for _, r := range raw {
		got = append(got, string(r.Layer)+"="+string(r.JSON))
	}
	wantRaw := []string{`global={"mode":"read-only"}`, `project={"network":"deny"}`, `project={"writableRoots":[]}`,
		`env={"backend":"auto"}`, `cli={"mode":"workspace-write"}`, `managed={"onUnavailable":"deny"}`}
	if strings.Join(got, " ") != strings.Join(wantRaw, " ") {
		t.Fatalf("Raw(sandbox)\n%v\nwant\n%v", got, wantRaw)
	}
	if raw[1].Source != filepath.Join(w.repo, "zuno.json") || raw[3].Source != "ZUNO_SANDBOX_BACKEND" || raw[4].Source != "--sandbox" {
		t.Fatalf("sources %+v", raw)
	}
}

func equalLayers(a, b []settings.Layer) bool {
	return strings.Join(layerStrings(a), ",") == strings.Join(layerStrings(b), ",")
}

func layerStrings(l []settings.Layer) []string {
	out := make([]string, len(l))
	for i, x := range l {
		out[i] = string(x)
	}
	return out
}

func codeOf(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want *Error, got %v", err)
	}
	return e
}

func TestDiscovery(t *testing.T) {
	t.Run("zuno.json and zuno.jsonc in one place are refused, naming both", func(t *testing.T) {
		w := newWorld(t)
		a := w.write(filepath.Join(w.repo, ".zuno", "zuno.json"), `{}`)
		b := w.write(filepath.Join(w.repo, ".zuno", "zuno.jsonc"), `{}`)
		_, err := w.load(w.options())
		if e := codeOf(t, err); e.Code() != CodeAmbiguous || !strings.Contains(err.Error(), a) || !strings.Contains(err.Error(), b) {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a --config file that does not exist is an error that says so", func(t *testing.T) {
		w := newWorld(t)
		o := w.options()
		o.Explicit, o.ExplicitFrom = filepath.Join(w.repo, "nope.json"), "--config"
		_, err := w.load(o)
		if e := codeOf(t, err); e.Code() != CodeNotFound || !strings.Contains(err.Error(), "nope.json does not exist") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("ZUNO_CONFIG naming no file is no layer", func(t *testing.T) {
		w := newWorld(t)
		o := w.options()
		o.Explicit, o.ExplicitFrom, o.ExplicitOptional = filepath.Join(w.repo, "nope.json"), "ZUNO_CONFIG", true
		if set, err := w.load(o); err != nil || len(set.Docs) != 0 {
			t.Fatalf("got %v %+v", err, set)
		}
	})
	t.Run("outside a repository there is no project layer", func(t *testing.T) {
		w := newWorld(t)
		w.write(filepath.Join(w.repo, "zuno.json"), `{"shell": "sh"}`)
		os.RemoveAll(filepath.Join(w.repo, ".git"))
		set, err := w.load(w.options())
		if err != nil || len(set.Docs) != 0 || set.Paths.ProjectRoot != "" {
			t.Fatalf("got %v %+v", err, set)
		}
	})
	t.Run("the legacy config.json is read when it is the only global file, with one warning", func(t *testing.T) {
		w := newWorld(t)
		w.write(filepath.Join(w.global, "config.json"), `{"model": "legacy"}`)
		set, err := w.load(w.options())
		if err != nil || len(set.Docs) != 1 || len(set.Warnings) != 1 || !strings.Contains(set.Warnings[0], filepath.Join(w.global, "zuno.json")) {
			t.Fatalf("got %v %+v", err, set)
		}
	})
	t.Run("the legacy config.json is not read beside zuno.json", func(t *testing.T) {
		w := newWorld(t)
		w.write(filepath.Join(w.global, "config.json"), `{"model": "legacy"}`)
		w.write(filepath.Join(w.global, "zuno.json"), `{"model": "new"}`)
		set, err := w.load(w.options())
		if err != nil || len(set.Docs) != 1 || set.Docs[0].Source != filepath.Join(w.global, "zuno.json") || len(set.Warnings) != 0 {
			t.Fatalf("got %v %+v", err, set)
		}
	})
	t.Run("a CLI value that is not JSON names its flag", func(t *testing.T) {
		w := newWorld(t)
		o := w.options()
		o.AddCLI("--sandbox", "sandbox.mode", json.RawMessage(`read-only`))
		_, err := w.load(o)
		if e := codeOf(t, err); e.Source != "--sandbox" {
			t.Fatalf("got %v", err)
		}
	})
}

type testConfig struct {
	Model  string `json:"model"`
	Agents map[string]struct {
		Steps int `json:"steps"`
	} `json:"agents"`
	Sandbox json.RawMessage `json:"sandbox"`
}

// Decode is strict, and says which file, where, and what the valid keys are.
func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line, col int
		want      string
	}{
		{"an unknown top-level key", "{\n  \"model\": \"x\",\n  \"modle\": \"y\"\n}", 3, 3, `json: unknown field "modle" at line 3, column 3 (keys: model, agents, sandbox)`},
		{"an unknown nested key", "{\"agents\": {\"build\": {\n\"stepz\": 3}}}", 2, 1, `json: unknown field "stepz" in agents.build at line 2, column 1 (keys: steps)`},
		{"a key differing only in case (encoding/json would take it)", `{"Model": "x"}`, 1, 2, `json: unknown field "Model"`},
		{"a value of the wrong type", "{\"agents\": {\"build\": {\"steps\": \"many\"}}}", 1, 38, `agents.build.steps: is string, want int`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			path := w.write(filepath.Join(w.global, "zuno.json"), tc.src)
			set, err := w.load(w.options())
			if err != nil {
				t.Fatal(err)
			}
			err = set.Decode(&testConfig{})
			e := codeOf(t, err)
			if e.Source != path || e.Line != tc.line || e.Column != tc.col || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v at %d:%d, want %q at %d:%d", err, e.Line, e.Column, tc.want, tc.line, tc.col)
			}
		})
	}
	t.Run("the merged document decodes; raw sections are kept as written", func(t *testing.T) {
		w := newWorld(t)
		w.write(filepath.Join(w.global, "zuno.json"), `{"model": "a", "sandbox": {"mode": "read-only", "Whatever": 1}}`)
		w.env["ZUNO_MODEL"] = "b"
		set, _ := w.load(w.options())
		var c testConfig
		if err := set.Decode(&c); err != nil || c.Model != "b" || string(c.Sandbox) != `{"mode":"read-only","Whatever":1}` {
			t.Fatalf("got %v %+v", err, c)
		}
	})
}
