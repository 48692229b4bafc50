package codegen

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/ir"
)

// The CSV decoders of file and Kafka sources are generated per source,
// field by field: the conversion of each cell into its field, which the
// runtime's reflective decoder does through a function per column and a
// string per cell. Splitting the line (quotes, the delimiter), the
// header and strict mode stay the runtime's. A cell the generated code
// refuses sends the line through the reflective decoder, which returns
// the same record or words the error (naming the column): generated code
// changes the speed, never the result.

// csvFields lists the fields the runtime's CSV decoder reads of struct
// st, in its order (runtime/internal/connector/format csvColumns), or
// nil when the generated decoder does not handle one of them.
func csvFields(st *ir.Type) []ir.Field {
	var out []ir.Field
	for _, f := range st.Fields {
		if !f.Exported || reflect.StructTag(f.Tag).Get("csv") == "-" {
			continue
		}
		if f.Embedded || !csvCell(f.Type) {
			return nil
		}
		out = append(out, f)
	}
	return out
}

// csvCell reports whether the generated decoder reads a cell into t: a
// bool, number or string (or a type defined on one), time.Time or
// time.Duration, as the reflective decoder does.
func csvCell(t *ir.Type) bool {
	if isTime(t) || isDuration(t) {
		return true
	}
	b := basicOf(t)
	return b != nil && b.Name != "complex64" && b.Name != "complex128"
}

// csvDecodes reports whether csv source n gets a generated decoder: its
// record type is a defined struct whose every field it handles.
func csvDecodes(n *ir.Node) bool {
	t := n.Out
	return n.Format == "csv" && t.Kind == ir.NamedType && t.Struct() != nil && len(csvFields(t.Struct())) > 0
}

// csvEncodes reports whether csv sink n gets a generated encoder: its
// record type is a defined struct whose every field it handles.
func csvEncodes(n *ir.Node) bool {
	t := n.In()
	return n.Kind == ir.Sink && n.Format == "csv" && t.Kind == ir.NamedType && t.Struct() != nil && len(csvFields(t.Struct())) > 0
}

// csvFuncs emits the generated decoders of csv sources and encoders of
// csv sinks.
func (g *gen) csvFuncs(f *jen.File) {
	// One encoder per record type, shared by the sinks that write it.
	var types []*ir.Type
	sinks := map[string][]string{}
	for _, n := range g.p.Nodes {
		switch {
		case n.Kind == ir.Source && csvDecodes(n):
			g.csvDecoder(f, n)
		case n.Kind == ir.Sink && csvEncodes(n):
			k := typeKey(n.In())
			if sinks[k] == nil {
				types = append(types, n.In())
			}
			sinks[k] = append(sinks[k], n.Name)
		}
	}
	for _, t := range types {
		g.csvEncoder(f, t, sinks[typeKey(t)])
	}
}

// csvEncoderName names the generated CSV encoder of record type t.
func (g *gen) csvEncoderName(t *ir.Type) string {
	return g.names.name(nameKey{pattern: "append%sCSV", of: typeKey(t)}, derive("append%sCSV", t.Name))
}

// csvEncoder emits the encoder of the records of type t of csv sinks: the cells of its fields in
// the reflective encoder's order (that of csvFields), each written by
// the textcodec.CSVWriter method of its kind, which quotes it when it
// must. A time the writer refuses sends the record through the
// reflective encoder, which returns the error.
func (g *gen) csvEncoder(f *jen.File, t *ir.Type, sinks []string) {
	name := g.csvEncoderName(t)
	fields := csvFields(t.Struct())
	f.Comment(fmt.Sprintf("%s appends a %s as a CSV line, as the runtime's reflective encoder", name, g.typeString(t)))
	f.Comment("writes it; false for a time RFC 3339 cannot write, which then goes through that")
	which := "sink "
	if len(sinks) > 1 {
		which = "sinks "
	}
	f.Comment(fmt.Sprintf("encoder. It writes the records of %s%s.", which, strings.Join(sinks, ", ")))
	f.Func().Id(name).Params(
		jen.Id("b").Index().Byte(), jen.Id("v").Add(typeCode(t)), jen.Id("w").Op("*").Qual(textcodecPath, "CSVWriter"),
	).Params(jen.Index().Byte(), jen.Bool()).BlockFunc(func(g *jen.Group) {
		declared := false // ok, for the times
		for i, fd := range fields {
			if i > 0 {
				g.Id("b").Op("=").Id("w").Dot("Delim").Call(jen.Id("b"))
			}
			x := jen.Id("v").Dot(fd.Name)
			conv := func(as string) jen.Code {
				if fd.Type.Kind == ir.BasicType && fd.Type.Name == as {
					return x
				}
				return jen.Id(as).Call(x)
			}
			put := func(method string, args ...jen.Code) {
				g.Id("b").Op("=").Id("w").Dot(method).Call(append([]jen.Code{jen.Id("b")}, args...)...)
			}
			switch b := basicOf(fd.Type); {
			case isTime(fd.Type):
				if !declared {
					g.Var().Id("ok").Bool()
					declared = true
				}
				g.If(jen.List(jen.Id("b"), jen.Id("ok")).Op("=").Id("w").Dot("Time").Call(jen.Id("b"), x), jen.Op("!").Id("ok")).Block(
					jen.Return(jen.Id("b"), jen.False()),
				)
			case isDuration(fd.Type):
				put("Duration", x)
			case b.Name == "string" && len(fields) == 1:
				put("SoleString", conv("string"))
			case b.Name == "string":
				put("String", conv("string"))
			case b.Name == "bool":
				put("Bool", conv("bool"))
			case b.Name == "float32" || b.Name == "float64":
				bits := 64
				if b.Name == "float32" {
					bits = 32
				}
				put("Float", conv("float64"), jen.Lit(bits))
			case strings.HasPrefix(b.Name, "u") || b.Name == "byte":
				put("Uint", conv("uint64"))
			default:
				put("Int", conv("int64"))
			}
		}
		g.Return(jen.Id("b"), jen.True())
	})
}

