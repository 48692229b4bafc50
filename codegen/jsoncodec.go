package codegen

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/ir"
)

// The JSON-lines decoders of file sources and the encoders of sinks are
// generated per record type, field by field, with encoding/json's
// behaviour: the same keys (tags, case-insensitive matching), the same
// output bytes. They handle the types jsonSupport accepts; for any other,
// the program uses encoding/json as before. At run time a generated
// decoder or encoder that meets what it does not handle (see
// runtime/textcodec) says so, and that record goes through encoding/json,
// which decides: generated code changes the speed, never the result.

const textcodecPath = "github.com/pipegen/pipegen/runtime/textcodec"

// jsonField is a struct field as encoding/json sees it.
type jsonField struct {
	f         ir.Field
	name      string
	omitEmpty bool
	omitZero  bool
}

// jsonFields lists the fields encoding/json reads and writes of struct
// st, or explains why the generated codec does not handle it.
func jsonFields(st *ir.Type) ([]jsonField, string) {
	var out []jsonField
	for _, f := range st.Fields {
		if f.Embedded {
			return nil, "an embedded field"
		}
		if !f.Exported {
			continue
		}
		tag := reflect.StructTag(f.Tag).Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !validTagName(name) {
			name = f.Name
		}
		jf := jsonField{f: f, name: name}
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "omitempty":
				jf.omitEmpty = true
			case "omitzero":
				jf.omitZero = true
			case "string":
				return nil, "a field tagged string"
			}
		}
		for _, o := range out {
			if strings.EqualFold(o.name, name) {
				return nil, "two fields named " + name
			}
		}
		out = append(out, jf)
	}
	return out, ""
}

// validTagName is encoding/json's rule for a tag's name.
func validTagName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// jsonSupport explains why the generated codec does not handle values of
// t, or returns "".
func jsonSupport(t *ir.Type) string { return jsonSupportIn(t, map[string]bool{}) }

func jsonSupportIn(t *ir.Type, visiting map[string]bool) string {
	switch t.Kind {
	case ir.BasicType:
		if t.Name == "uintptr" {
			return "uintptr"
		}
		return ""
	case ir.NamedType:
		if isTime(t) || isDuration(t) {
			return ""
		}
		switch {
		case t.JSONMethods:
			return t.Name + " has methods encoding/json calls"
		case t.PkgPath == "encoding/json":
			return "json." + t.Name
		case t.Underlying == nil || visiting[typeKey(t)]:
			return t.Name + " contains itself"
		}
		visiting[typeKey(t)] = true
		defer delete(visiting, typeKey(t))
		return jsonSupportIn(t.Underlying, visiting)
	case ir.PointerType, ir.SliceType, ir.ArrayType:
		return jsonSupportIn(t.Elem, visiting)
	case ir.MapType:
		if k := basicOf(t.Key); k == nil || !k.IsString() || t.Key.Kind == ir.NamedType && t.Key.JSONMethods {
			return "a map whose keys are not strings"
		}
		return jsonSupportIn(t.Elem, visiting)
	case ir.StructType:
		fields, why := jsonFields(t)
		if why != "" {
			return why
		}
		for _, f := range fields {
			if why := jsonSupportIn(f.f.Type, visiting); why != "" {
				return why
			}
			if f.omitZero && !zeroComparable(f.f.Type) {
				return "omitzero on " + f.f.Name
			}
		}
		return ""
	}
	return "a " + string(t.Kind) + " type"
}

// zeroComparable reports whether the generated code can tell a zero value
// of t as reflect.Value.IsZero does: not through unexported fields.
func zeroComparable(t *ir.Type) bool {
	if isTime(t) || isDuration(t) {
		return true
	}
	if t.Kind == ir.NamedType {
		return t.Underlying != nil && zeroComparable(t.Underlying)
	}
	switch t.Kind {
	case ir.ArrayType:
		return zeroComparable(t.Elem)
	case ir.StructType:
		for _, f := range t.Fields {
			if !f.Exported || !zeroComparable(f.Type) {
				return false
			}
		}
	}
	return true
}

