package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Decode decodes the merged configuration into v, a pointer to a struct whose json tags are
// the accepted keys. It is strict: each layer is checked first, so an unknown key or a value
// of the wrong type is reported against the file (line and column) or variable that wrote
// it. Keys match their tags exactly, not ignoring case as encoding/json would; a field of
// type json.RawMessage is accepted as written and left to the policy that reads it (Raw).
func (s *Set) Decode(v any) error {
	t := reflect.TypeOf(v).Elem()
	for _, d := range s.Docs {
		if err := checkKeys(d.Node, t, ""); err != nil {
			err.Source = d.Source
			err.Line, err.Column = position(d.text, err.off)
			return err
		}
		text := d.text
		if text == nil {
			text, _ = d.Node.MarshalJSON()
		}
		if err := json.Unmarshal(text, reflect.New(t).Interface()); err != nil {
			return typeError(d, err)
		}
	}
	merged, _ := s.Merged().MarshalJSON()
	return json.Unmarshal(merged, v)
}

// checkKeys refuses a key that names no field, naming the key, where it is and the valid keys.
func checkKeys(n Node, t reflect.Type, path string) *Error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if !n.object || t == reflect.TypeOf(json.RawMessage(nil)) {
		return nil
	}
	switch t.Kind() {
	case reflect.Map:
		for _, m := range n.Members {
			if err := checkKeys(m.Value, t.Elem(), path+m.Key+"."); err != nil {
				return err
			}
		}
	case reflect.Struct:
		fields, names := jsonFields(t)
		for _, m := range n.Members {
			f, ok := fields[m.Key]
			if !ok {
				msg := fmt.Sprintf("json: unknown field %q", m.Key)
				if path != "" {
					msg += " in " + strings.TrimSuffix(path, ".")
				}
				return &Error{code: CodeBadConfig, off: m.Offset, Key: path + m.Key, Message: msg, Valid: names,
					Fix: "remove it or spell one of the keys"}
			}
			if err := checkKeys(m.Value, f, path+m.Key+"."); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields maps a struct's json keys to their field types, and lists them in the order
// the struct declares them (the order its documentation reads in).
func jsonFields(t reflect.Type) (map[string]reflect.Type, []string) {
	out := map[string]reflect.Type{}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
		names = append(names, name)
	}
	return out, names
}

// typeError names the key and place of a value of the wrong type.
func typeError(d Document, err error) *Error {
	e := &Error{code: CodeBadConfig, Source: d.Source, Message: err.Error()}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		e.Key = te.Field
		if d.text != nil {
			// encoding/json leaves map keys out of Field (agents.steps); the key written last
			// before the offset is the one whose value failed, with its whole path.
			if p := pathAt(d.Node, te.Offset, ""); p != "" {
				e.Key = p
			}
			e.Line, e.Column = position(d.text, te.Offset) // just past the value
		}
		e.Message = fmt.Sprintf("%s: is %s, want %s", e.Key, te.Value, te.Type)
	}
	return e
}

// pathAt is the dotted path of the last key written before offset off.
func pathAt(n Node, off int64, prefix string) string {
	last := ""
	for _, m := range n.Members {
		if m.Offset >= off {
			break
		}
		last = prefix + m.Key
		if deeper := pathAt(m.Value, off, last+"."); deeper != "" {
			last = deeper
		}
	}
	return last
}
