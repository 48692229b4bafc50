package codegen

import (
	"fmt"
	"time"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/ir"
)

const (
	runtimePath = "github.com/pipegen/pipegen/runtime"
	statePath   = "github.com/pipegen/pipegen/runtime/state"
	// pebblePath is the pebble state backend, imported only by programs
	// that use it.
	pebblePath = "github.com/pipegen/pipegen/runtime/pebblestate"
)

// typeCode renders an IR type as Go source.
func typeCode(t *ir.Type) jen.Code {
	switch t.Kind {
	case ir.BasicType:
		return jen.Id(t.Name)
	case ir.NamedType:
		if t.PkgPath == "" {
			return jen.Id(t.Name)
		}
		if len(t.TypeArgs) > 0 {
			var args []jen.Code
			for _, a := range t.TypeArgs {
				args = append(args, typeCode(a))
			}
			return jen.Qual(t.PkgPath, t.Name).Types(args...)
		}
		return jen.Qual(t.PkgPath, t.Name)
	case ir.PointerType:
		return jen.Op("*").Add(typeCode(t.Elem))
	case ir.SliceType:
		return jen.Index().Add(typeCode(t.Elem))
	case ir.ArrayType:
		return jen.Index(jen.Lit(int(t.Len))).Add(typeCode(t.Elem))
	case ir.MapType:
		return jen.Map(typeCode(t.Key)).Add(typeCode(t.Elem))
	case ir.StructType:
		var fields []jen.Code
		for _, f := range t.Fields {
			field := jen.Id(f.Name).Add(typeCode(f.Type))
			if f.Tag != "" {
				field.Op("`" + f.Tag + "`")
			}
			fields = append(fields, field)
		}
		return jen.Struct(fields...)
	}
	return jen.Id(t.Expr)
}

// imports collects the packages of the named types in t.
func imports(t *ir.Type, dst map[string]string) {
	if t == nil {
		return
	}
	if t.Kind == ir.NamedType && t.PkgPath != "" {
		dst[t.PkgPath] = t.PkgName
	}
	imports(t.Elem, dst)
	imports(t.Key, dst)
	for _, f := range t.Fields {
		imports(f.Type, dst)
	}
	// A defined type's underlying structure is not spelled in generated
	// code, except through field access of keys, which needs no import.
}

// basicOf returns the basic type underneath t, or nil.
func basicOf(t *ir.Type) *ir.Type {
	for t != nil && t.Kind == ir.NamedType {
		if isDuration(t) {
			return &ir.Type{Kind: ir.BasicType, Name: "int64"}
		}
		if t.PkgPath == "time" {
			return nil
		}
		t = t.Underlying
	}
	if t != nil && t.Kind == ir.BasicType {
		return t
	}
	return nil
}

// hashExpr returns the expression that hashes x of basic type t.
func hashExpr(x jen.Code, t, basic *ir.Type) jen.Code {
	conv := func(to string) jen.Code {
		if t.Kind == ir.BasicType && t.Name == to {
			return x
		}
		return jen.Id(to).Call(x)
	}
	switch basic.Name {
	case "string":
		return jen.Qual(runtimePath, "HashString").Call(conv("string"))
	case "bool":
		return jen.Qual(runtimePath, "HashBool").Call(conv("bool"))
	case "float32", "float64":
		return jen.Qual(runtimePath, "HashFloat64").Call(conv("float64"))
	}
	return jen.Qual(runtimePath, "HashUint64").Call(conv("uint64"))
}

// hashStmts appends statements that fold the hash of x (of type t) into h.
func hashStmts(g *jen.Group, x *jen.Statement, t *ir.Type, depth int) {
	if b := basicOf(t); b != nil {
		g.Id("h").Op("=").Qual(runtimePath, "HashCombine").Call(jen.Id("h"), hashExpr(x, t, b))
		return
	}
	u := t
	for u.Kind == ir.NamedType {
		u = u.Underlying
	}
	switch u.Kind {
	case ir.StructType:
		for _, f := range u.Fields {
			hashStmts(g, jen.Add(x).Dot(f.Name), f.Type, depth)
		}
	case ir.ArrayType:
		v := fmt.Sprintf("e%d", depth)
		g.For(jen.List(jen.Id("_"), jen.Id(v)).Op(":=").Range().Add(x)).BlockFunc(func(g *jen.Group) {
			hashStmts(g, jen.Id(v), u.Elem, depth+1)
		})
	}
}

// millisCode renders a duration as the milliseconds the runtime's
// event-time engines take, still readable as a duration and a constant:
// int64(10 * time.Second / time.Millisecond). A duration of milliseconds
// (or zero) is its number, already in the unit.
func millisCode(d time.Duration) jen.Code {
	if d%time.Second != 0 || d == 0 {
		return jen.Lit(int(d.Milliseconds()))
	}
	return jen.Int64().Call(jen.Add(durationCode(d)).Op("/").Qual("time", "Millisecond"))
}

// durationCode renders a duration the way a person writes it.
func durationCode(d time.Duration) jen.Code {
	units := []struct {
		d    time.Duration
		name string
	}{{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"}, {time.Millisecond, "Millisecond"}}
	if d == 0 {
		return jen.Lit(0)
	}
	for _, u := range units {
		if d%u.d == 0 {
			return jen.Lit(int(d/u.d)).Op("*").Qual("time", u.name)
		}
	}
	return jen.Qual("time", "Duration").Call(jen.Lit(int64(d)))
}