// jsonFuncs emits the generated decoders of jsonl sources and encoders of
// jsonl sinks.
func (g *gen) jsonFuncs(f *jen.File) {
	j := newJSONGen(f, g)
	for _, n := range g.p.Nodes {
		switch {
		case n.Kind == ir.Source && n.Format == "jsonl" && jsonDecodes(n):
			j.sourceDecoder(n)
		case n.Kind == ir.Sink && n.Format == "jsonl" && jsonSupport(n.In()) == "":
			j.sinkEncoder(n)
		}
	}
}

// jsonDecodes reports whether source n gets a generated decoder: its
// record type is a defined struct the generated code handles.
func jsonDecodes(n *ir.Node) bool {
	t := n.Out
	return t.Kind == ir.NamedType && t.Struct() != nil && jsonSupport(t) == ""
}

// jsonGen emits the JSON functions of named struct types, once each.
type jsonGen struct {
	f      *jen.File
	g      *gen
	queued map[string]bool
	queue  []jsonJob
}

type jsonJob struct {
	t      *ir.Type
	decode bool
}

func newJSONGen(f *jen.File, g *gen) *jsonGen {
	return &jsonGen{f: f, g: g, queued: map[string]bool{}}
}

// funcName names (and queues) the encoder or decoder of named struct t.
func (j *jsonGen) funcName(t *ir.Type, decode bool) string {
	pattern := "append%sJSON"
	if decode {
		pattern = "decode%sJSON"
	}
	key := pattern + " " + typeKey(t)
	if !j.queued[key] {
		j.queued[key] = true
		j.queue = append(j.queue, jsonJob{t, decode})
	}
	return j.g.names.name(nameKey{pattern: pattern, of: typeKey(t)}, derive(pattern, t.Name))
}

// sinkEncoder emits the encoder of a jsonl sink's records and returns its
// name, or nil when the type is not handled.
func (j *jsonGen) sinkEncoder(n *ir.Node) jen.Code {
	t := n.In()
	name := j.g.global("encode%sJSON", n)
	var appendFn string
	if t.Kind == ir.NamedType && under(t).Kind == ir.StructType {
		appendFn = j.funcName(t, false)
	} else {
		appendFn = j.g.global("append%sJSON", n)
		j.f.Comment(fmt.Sprintf("%s appends a record of sink %q as encoding/json writes it; false when it cannot.", appendFn, n.Name))
		j.f.Func().Id(appendFn).Params(jen.Id("b").Index().Byte(), jen.Id("v").Op("*").Add(typeCode(t))).Params(jen.Id("_").Index().Byte(), jen.Id("ok").Bool()).BlockFunc(func(g *jen.Group) {
			j.encodeValue(g, jen.Parens(jen.Op("*").Id("v")), t, 0, jen.Id("b").Op(",").False())
			g.Return(jen.Id("b"), jen.True())
		})
	}
	j.f.Comment(fmt.Sprintf("%s writes a record of sink %q as encoding/json does; what the generated", name, n.Name))
	j.f.Comment("code does not handle (NaN, a time out of range) goes through encoding/json.")
	if encodesRef(n) {
		// The chain calls it with the record's address (sinkGen.encodesByRef).
		j.f.Func().Id(name).Params(jen.Id("dst").Index().Byte(), jen.Id("v").Op("*").Add(typeCode(t))).Params(jen.Index().Byte(), jen.Error()).Block(
			jen.If(jen.List(jen.Id("b"), jen.Id("ok")).Op(":=").Id(appendFn).Call(jen.Id("dst"), jen.Id("v")), jen.Id("ok")).Block(jen.Return(jen.Id("b"), jen.Nil())),
			jen.Return(jen.Qual(runtimePath, "EncodeJSON").Call(jen.Id("dst"), jen.Op("*").Id("v"))),
		)
	} else {
		j.f.Func().Id(name).Params(jen.Id("dst").Index().Byte(), jen.Id("v").Add(typeCode(t))).Params(jen.Index().Byte(), jen.Error()).Block(
			jen.If(jen.List(jen.Id("b"), jen.Id("ok")).Op(":=").Id(appendFn).Call(jen.Id("dst"), jen.Op("&").Id("v")), jen.Id("ok")).Block(jen.Return(jen.Id("b"), jen.Nil())),
			jen.Return(jen.Qual(runtimePath, "EncodeJSON").Call(jen.Id("dst"), jen.Id("v"))),
		)
	}
	j.flush()
	return jen.Id(name)
}

