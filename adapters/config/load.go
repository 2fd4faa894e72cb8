// Package config reads Zuno's configuration layers (docs/config.md): the global file, the
// project's files, the file --config names, ZUNO_* variables, command-line flags and the
// managed policy, each JSONC, merged in settings.Layers order with key order preserved. It
// refuses the project-layer values only a trusted layer may set (trust.go) and hands each
// layer's raw value of permission, tools and sandbox to the policies that read them.
package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/zuno-run/zuno/domain/settings"
)

// Options says where to look. The host fills it from the process (see cmd/zuno/config.go);
// tests point it anywhere.
type Options struct {
	// Cwd is the working directory: the project layer is found from it.
	Cwd string
	// GlobalDir holds zuno.json[c]; GlobalDir(os.Getenv) in production.
	GlobalDir string
	// Explicit is the file --config (or ZUNO_CONFIG) names; ExplicitFrom says which, for errors.
	Explicit, ExplicitFrom string
	// ExplicitOptional: a missing Explicit file is no layer rather than an error. ZUNO_CONFIG
	// keeps its old meaning this way (scripts point it at a file they create later), while a
	// --config the user just typed must name a file that exists (docs/config.md).
	ExplicitOptional bool
	// Getenv reads the ZUNO_* variables of the env layer (os.Getenv when nil).
	Getenv func(string) string
	// ManagedDir holds managed.json[c]; DefaultManagedDir in production.
	ManagedDir string
	// SkipProject leaves the project layer out: a read-only command whose project file does
	// not load warns and goes on without it (docs/config.md, "Errors").
	SkipProject bool

	cli []cliValue
}

type cliValue struct {
	key, flag string
	value     json.RawMessage
}

// AddCLI sets a CLI-layer value: key is a dotted path ("sandbox.backend"), value its JSON, and
// flag the flag that said it ("--sandbox-backend"), for errors and Raw's Source.
func (o *Options) AddCLI(flag, key string, value json.RawMessage) {
	o.cli = append(o.cli, cliValue{key: key, flag: flag, value: value})
}

// EnvKeys maps each ZUNO_* variable of the env layer to the key it sets. An empty variable
// is unset.
var EnvKeys = []struct{ Var, Key string }{
	{"ZUNO_DB", "db"},
	{"ZUNO_EVENTSTORE_URL", "eventstore_url"},
	{"ZUNO_READMODEL_URL", "readmodel_url"},
	{"ZUNO_READMODEL_READER_URL", "readmodel_reader_url"},
	{"ZUNO_BUS_URL", "bus_url"},
	{"ZUNO_MODEL", "model"},
	{"ZUNO_SANDBOX_BACKEND", "sandbox.backend"},
	{"ZUNO_SANDBOX_ON_UNAVAILABLE", "sandbox.onUnavailable"},
}

// Document is one layer's configuration as read.
type Document struct {
	Layer settings.Layer
	// Source is the file path, or the variables or flags the layer was built from.
	Source string
	// SHA256 is the hex digest of the file's bytes as read; empty for the env and CLI layers.
	SHA256 string
	Node   Node
	// text is the file's standardised JSON (offsets are the file's), for typed errors.
	text []byte
	// keySources names, in an env or CLI layer, the variables or flags behind each top-level key.
	keySources map[string][]string
}

// Set is the loaded configuration: every layer's document in layer order.
type Set struct {
	Docs  []Document
	Paths Paths
	// Warnings are for stderr, once: the legacy config.json.
	Warnings []string
}

// Load reads every layer, refuses project-layer values that only a trusted layer may set,
// and returns the layers. Nothing is merged or decoded yet: see Merged, Raw and Decode.
func Load(o Options) (*Set, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	paths, files, err := discover(&o)
	s := &Set{Paths: paths}
	if err != nil {
		return s, err
	}
	for _, f := range files {
		doc, err := readFile(f)
		if err != nil {
			return s, err
		}
		if f.legacy {
			s.Warnings = append(s.Warnings, fmt.Sprintf("reading %s for one more release: move it to %s (JSONC: comments allowed)",
				f.path, strings.TrimSuffix(f.path, "config.json")+"zuno.json"))
		}
		s.Docs = append(s.Docs, doc)
	}
	if s.Docs, err = appendValueLayers(s.Docs, o); err != nil {
		return s, err
	}
	s.Docs = orderLayers(s.Docs)
	return s, checkTrust(s.Docs, paths)
}

