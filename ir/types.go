package ir

import (
	"fmt"
	"strings"
)

// TypeKind is the shape of a Type.
type TypeKind string

// The type kinds.
const (
	BasicType   TypeKind = "basic"   // bool, the integers, the floats, string
	NamedType   TypeKind = "named"   // a defined type; Underlying holds its structure
	PointerType TypeKind = "pointer" // *Elem
	SliceType   TypeKind = "slice"   // []Elem
	ArrayType   TypeKind = "array"   // [Len]Elem
	MapType     TypeKind = "map"     // map[Key]Elem
	StructType  TypeKind = "struct"  // struct{Fields}
	// Opaque is a type the serializers cannot handle (func, chan,
	// interface). It may travel on edges but not be stored in state.
	OpaqueType TypeKind = "opaque"
)

// Type is a Go type described as plain data.
type Type struct {
	Kind TypeKind `json:"kind"`
	// Name is the basic type's name, or the defined type's name.
	Name string `json:"name,omitempty"`
	// PkgPath is the defined type's package.
	PkgPath string `json:"pkgPath,omitempty"`
	// PkgName is the defined type's package name, for messages.
	PkgName    string  `json:"pkgName,omitempty"`
	Elem       *Type   `json:"elem,omitempty"`
	Key        *Type   `json:"key,omitempty"`
	Len        int64   `json:"len,omitempty"`
	Fields     []Field `json:"fields,omitempty"`
	Underlying *Type   `json:"underlying,omitempty"`
	// TypeArgs instantiate a generic defined type (codegen's own
	// runtime.ReduceAcc[T]; user types are never generic).
	TypeArgs []*Type `json:"typeArgs,omitempty"`
	// Stringer is set when the type has a String() string method.
	Stringer bool `json:"stringer,omitempty"`
	// JSONMethods is set when encoding/json treats values of the defined
	// type by its methods: it or its pointer has MarshalJSON,
	// UnmarshalJSON, MarshalText, UnmarshalText or IsZero.
	JSONMethods bool `json:"jsonMethods,omitempty"`
	// Expr is the Go expression of an Opaque type, for messages.
	Expr string `json:"expr,omitempty"`
}

// Field is a struct field.
type Field struct {
	Name     string `json:"name"`
	Type     *Type  `json:"type"`
	Exported bool   `json:"exported"`
	// Embedded is set for an embedded field.
	Embedded bool `json:"embedded,omitempty"`
	// Tag is the field's struct tag.
	Tag string `json:"tag,omitempty"`
	Pos Pos    `json:"pos"`
}

// Common types.
var (
	StringType = &Type{Kind: BasicType, Name: "string"}
	BoolType   = &Type{Kind: BasicType, Name: "bool"}
	Uint64Type = &Type{Kind: BasicType, Name: "uint64"}
)

// IsString reports whether t is the basic type string.
func (t *Type) IsString() bool { return t != nil && t.Kind == BasicType && t.Name == "string" }

// PointerFree reports whether values of t hold no pointers (strings,
// immutable, are fine): time.Time holds its location's. Slices of
// windows share such values with a checkpoint being written without a
// copy (runtime.NewSlicedWindows).
func (t *Type) PointerFree() bool {
	switch {
	case t == nil:
		return false
	case t.Kind == BasicType:
		return true
	case t.Kind == NamedType:
		return t.PkgPath == "time" && t.Name == "Duration" || t.PkgPath != "time" && t.Underlying.PointerFree()
	case t.Kind == ArrayType:
		return t.Elem.PointerFree()
	case t.Kind == StructType:
		for _, f := range t.Fields {
			if !f.Type.PointerFree() {
				return false
			}
		}
		return true
	}
	return false
}

// Struct returns the struct underneath t (through defined types), or nil.
func (t *Type) Struct() *Type {
	for t != nil && t.Kind == NamedType {
		t = t.Underlying
	}
	if t != nil && t.Kind == StructType {
		return t
	}
	return nil
}

// Identical reports whether t and u are the same Go type.
func Identical(t, u *Type) bool {
	if t == nil || u == nil {
		return t == u
	}
	if t.Kind != u.Kind {
		return false
	}
	switch t.Kind {
	case BasicType:
		return t.Name == u.Name
	case NamedType:
		return t.Name == u.Name && t.PkgPath == u.PkgPath
	case PointerType, SliceType:
		return Identical(t.Elem, u.Elem)
	case ArrayType:
		return t.Len == u.Len && Identical(t.Elem, u.Elem)
	case MapType:
		return Identical(t.Key, u.Key) && Identical(t.Elem, u.Elem)
	case StructType:
		if len(t.Fields) != len(u.Fields) {
			return false
		}
		for i := range t.Fields {
			if t.Fields[i].Name != u.Fields[i].Name || !Identical(t.Fields[i].Type, u.Fields[i].Type) || t.Fields[i].Tag != u.Fields[i].Tag {
				return false
			}
		}
		return true
	case OpaqueType:
		return t.Expr == u.Expr
	}
	return false
}

// String renders t as Go source, qualifying defined types by package name:
// "Word", "time.Time", "[]*wc.Word".
func (t *Type) String() string { return t.StringIn("") }

// StringIn renders t as Go source in the package pkgPath: as String, but
// the package's own types unqualified ("[]*Word" in wc).
func (t *Type) StringIn(pkgPath string) string {
	var b strings.Builder
	t.write(&b, pkgPath)
	return b.String()
}

func (t *Type) write(b *strings.Builder, pkgPath string) {
	if t == nil {
		b.WriteString("<nil>")
		return
	}
	switch t.Kind {
	case BasicType:
		b.WriteString(t.Name)
	case NamedType:
		if t.PkgName != "" && t.PkgPath != pkgPath {
			b.WriteString(t.PkgName)
			b.WriteByte('.')
		}
		b.WriteString(t.Name)
	case PointerType:
		b.WriteByte('*')
		t.Elem.write(b, pkgPath)
	case SliceType:
		b.WriteString("[]")
		t.Elem.write(b, pkgPath)
	case ArrayType:
		fmt.Fprintf(b, "[%d]", t.Len)
		t.Elem.write(b, pkgPath)
	case MapType:
		b.WriteString("map[")
		t.Key.write(b, pkgPath)
		b.WriteByte(']')
		t.Elem.write(b, pkgPath)
	case StructType:
		b.WriteString("struct{")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(f.Name)
			b.WriteByte(' ')
			f.Type.write(b, pkgPath)
		}
		b.WriteByte('}')
	case OpaqueType:
		b.WriteString(t.Expr)
	}
}