// sourceDecoder emits the decoder of a jsonl source's lines and returns
// its name, or nil when the type is not handled (it must be a struct).
func (j *jsonGen) sourceDecoder(n *ir.Node) jen.Code {
	t := n.Out
	name := j.g.global("decode%sJSONL", n)
	j.f.Comment(fmt.Sprintf("%s decodes a line of source %q into v, zero, as encoding/json does;", name, n.Name))
	j.f.Comment("false for a line the generated code does not handle, which then goes through")
	j.f.Comment("encoding/json. With strict, every field must be there and nothing else.")
	j.f.Func().Id(name).Params(jen.Id("line").Index().Byte(), jen.Id("v").Op("*").Add(typeCode(t)), jen.Id("strict").Bool()).Bool().Block(
		jen.Var().Id("s").Qual(textcodecPath, "Scanner"),
		jen.Id("s").Dot("Reset").Call(jen.Id("line")),
		jen.Id(j.funcName(t, true)).Call(jen.Op("&").Id("s"), jen.Id("v"), jen.Id("strict")),
		jen.Return(jen.Id("s").Dot("End").Call()),
	)
	j.flush()
	return jen.Id(name)
}

// flush emits the queued functions.
func (j *jsonGen) flush() {
	for len(j.queue) > 0 {
		job := j.queue[0]
		j.queue = j.queue[1:]
		t := job.t
		fields, _ := jsonFields(t.Struct())
		name := j.funcName(t, job.decode)
		ts := j.g.typeString(t)
		if !job.decode {
			j.f.Comment(fmt.Sprintf("%s appends a %s as encoding/json writes it; false when it cannot.", name, ts))
			j.f.Func().Id(name).Params(jen.Id("b").Index().Byte(), jen.Id("v").Op("*").Add(typeCode(t))).Params(jen.Id("_").Index().Byte(), jen.Id("ok").Bool()).BlockFunc(func(g *jen.Group) {
				j.encodeFields(g, jen.Id("v"), fields, 0, jen.Id("b").Op(",").False())
				g.Return(jen.Id("b"), jen.True())
			})
			continue
		}
		names := j.g.names.name(nameKey{pattern: "%sJSONNames", of: typeKey(t)}, derive("%sJSONNames", lowerFirst(t.Name)))
		var lits []jen.Code
		for _, f := range fields {
			lits = append(lits, jen.Lit(f.name))
		}
		j.f.Comment(fmt.Sprintf("%s are the keys of a %s, for keys that match one only without regard to case.", names, ts))
		j.f.Var().Id(names).Op("=").Index().String().Values(lits...)
		j.f.Comment(fmt.Sprintf("%s reads a %s as encoding/json does, or fails s.", name, ts))
		j.f.Func().Id(name).Params(jen.Id("s").Op("*").Qual(textcodecPath, "Scanner"), jen.Id("v").Op("*").Add(typeCode(t)), jen.Id("strict").Bool()).BlockFunc(func(g *jen.Group) {
			j.decodeFields(g, jen.Id("v"), fields, names)
		})
	}
}