func readFile(f file) (Document, error) {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return Document{}, &Error{code: CodeBadConfig, Source: f.path, Message: err.Error(), Fix: "make the file readable or remove it"}
	}
	n, text, err := ParseJSONC(f.path, b)
	if err != nil {
		return Document{}, err
	}
	sum := sha256.Sum256(b)
	return Document{Layer: f.layer, Source: f.path, SHA256: hex.EncodeToString(sum[:]), Node: n, text: text}, nil
}

// appendValueLayers adds the env and CLI layers, when they set anything.
func appendValueLayers(docs []Document, o Options) ([]Document, error) {
	var env []cliValue
	for _, e := range EnvKeys {
		if v := o.Getenv(e.Var); v != "" {
			q, _ := json.Marshal(v)
			env = append(env, cliValue{key: e.Key, flag: e.Var, value: q})
		}
	}
	for _, vals := range []struct {
		layer settings.Layer
		vals  []cliValue
	}{{settings.Env, env}, {settings.CLI, o.cli}} {
		if len(vals.vals) == 0 {
			continue
		}
		doc, err := valueDocument(vals.layer, vals.vals)
		if err != nil {
			return docs, err
		}
		docs = append(docs, doc)
	}
	return docs, nil
}

// valueDocument builds one layer from dotted keys and their JSON values, in the order given.
func valueDocument(layer settings.Layer, vals []cliValue) (Document, error) {
	root := Node{object: true, Offset: -1}
	var sources []string
	byKey := map[string][]string{}
	for _, v := range vals {
		val, err := parseValue(v.value, 0)
		if err != nil {
			return Document{}, &Error{code: CodeBadConfig, Source: v.flag, Message: fmt.Sprintf("%s: the value is not JSON: %s", v.key, string(v.value))}
		}
		val.Offset = -1
		for _, part := range reverse(strings.Split(v.key, ".")) {
			val = Node{object: true, Offset: -1, Members: []Member{{Key: part, Value: val, Offset: -1}}}
		}
		root = Merge(root, val)
		sources = append(sources, v.flag)
		top, _, _ := strings.Cut(v.key, ".")
		byKey[top] = append(byKey[top], v.flag)
	}
	return Document{Layer: layer, Source: strings.Join(sources, ", "), Node: root, keySources: byKey}, nil
}

func reverse(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// orderLayers sorts documents into settings.Layers order, keeping the order within a layer.
func orderLayers(docs []Document) []Document {
	out := make([]Document, 0, len(docs))
	for _, l := range settings.Layers {
		for _, d := range docs {
			if d.Layer == l {
				out = append(out, d)
			}
		}
	}
	return out
}

// Merged is every layer laid over the one before it (Merge).
func (s *Set) Merged() Node {
	out := Node{object: true, Offset: -1, Members: []Member{}}
	for _, d := range s.Docs {
		out = Merge(out, d.Node)
	}
	return out
}

// Raw is each layer's value of a top-level key, in layer order: the permission evaluator and
// the sandbox resolver read permission, tools and sandbox this way, because which layer said
// what is part of their semantics.
func (s *Set) Raw(key string) []settings.Raw {
	var out []settings.Raw
	for _, d := range s.Docs {
		if v, ok := d.Node.Get(key); ok {
			b, _ := v.MarshalJSON()
			source := d.Source
			if s, ok := d.keySources[key]; ok {
				source = strings.Join(s, ", ")
			}
			out = append(out, settings.Raw{Layer: d.Layer, Source: source, JSON: b})
		}
	}
	return out
}
