package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Strictable is a Format that can read strictly: every field of the
// record type in every record, and nothing else.
type Strictable[T any] interface {
	Strict() Format[T]
}

// jsonField is a field of a record type as encoding/json reads it.
type jsonField struct {
	name string // the key: the json tag's name, or the field's name
	typ  reflect.Type
}

// jsonFields lists the keys of struct type t that encoding/json decodes,
// those of embedded structs included; nil for a type that is not a
// struct.
func jsonFields(t reflect.Type) []jsonField {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, jsonFields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name: name, typ: ft})
	}
	return out
}

// fieldError finds, after json.Unmarshal of line failed with err, the
// field whose value caused it, so that the message names it: errors of a
// field's own UnmarshalJSON (time.Time's, say) name none. It costs a
// decode per field, on the error path only.
func fieldError(line []byte, fields []jsonField, err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	if errors.As(err, &typeErr) && typeErr.Field != "" || errors.As(err, &syntaxErr) {
		return err // it says where already
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(line, &obj) != nil {
		return err // not an object: the error says what is wrong
	}
	for key, raw := range obj {
		f := findField(fields, key)
		if f == nil {
			continue
		}
		if ferr := json.Unmarshal(raw, reflect.New(f.typ).Interface()); ferr != nil {
			return fmt.Errorf("field %q: %s", key, strings.TrimPrefix(ferr.Error(), "json: "))
		}
	}
	return err
}

// findField matches a key to a field as encoding/json does: exactly, else
// without regard to case.
func findField(fields []jsonField, key string) *jsonField {
	for i := range fields {
		if fields[i].name == key {
			return &fields[i]
		}
	}
	for i := range fields {
		if strings.EqualFold(fields[i].name, key) {
			return &fields[i]
		}
	}
	return nil
}

// checkStrict refuses a line that is not a JSON object holding exactly the
// record type's fields.
func checkStrict(line []byte, fields []jsonField) error {
	if t := bytes.TrimSpace(line); len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("a record is a JSON object, got %.40s", t)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return err
	}
	var unknown, missing []string
	for key := range obj {
		if findField(fields, key) == nil {
			unknown = append(unknown, fmt.Sprintf("%q", key))
		}
	}
	for _, f := range fields {
		found := false
		for key := range obj {
			if key == f.name || strings.EqualFold(key, f.name) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, fmt.Sprintf("%q", f.name))
		}
	}
	slices.Sort(unknown)
	switch {
	case len(unknown) > 0 && len(missing) > 0:
		return fmt.Errorf("unknown field %s and missing field %s (strict)", strings.Join(unknown, ", "), strings.Join(missing, ", "))
	case len(unknown) > 0:
		return fmt.Errorf("unknown field %s (strict)", strings.Join(unknown, ", "))
	case len(missing) > 0:
		return fmt.Errorf("missing field %s (strict)", strings.Join(missing, ", "))
	}
	return nil
}