// rawLit is a string literal in back quotes when it can be.
func rawLit(s string) *jen.Statement {
	if !strings.ContainsAny(s, "`\r") {
		return jen.Op("`" + s + "`")
	}
	return jen.Lit(s)
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// encodeFields appends the fields of the struct at pointer or value x.
func (j *jsonGen) encodeFields(g *jen.Group, x jen.Code, fields []jsonField, depth int, fail jen.Code) {
	if len(fields) == 0 {
		g.Id("b").Op("=").Append(jen.Id("b"), jen.Lit("{}").Op("..."))
		return
	}
	// Keys are written with their comma while no field before can be
	// left out; after one that can, the comma depends on what was
	// written.
	start := fmt.Sprintf("n%d", depth)
	dynamic := false
	if fields[0].omitEmpty || fields[0].omitZero {
		g.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune('{'))
	}
	for i, f := range fields {
		val := jen.Add(x).Dot(f.f.Name)
		key := fmt.Sprintf("%q:", f.name)
		write := func(g *jen.Group) {
			switch {
			case i == 0 && !dynamic:
				g.Id("b").Op("=").Append(jen.Id("b"), rawLit("{"+key).Op("..."))
			case i == 0:
				g.Id("b").Op("=").Append(jen.Id("b"), rawLit(key).Op("..."))
			case !dynamic:
				g.Id("b").Op("=").Append(jen.Id("b"), rawLit(","+key).Op("..."))
			default:
				g.If(jen.Len(jen.Id("b")).Op(">").Id(start)).Block(jen.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune(',')))
				g.Id("b").Op("=").Append(jen.Id("b"), rawLit(key).Op("..."))
			}
			j.encodeValue(g, val, f.f.Type, depth+1, fail)
		}
		if !f.omitEmpty && !f.omitZero {
			write(g)
			continue
		}
		if !dynamic {
			g.Id(start).Op(":=").Len(jen.Id("b"))
			if i > 0 {
				g.Id(start).Op("--") // a field was written: the next needs its comma
			}
			dynamic = true
		}
		var conds []jen.Code
		if f.omitEmpty {
			conds = append(conds, j.nonEmpty(val, f.f.Type))
		}
		if f.omitZero {
			conds = append(conds, jen.Op("!").Parens(j.isZero(val, f.f.Type, depth)))
		}
		cond := conds[0]
		if len(conds) == 2 {
			cond = jen.Add(conds[0]).Op("&&").Add(conds[1])
		}
		g.If(cond).BlockFunc(write)
	}
	g.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune('}'))
}

// nonEmpty is encoding/json's !isEmptyValue.
func (j *jsonGen) nonEmpty(x jen.Code, t *ir.Type) jen.Code {
	u := under(t)
	switch {
	case isTime(t):
		return jen.True()
	case u.Kind == ir.BasicType && u.Name == "bool":
		return jen.Add(x)
	case u.Kind == ir.BasicType && u.Name == "string", u.Kind == ir.SliceType, u.Kind == ir.MapType:
		return jen.Len(x).Op("!=").Lit(0)
	case u.Kind == ir.ArrayType:
		return jen.Lit(u.Len != 0)
	case u.Kind == ir.BasicType:
		return jen.Add(x).Op("!=").Lit(0)
	case u.Kind == ir.PointerType:
		return jen.Add(x).Op("!=").Nil()
	}
	return jen.True() // a struct is never empty
}

// isZero is reflect.Value.IsZero of x (which takes -0 for a zero, as
// ==).
func (j *jsonGen) isZero(x jen.Code, t *ir.Type, depth int) jen.Code {
	if isTime(t) {
		return jen.Add(x).Dot("IsZero").Call()
	}
	u := under(t)
	switch u.Kind {
	case ir.BasicType:
		switch u.Name {
		case "bool":
			return jen.Op("!").Add(x)
		case "string":
			return jen.Add(x).Op("==").Lit("")
		}
		return jen.Add(x).Op("==").Lit(0)
	case ir.PointerType, ir.SliceType, ir.MapType:
		return jen.Add(x).Op("==").Nil()
	case ir.ArrayType:
		i := jen.Id(fmt.Sprintf("z%d", depth))
		return jen.Func().Params().Bool().Block(
			jen.For(jen.Add(i).Op(":=").Range().Add(x)).Block(
				jen.If(jen.Op("!").Parens(j.isZero(jen.Add(x).Index(i), u.Elem, depth+1))).Block(jen.Return(jen.False())),
			),
			jen.Return(jen.True()),
		).Call()
	case ir.StructType:
		if len(u.Fields) == 0 {
			return jen.True()
		}
		var c *jen.Statement
		for _, f := range u.Fields {
			z := jen.Parens(j.isZero(jen.Add(x).Dot(f.Name), f.Type, depth))
			if c == nil {
				c = z
			} else {
				c = c.Op("&&").Add(z)
			}
		}
		return c
	}
	return jen.False()
}