// csvDecoder emits the decoder of csv source n.
func (g *gen) csvDecoder(f *jen.File, n *ir.Node) {
	name := g.global("decode%sCSV", n)
	fields := csvFields(n.Out.Struct())
	f.Comment(fmt.Sprintf("%s reads the cells of a line of source %q into v, zero: cell i", name, n.Name))
	f.Comment("into the field of column cols[i], as the runtime's reflective decoder does;")
	f.Comment("false for a cell it refuses, whose line then goes through that decoder.")
	// With two string fields or more, their cells are copied into one
	// array, one allocation a line rather than one a field.
	var strs []jen.Code
	for i, fd := range fields {
		if csvString(fd.Type) {
			strs = append(strs, jen.Lit(i))
		}
	}
	shared := len(strs) > 1
	f.Func().Id(name).Params(
		jen.Id("cells").Index().Index().Byte(), jen.Id("cols").Index().Int(), jen.Id("v").Op("*").Add(typeCode(n.Out)),
	).Bool().BlockFunc(func(g *jen.Group) {
		if shared {
			g.Id("n").Op(":=").Lit(0)
			g.For(jen.List(jen.Id("i"), jen.Id("c")).Op(":=").Range().Id("cells")).Block(
				jen.Switch(jen.Id("cols").Index(jen.Id("i"))).Block(
					jen.Case(strs...).Block(jen.Id("n").Op("+=").Len(jen.Id("c"))),
				),
			)
			g.Var().Id("strs").Qual(textcodecPath, "CSVStrings")
			g.Id("strs").Dot("Reset").Call(jen.Id("n"))
		}
		g.Add(jen.For(jen.List(jen.Id("i"), jen.Id("c")).Op(":=").Range().Id("cells")).Block(
			jen.If(jen.Len(jen.Id("c")).Op("==").Lit(0)).Block(
				jen.Continue().Comment("an empty cell leaves the field zero"),
			),
			jen.Switch(jen.Id("cols").Index(jen.Id("i"))).BlockFunc(func(sw *jen.Group) {
				for i, fd := range fields {
					sw.Case(jen.Lit(i)).BlockFunc(func(b *jen.Group) {
						csvCellCode(b, jen.Id("v").Dot(fd.Name), fd.Type, shared)
					})
				}
				// A column this decoder does not know (a runtime that
				// counts fields otherwise): the reflective decoder reads
				// the line.
				sw.Default().Block(jen.Return(jen.False()))
			}),
		))
		g.Return(jen.True())
	})
}

// csvString reports whether a cell of t is read as a string.
func csvString(t *ir.Type) bool {
	if isTime(t) || isDuration(t) {
		return false
	}
	return basicOf(t).Name == "string"
}

// csvCellCode reads cell c into x of type t; a string from strs when
// shared.
func csvCellCode(g *jen.Group, x *jen.Statement, t *ir.Type, shared bool) {
	conv := func(v jen.Code, as string) jen.Code {
		if t.Kind == ir.BasicType && t.Name == as {
			return v
		}
		return jen.Add(typeCode(t)).Call(v)
	}
	parse := func(call jen.Code, as string) {
		g.List(jen.Id("p"), jen.Id("ok")).Op(":=").Add(call)
		g.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.False()))
		g.Add(x).Op("=").Add(conv(jen.Id("p"), as))
	}
	c := jen.Id("c")
	switch {
	case isTime(t):
		parse(jen.Qual(textcodecPath, "CSVTime").Call(c), "")
		return
	case isDuration(t):
		parse(jen.Qual(textcodecPath, "CSVDuration").Call(c), "")
		return
	}
	b := basicOf(t)
	switch {
	case b.Name == "string" && shared:
		g.Add(x).Op("=").Add(conv(jen.Id("strs").Dot("Cut").Call(c), "string"))
	case b.Name == "string":
		g.Add(x).Op("=").Add(conv(jen.String().Call(c), "string"))
	case b.Name == "bool":
		parse(jen.Qual(textcodecPath, "CSVBool").Call(c), "bool")
	case b.Name == "float32" || b.Name == "float64":
		bits := 64
		if b.Name == "float32" {
			bits = 32
		}
		parse(jen.Qual(textcodecPath, "CSVFloat").Call(c, jen.Lit(bits)), "float64")
	case strings.HasPrefix(b.Name, "u") || b.Name == "byte":
		parse(jen.Qual(textcodecPath, "CSVUint").Call(c, jen.Lit(csvBits(b.Name))), "uint64")
	default:
		parse(jen.Qual(textcodecPath, "CSVInt").Call(c, jen.Lit(csvBits(b.Name))), "int64")
	}
}

// csvBits is the bit size strconv parses an integer type with: 0 for
// int, uint and uintptr, whose size is the platform's.
func csvBits(name string) int {
	switch name {
	case "int", "uint", "uintptr":
		return 0
	}
	return intBits(name)
}
