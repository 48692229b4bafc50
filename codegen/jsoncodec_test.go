package codegen

import (
	"testing"

	"github.com/pipegen/pipegen/ir"
)

// TestJSONSupport: the types whose generated codec would not be
// encoding/json's get none (the program uses encoding/json for them).
func TestJSONSupport(t *testing.T) {
	str := &ir.Type{Kind: ir.BasicType, Name: "string"}
	i64 := &ir.Type{Kind: ir.BasicType, Name: "int64"}
	named := func(name string, u *ir.Type) *ir.Type {
		return &ir.Type{Kind: ir.NamedType, Name: name, PkgPath: "p", PkgName: "p", Underlying: u}
	}
	st := func(fields ...ir.Field) *ir.Type { return &ir.Type{Kind: ir.StructType, Fields: fields} }
	field := func(name string, t *ir.Type, tag string) ir.Field {
		return ir.Field{Name: name, Type: t, Exported: true, Tag: tag}
	}
	withMethods := named("T", str)
	withMethods.JSONMethods = true
	for _, c := range []struct {
		t    *ir.Type
		want string
	}{
		{named("A", st(field("X", i64, `json:"x"`), field("y", str, ""))), ""},
		{named("B", st(ir.Field{Name: "A", Type: named("A", st()), Exported: true, Embedded: true})), "an embedded field"},
		{named("C", st(field("X", i64, `json:"x,string"`))), "a field tagged string"},
		{named("D", st(field("X", i64, `json:"x"`), field("Y", i64, `json:"X"`))), "two fields named X"},
		{named("E", st(field("X", withMethods, ""))), "T has methods encoding/json calls"},
		{named("F", st(field("X", &ir.Type{Kind: ir.MapType, Key: i64, Elem: str}, ""))), "a map whose keys are not strings"},
		{named("G", st(field("X", &ir.Type{Kind: ir.OpaqueType, Expr: "any"}, ""))), "a opaque type"},
		{named("H", st(field("Next", &ir.Type{Kind: ir.PointerType, Elem: &ir.Type{Kind: ir.NamedType, Name: "H", PkgPath: "p"}}, ""))), "H contains itself"},
		{&ir.Type{Kind: ir.SliceType, Elem: str}, ""},
	} {
		if got := jsonSupport(c.t); got != c.want {
			t.Errorf("jsonSupport(%s) = %q, want %q", c.t, got, c.want)
		}
	}
}