// under is t's structure through defined types; time.Time and
// time.Duration stay themselves.
func under(t *ir.Type) *ir.Type {
	for t.Kind == ir.NamedType && t.Underlying != nil && !isTime(t) && !isDuration(t) {
		t = t.Underlying
	}
	if isDuration(t) {
		return &ir.Type{Kind: ir.BasicType, Name: "int64"}
	}
	return t
}

// encodeValue appends the value x of type t to b; fail is what the
// function returns when the value cannot be written here.
func (j *jsonGen) encodeValue(g *jen.Group, x jen.Code, t *ir.Type, depth int, fail jen.Code) {
	ok := jen.Id("ok")
	if isTime(t) {
		g.List(jen.Id("b"), ok).Op("=").Qual(textcodecPath, "AppendTime").Call(jen.Id("b"), x)
		g.If(jen.Op("!").Add(ok)).Block(jen.Return(fail))
		return
	}
	u := under(t)
	as := func(conv *jen.Statement, name string) jen.Code {
		if t.Kind == ir.BasicType && t.Name == name {
			return x
		}
		return conv.Call(x)
	}
	if t.Kind == ir.NamedType && u.Kind == ir.StructType {
		e := jen.Id(fmt.Sprintf("e%d", depth))
		g.Block(
			jen.Add(e).Op(":=").Add(x),
			jen.List(jen.Id("b"), ok).Op("=").Id(j.funcName(t, false)).Call(jen.Id("b"), jen.Op("&").Add(e)),
			jen.If(jen.Op("!").Add(ok)).Block(jen.Return(fail)),
		)
		return
	}
	switch u.Kind {
	case ir.BasicType:
		switch {
		case u.Name == "bool":
			g.Id("b").Op("=").Qual("strconv", "AppendBool").Call(jen.Id("b"), as(jen.Bool(), "bool"))
		case u.Name == "string":
			g.Id("b").Op("=").Qual(textcodecPath, "AppendString").Call(jen.Id("b"), as(jen.String(), "string"))
		case u.Name == "float32" || u.Name == "float64":
			bits := 64
			if u.Name == "float32" {
				bits = 32
			}
			g.List(jen.Id("b"), ok).Op("=").Qual(textcodecPath, "AppendFloat").Call(jen.Id("b"), as(jen.Float64(), "float64"), jen.Lit(bits))
			g.If(jen.Op("!").Add(ok)).Block(jen.Return(fail))
		case strings.HasPrefix(u.Name, "u") || u.Name == "byte":
			g.Id("b").Op("=").Qual(textcodecPath, "AppendUint").Call(jen.Id("b"), as(jen.Uint64(), "uint64"))
		default:
			g.Id("b").Op("=").Qual(textcodecPath, "AppendInt").Call(jen.Id("b"), as(jen.Int64(), "int64"))
		}
	case ir.PointerType:
		g.If(jen.Add(x).Op("==").Nil()).Block(
			jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit("null").Op("...")),
		).Else().BlockFunc(func(g *jen.Group) {
			j.encodeValue(g, jen.Parens(jen.Op("*").Add(x)), u.Elem, depth+1, fail)
		})
	case ir.SliceType:
		g.If(jen.Add(x).Op("==").Nil()).Block(
			jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit("null").Op("...")),
		).Else().BlockFunc(func(g *jen.Group) {
			if isByte(u.Elem) {
				g.Id("b").Op("=").Qual(textcodecPath, "AppendBytes").Call(jen.Id("b"), jen.Index().Byte().Call(x))
				return
			}
			j.encodeElems(g, x, u.Elem, depth, fail)
		})
	case ir.ArrayType:
		j.encodeElems(g, x, u.Elem, depth, fail)
	case ir.MapType:
		keys := jen.Id(fmt.Sprintf("keys%d", depth))
		k := jen.Id(fmt.Sprintf("k%d", depth))
		g.If(jen.Add(x).Op("==").Nil()).Block(
			jen.Id("b").Op("=").Append(jen.Id("b"), jen.Lit("null").Op("...")),
		).Else().BlockFunc(func(g *jen.Group) {
			g.Add(keys).Op(":=").Make(jen.Index().String(), jen.Lit(0), jen.Len(x))
			g.For(jen.Add(k).Op(":=").Range().Add(x)).Block(jen.Add(keys).Op("=").Append(keys, jen.String().Call(k)))
			g.Qual("slices", "Sort").Call(keys)
			g.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune('{'))
			i := jen.Id(fmt.Sprintf("i%d", depth))
			g.For(jen.List(i, k).Op(":=").Range().Add(keys)).BlockFunc(func(g *jen.Group) {
				g.If(jen.Add(i).Op(">").Lit(0)).Block(jen.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune(',')))
				g.Id("b").Op("=").Qual(textcodecPath, "AppendString").Call(jen.Id("b"), k)
				g.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune(':'))
				j.encodeValue(g, jen.Add(x).Index(jen.Add(typeCode(t.Key)).Call(k)), u.Elem, depth+1, fail)
			})
			g.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune('}'))
		})
	case ir.StructType:
		fields, _ := jsonFields(u)
		j.encodeFields(g, x, fields, depth, fail)
	}
}

