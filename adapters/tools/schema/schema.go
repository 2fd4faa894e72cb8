// Package schema is the one language in which a tool declares its arguments: a JSON Schema
// (the draft 2020-12 subset providers accept: type, properties, required,
// additionalProperties:false, enum, minimum/maximum, minLength, items, description), beside
// a small table of Rules for what JSON Schema cannot say. The bytes the model is shown and
// the validator are one object: Compile compiles the schema from the very bytes Raw returns.
//
// The validator is github.com/santhosh-tekuri/jsonschema/v6. It implements draft 2020-12
// whole (the MCP tools of later issues bring arbitrary JSON Schema, which must not become a
// fourth language), and its ValidationError carries a structured error kind and the instance
// location of every failure, which map onto Zuno's typed, model-readable errors (field path,
// what was expected, what to send) without parsing English messages. Integer properties
// are the exception: integers.go checks them with the validator's meaning at a fraction of
// its cost.
//
// What JSON Schema cannot say stays here, in Rules (docs/tools.md, "Argument schemas"):
// repeated keys and invalid UTF-8 or unpaired surrogate escapes (a decoded instance no longer
// shows them), NUL bytes, UTF-8 byte bounds, integers that must be written as integers to
// decode into a Go int, per-field error codes, and one property choosing which others apply
// (bg's action).
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/zuno-run/zuno/domain"
)

// Schema is one tool's argument schema: the bytes the model is shown, compiled.
type Schema struct {
	name string
	raw  json.RawMessage
	// validator is the compiled schema: compiled by Compile, or at first use for
	// MustCompile's package variables.
	validator func() *jsonschema.Schema
	root      *node
	rules     Rules
	names     map[string]string // every property name, for the reader to reuse
}

// Args is a validated argument object as JSON values: strings, json.Number, bool, []any and
// map[string]any. A member sent as null is absent when Rules.NullIsAbsent.
type Args map[string]any

// Compile compiles raw, a JSON Schema of an argument object, with its rules. name is the
// tool's, for messages. raw is kept as given: Raw returns these bytes, byte for byte.
func Compile(name string, raw []byte, rules Rules) (*Schema, error) {
	doc, root, err := parse(name, raw)
	if err != nil {
		return nil, err
	}
	sch, err := compileValidator(name, doc)
	if err != nil {
		return nil, err
	}
	s, err := newSchema(name, raw, rules, root)
	if err != nil {
		return nil, err
	}
	s.validator = func() *jsonschema.Schema { return sch }
	return s, nil
}

// MustCompile is Compile for a tool's own declaration, a package variable: a schema that does
// not compile is a programming error. The validator is compiled at its first use, not at
// package init: every zuno process links every tool, and compiling them all at its start
// cost each command (`zuno --help`, `zuno db`, …) about 15 ms (docs/tools.md, "Argument
// schemas"). CompileDeferred compiles them all at once: long-running processes call it at
// start, and the catalogue's tests check that it returns no error.
func MustCompile(name string, raw []byte, rules Rules) *Schema {
	doc, root, err := parse(name, raw)
	if err != nil {
		panic(err)
	}
	s, err := newSchema(name, raw, rules, root)
	if err != nil {
		panic(err)
	}
	s.validator = sync.OnceValue(func() *jsonschema.Schema {
		sch, err := compileValidator(name, doc)
		if err != nil {
			panic(err)
		}
		return sch
	})
	deferred.Lock()
	deferred.list = append(deferred.list, s)
	deferred.Unlock()
	return s
}

// deferred is every MustCompile'd schema, for CompileDeferred.
var deferred struct {
	sync.Mutex
	list []*Schema
}

// CompileDeferred compiles the validator of every schema MustCompile made and not yet used,
// and returns the first that does not compile.
func CompileDeferred() (err error) {
	deferred.Lock()
	list := deferred.list
	deferred.Unlock()
	for _, s := range list {
		func() {
			defer func() {
				if r := recover(); r != nil && err == nil {
					err = fmt.Errorf("%v", r)
				}
			}()
			s.validator()
		}()
	}
	return err
}

