package schema

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// errFallback says a destination type decodes itself (json.Unmarshaler, TextUnmarshaler) or
// is of a kind assign does not fill; Decode then hands the bytes to encoding/json.
var errFallback = errors.New("decode with encoding/json")

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// assign stores a validated value into dst as encoding/json would store the same JSON, from
// the values the validator already checked, so a call's arguments are read once. A member
// the struct has no field for is an error (a schema/struct mismatch must not pass silently).
func assign(dst reflect.Value, v any) error {
	t := dst.Type()
	if reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return errFallback
	}
	if v == nil {
		dst.SetZero()
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		if dst.IsNil() {
			dst.Set(reflect.New(t.Elem()))
		}
		return assign(dst.Elem(), v)
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return mismatch(t, v)
		}
		return assignStruct(dst, obj)
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return mismatch(t, v)
		}
		out := reflect.MakeSlice(t, len(arr), len(arr))
		for i, item := range arr {
			if err := assign(out.Index(i), item); err != nil {
				return err
			}
		}
		dst.Set(out)
		return nil
	}
	return assignScalar(dst, v)
}

func assignScalar(dst reflect.Value, v any) error {
	t := dst.Type()
	switch t.Kind() {
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			return mismatch(t, v)
		}
		dst.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return mismatch(t, v)
		}
		dst.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(numberText(v), 10, 64)
		if err != nil || dst.OverflowInt(n) {
			return mismatch(t, v)
		}
		dst.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		text := numberText(v)
		if text == "-0" { // minus zero is zero, which JSON Schema's minimum 0 admits
			text = "0"
		}
		n, err := strconv.ParseUint(text, 10, 64)
		if err != nil || dst.OverflowUint(n) {
			return mismatch(t, v)
		}
		dst.SetUint(n)
	default:
		return errFallback
	}
	return nil
}

func numberText(v any) string {
	n, _ := v.(json.Number)
	return string(n)
}

func assignStruct(dst reflect.Value, obj map[string]any) error {
	fields := structFields(dst.Type())
	for name, v := range obj {
		i, ok := fields[name]
		if !ok {
			return fmt.Errorf("%s has no field for %q", dst.Type(), name)
		}
		if err := assign(dst.Field(i), v); err != nil {
			return err
		}
	}
	return nil
}

var fieldCache sync.Map // reflect.Type -> map[string]int

// structFields maps a struct's JSON names (its json tags, else its Go names) to field indexes.
func structFields(t reflect.Type) map[string]int {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]int)
	}
	m := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		m[name] = i
	}
	fieldCache.Store(t, m)
	return m
}

func mismatch(t reflect.Type, v any) error {
	return fmt.Errorf("%s cannot hold %s", t, describe(v))
}