func (j *jsonGen) encodeElems(g *jen.Group, x jen.Code, elem *ir.Type, depth int, fail jen.Code) {
	i := jen.Id(fmt.Sprintf("i%d", depth))
	e := jen.Id(fmt.Sprintf("v%d", depth))
	g.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune('['))
	g.For(jen.List(i, e).Op(":=").Range().Add(x)).BlockFunc(func(g *jen.Group) {
		g.If(jen.Add(i).Op(">").Lit(0)).Block(jen.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune(',')))
		j.encodeValue(g, e, elem, depth+1, fail)
	})
	g.Id("b").Op("=").Append(jen.Id("b"), jen.LitRune(']'))
}

func isByte(t *ir.Type) bool {
	return t.Kind == ir.BasicType && (t.Name == "uint8" || t.Name == "byte")
}

// decodeFields reads an object into the struct at pointer v.
func (j *jsonGen) decodeFields(g *jen.Group, v jen.Code, fields []jsonField, names string) {
	s := jen.Id("s")
	g.If(jen.Op("!").Add(s).Dot("Open").Call(jen.LitRune('{'))).Block(jen.Return())
	if len(fields) > 0 {
		g.Var().Id("seen").Index(jen.Lit(len(fields))).Bool()
	}
	g.For(jen.Id("more").Op(":=").Add(s).Dot("First").Call(jen.LitRune('}')), jen.Id("more"), jen.Id("more").Op("=").Add(s).Dot("Next").Call(jen.LitRune('}'))).BlockFunc(func(g *jen.Group) {
		g.Id("key").Op(":=").Add(s).Dot("Key").Call()
		if len(fields) == 0 {
			g.If(jen.Id("strict")).Block(jen.Add(s).Dot("Fail").Call(), jen.Return())
			g.Add(s).Dot("Skip").Call()
			return
		}
		g.Id("i").Op(":=").Lit(-1)
		g.Switch(jen.String().Call(jen.Id("key"))).BlockFunc(func(g *jen.Group) {
			for i, f := range fields {
				g.Case(jen.Lit(f.name)).Block(jen.Id("i").Op("=").Lit(i))
			}
			g.Default().Block(jen.Id("i").Op("=").Qual(textcodecPath, "Fold").Call(jen.Id("key"), jen.Id(names)))
		})
		g.If(jen.Id("i").Op("<").Lit(0)).Block(
			jen.If(jen.Id("strict")).Block(jen.Add(s).Dot("Fail").Call(), jen.Return()),
			jen.Add(s).Dot("Skip").Call(),
			jen.Continue(),
		)
		g.If(jen.Id("seen").Index(jen.Id("i"))).Block(
			jen.Add(s).Dot("Fail").Call().Comment("a key twice: encoding/json decides"),
			jen.Return(),
		)
		g.Id("seen").Index(jen.Id("i")).Op("=").True()
		g.Switch(jen.Id("i")).BlockFunc(func(g *jen.Group) {
			for i, f := range fields {
				g.Case(jen.Lit(i)).BlockFunc(func(g *jen.Group) {
					j.decodeValue(g, jen.Add(v).Dot(f.f.Name), f.f.Type, 0)
				})
			}
		})
	})
	if len(fields) > 0 {
		g.If(jen.Id("strict")).Block(
			jen.For(jen.List(jen.Id("_"), jen.Id("ok")).Op(":=").Range().Id("seen")).Block(
				jen.If(jen.Op("!").Id("ok")).Block(jen.Add(s).Dot("Fail").Call()),
			),
		)
	}
}