// parse reads raw as the validator's document and as Zuno's own node tree. A schema the node
// reading refuses is compiled as written first: the validator's compile error, where it has
// one, names the keyword at fault.
func parse(name string, raw []byte) (doc any, root *node, err error) {
	doc, err = jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	root, nodeErr := readNode(raw)
	if nodeErr == nil {
		relaxIntegers(root, doc)
		return doc, root, nil
	}
	if _, err := compileValidator(name, doc); err != nil {
		return nil, nil, err
	}
	return nil, nil, fmt.Errorf("schema of %s: %w", name, nodeErr)
}

// compileValidator compiles the document as draft 2020-12.
func compileValidator(name string, doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "zuno:tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	return sch, nil
}

// newSchema checks the node tree and the rules and makes the Schema, its validator unset.
func newSchema(name string, raw []byte, rules Rules, root *node) (*Schema, error) {
	if root.typ != "object" {
		return nil, fmt.Errorf("schema of %s: arguments must be an object, not %q", name, root.typ)
	}
	s := &Schema{name: name, raw: json.RawMessage(bytes.Clone(raw)), root: root, rules: rules}
	if err := s.checkRules(); err != nil {
		return nil, fmt.Errorf("schema of %s: %w", name, err)
	}
	root.attach(rules.Fields)
	s.names = map[string]string{}
	root.collectNames(s.names)
	return s, nil
}

// Raw is the schema the model is shown: the bytes Compile was given.
func (s *Schema) Raw() json.RawMessage { return s.raw }

// Validate checks args and returns them decoded. A refusal is a *domain.Error naming the
// field (a path such as "steps[0].title", or "arguments" for the object as a whole), what
// was wrong and what to send.
func (s *Schema) Validate(args json.RawMessage) (Args, error) {
	data := bytes.TrimSpace(args)
	if len(data) == 0 {
		if !s.rules.EmptyIsObject {
			return nil, s.whole("arguments are empty")
		}
		data = []byte("{}")
	}
	v, err := s.read(data)
	if err != nil {
		return nil, err
	}
	if err := s.validator().Validate(v); err != nil {
		return nil, s.refusal(data, err)
	}
	if !integersHold(s.root, v) {
		return nil, s.refusal(data, nil)
	}
	obj := v.(map[string]any)
	if err := s.checkExtra(obj); err != nil {
		return nil, err
	}
	if err := s.checkChoice(obj); err != nil {
		return nil, err
	}
	return Args(obj), nil
}

// Decode validates args and stores them into dst, a pointer to a struct whose json tags are
// the property names, as encoding/json would, from the values already validated.
func (s *Schema) Decode(args json.RawMessage, dst any) error {
	v, err := s.Validate(args)
	if err != nil {
		return err
	}
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		panic(fmt.Sprintf("schema.Decode into %T, not a non-nil pointer", dst))
	}
	err = assign(rv.Elem(), map[string]any(v))
	if errors.Is(err, errFallback) {
		err = json.Unmarshal(decodable(args), dst)
	}
	if err != nil {
		// The checks above admit only what dst holds; this keeps a schema/struct mismatch
		// from passing unnoticed.
		return s.whole("arguments do not decode: " + err.Error())
	}
	return nil
}

// decodable is args as encoding/json reads them: nothing or null is the empty object.
func decodable(args json.RawMessage) []byte {
	data := bytes.TrimSpace(args)
	if len(data) == 0 || string(data) == "null" {
		return []byte("{}")
	}
	return data
}

// Fix says what to send for the property at path ("command", "steps[0].title").
func (s *Schema) Fix(path string) string {
	at := s.root.at(strings.Split(path, "."))
	if at == nil {
		return "send one JSON object such as " + s.rules.Example
	}
	return s.fix(at)
}

// Compact is a schema written for people (indented, one property a line) as the compact
// bytes the model is shown and Compile compiles.
func Compact(text string) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil {
		panic(fmt.Sprintf("schema text: %v", err))
	}
	return b.Bytes()
}

// whole refuses the argument object as a whole.
func (s *Schema) whole(msg string) *domain.Error {
	return domain.Invalid("arguments", msg, "send one JSON object such as "+s.rules.Example)
}