// decodeValue reads a value of type t into the variable x.
func (j *jsonGen) decodeValue(g *jen.Group, x jen.Code, t *ir.Type, depth int) {
	s := jen.Id("s")
	u := under(t)
	nilable := u.Kind == ir.PointerType || u.Kind == ir.SliceType || u.Kind == ir.MapType
	if nilable {
		g.If(jen.Add(s).Dot("Null").Call()).Block(jen.Add(x).Op("=").Nil()).Else().BlockFunc(func(g *jen.Group) {
			j.decodeNonNull(g, x, t, u, depth)
		})
		return
	}
	g.If(jen.Op("!").Add(s).Dot("Null").Call()).BlockFunc(func(g *jen.Group) {
		j.decodeNonNull(g, x, t, u, depth)
	})
}

func (j *jsonGen) decodeNonNull(g *jen.Group, x jen.Code, t, u *ir.Type, depth int) {
	s := jen.Id("s")
	if isTime(t) {
		g.Add(x).Op("=").Add(s).Dot("Time").Call()
		return
	}
	if t.Kind == ir.NamedType && u.Kind == ir.StructType {
		g.Id(j.funcName(t, true)).Call(s, jen.Op("&").Add(x), jen.False())
		return
	}
	conv := func(v jen.Code) jen.Code {
		if t.Kind == ir.BasicType && (t.Name == "int64" || t.Name == "uint64" || t.Name == "float64" || t.Name == "string" || t.Name == "bool") {
			return v
		}
		return jen.Add(typeCode(t)).Call(v)
	}
	switch u.Kind {
	case ir.BasicType:
		var read jen.Code
		switch {
		case u.Name == "bool":
			read = jen.Add(s).Dot("Bool").Call()
		case u.Name == "string":
			read = jen.Add(s).Dot("String").Call()
		case u.Name == "float32":
			read = jen.Add(s).Dot("Float").Call(jen.Lit(32))
		case u.Name == "float64":
			read = jen.Add(s).Dot("Float").Call(jen.Lit(64))
		case strings.HasPrefix(u.Name, "u") || u.Name == "byte":
			read = jen.Add(s).Dot("Uint").Call(jen.Lit(intBits(u.Name)))
		default:
			read = jen.Add(s).Dot("Int").Call(jen.Lit(intBits(u.Name)))
		}
		g.Add(x).Op("=").Add(conv(read))
	case ir.PointerType:
		g.Add(x).Op("=").New(typeCode(u.Elem))
		j.decodeValue(g, jen.Parens(jen.Op("*").Add(x)), u.Elem, depth+1)
	case ir.SliceType:
		if isByte(u.Elem) {
			g.Add(x).Op("=").Add(conv(jen.Add(s).Dot("Bytes").Call()))
			return
		}
		e := jen.Id(fmt.Sprintf("e%d", depth))
		g.Add(x).Op("=").Add(typeCode(t)).Values()
		g.If(jen.Op("!").Add(s).Dot("Open").Call(jen.LitRune('['))).Block(jen.Return())
		g.For(jen.Id(fmt.Sprintf("more%d", depth)).Op(":=").Add(s).Dot("First").Call(jen.LitRune(']')), jen.Id(fmt.Sprintf("more%d", depth)), jen.Id(fmt.Sprintf("more%d", depth)).Op("=").Add(s).Dot("Next").Call(jen.LitRune(']'))).BlockFunc(func(g *jen.Group) {
			g.Var().Add(e).Add(typeCode(u.Elem))
			j.decodeValue(g, e, u.Elem, depth+1)
			g.Add(x).Op("=").Append(x, e)
		})
	case ir.ArrayType:
		i := jen.Id(fmt.Sprintf("i%d", depth))
		g.If(jen.Op("!").Add(s).Dot("Open").Call(jen.LitRune('['))).Block(jen.Return())
		g.Add(i).Op(":=").Lit(0)
		g.For(jen.Id(fmt.Sprintf("more%d", depth)).Op(":=").Add(s).Dot("First").Call(jen.LitRune(']')), jen.Id(fmt.Sprintf("more%d", depth)), jen.Id(fmt.Sprintf("more%d", depth)).Op("=").Add(s).Dot("Next").Call(jen.LitRune(']'))).BlockFunc(func(g *jen.Group) {
			g.If(jen.Add(i).Op(">=").Lit(int(u.Len))).Block(jen.Add(s).Dot("Skip").Call(), jen.Continue())
			j.decodeValue(g, jen.Add(x).Index(i), u.Elem, depth+1)
			g.Add(i).Op("++")
		})
	case ir.MapType:
		e := jen.Id(fmt.Sprintf("e%d", depth))
		k := jen.Id(fmt.Sprintf("k%d", depth))
		g.Add(x).Op("=").Add(typeCode(t)).Values()
		g.If(jen.Op("!").Add(s).Dot("Open").Call(jen.LitRune('{'))).Block(jen.Return())
		g.For(jen.Id(fmt.Sprintf("more%d", depth)).Op(":=").Add(s).Dot("First").Call(jen.LitRune('}')), jen.Id(fmt.Sprintf("more%d", depth)), jen.Id(fmt.Sprintf("more%d", depth)).Op("=").Add(s).Dot("Next").Call(jen.LitRune('}'))).BlockFunc(func(g *jen.Group) {
			g.Add(k).Op(":=").String().Call(jen.Add(s).Dot("Key").Call())
			g.Var().Add(e).Add(typeCode(u.Elem))
			j.decodeValue(g, e, u.Elem, depth+1)
			g.Add(x).Index(jen.Add(typeCode(t.Key)).Call(k)).Op("=").Add(e)
		})
	case ir.StructType:
		// An unnamed struct: its fields inline, never strict.
		fields, _ := jsonFields(u)
		j.decodeInline(g, x, fields, depth)
	}
}

// decodeInline reads an object into an unnamed struct x.
func (j *jsonGen) decodeInline(g *jen.Group, x jen.Code, fields []jsonField, depth int) {
	s := jen.Id("s")
	key := jen.Id(fmt.Sprintf("key%d", depth))
	seen := jen.Id(fmt.Sprintf("seen%d", depth))
	more := jen.Id(fmt.Sprintf("more%d", depth))
	g.If(jen.Op("!").Add(s).Dot("Open").Call(jen.LitRune('{'))).Block(jen.Return())
	g.Var().Add(seen).Index(jen.Lit(len(fields) + 1)).Bool()
	g.For(jen.Add(more).Op(":=").Add(s).Dot("First").Call(jen.LitRune('}')), more, jen.Add(more).Op("=").Add(s).Dot("Next").Call(jen.LitRune('}'))).BlockFunc(func(g *jen.Group) {
		g.Add(key).Op(":=").Add(s).Dot("Key").Call()
		var names []jen.Code
		for _, f := range fields {
			names = append(names, jen.Lit(f.name))
		}
		i := jen.Id(fmt.Sprintf("f%d", depth))
		g.Add(i).Op(":=").Qual(textcodecPath, "Exact").Call(key, jen.Index().String().Values(names...))
		g.If(jen.Add(i).Op("<").Lit(0)).Block(jen.Add(i).Op("=").Qual(textcodecPath, "Fold").Call(key, jen.Index().String().Values(names...)))
		g.If(jen.Add(i).Op("<").Lit(0)).Block(jen.Add(s).Dot("Skip").Call(), jen.Continue())
		g.If(jen.Add(seen).Index(i)).Block(jen.Add(s).Dot("Fail").Call(), jen.Return())
		g.Add(seen).Index(i).Op("=").True()
		g.Switch(i).BlockFunc(func(g *jen.Group) {
			for n, f := range fields {
				g.Case(jen.Lit(n)).BlockFunc(func(g *jen.Group) {
					j.decodeValue(g, jen.Add(x).Dot(f.f.Name), f.f.Type, depth+1)
				})
			}
		})
	})
}

func intBits(name string) int {
	switch name {
	case "int8", "uint8", "byte":
		return 8
	case "int16", "uint16":
		return 16
	case "int32", "uint32", "rune":
		return 32
	}
	return 64
}
