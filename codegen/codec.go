package codegen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/ir"
)

// The serializers of checkpointed state are generated per type: no
// reflection and no encoding/gob on the state path. See runtime/codec for
// the format: structs are tagged fields (id = declaration position from 1)
// inside a length-delimited value, so that a field added later reads as its
// zero value from an older checkpoint.

const codecPath = "github.com/pipegen/pipegen/runtime/codec"

// codecGen emits serializers and remembers the ones emitted, so that each
// named struct type gets one encode and one decode function.
type codecGen struct {
	f *jen.File
	// names maps a named type to its function suffix.
	names map[string]string
	used  map[string]bool
	// queue holds named struct types whose functions are still to emit.
	queue []*ir.Type
}

func newCodecGen(f *jen.File) *codecGen {
	return &codecGen{f: f, names: map[string]string{}, used: map[string]bool{}}
}

func typeKey(t *ir.Type) string { return t.PkgPath + "." + t.Name }

// structName returns the suffix of a named struct type's functions, and
// queues them.
func (c *codecGen) structName(t *ir.Type) string {
	if n, ok := c.names[typeKey(t)]; ok {
		return n
	}
	n := upperFirst(t.Name)
	for i := 2; c.used[n]; i++ {
		n = fmt.Sprintf("%s%d", upperFirst(t.Name), i)
	}
	c.used[n] = true
	c.names[typeKey(t)] = n
	c.queue = append(c.queue, t)
	return n
}

// flush emits the functions of every queued struct type.
func (c *codecGen) flush() {
	for len(c.queue) > 0 {
		t := c.queue[0]
		c.queue = c.queue[1:]
		n := c.names[typeKey(t)]
		st := t.Struct()
		c.f.Comment(fmt.Sprintf("encode%s writes a %s of checkpointed state, field by field.", n, t))
		c.f.Func().Id("encode"+n).Params(jen.Id("w").Op("*").Qual(codecPath, "Writer"), jen.Id("v").Op("*").Add(typeCode(t))).BlockFunc(func(g *jen.Group) {
			g.Id("m").Op(":=").Id("w").Dot("Begin").Call()
			c.encodeFields(g, jen.Id("v"), st, 0)
			g.Id("w").Dot("End").Call(jen.Id("m"))
		})
		c.f.Comment(fmt.Sprintf("decode%s reads a %s; fields it does not know are skipped.", n, t))
		c.f.Func().Id("decode"+n).Params(jen.Id("r").Op("*").Qual(codecPath, "Reader"), jen.Id("v").Op("*").Add(typeCode(t))).BlockFunc(func(g *jen.Group) {
			g.Id("r").Op("=").Id("r").Dot("Nested").Call()
			c.decodeFields(g, jen.Id("v"), st, 0)
		})
	}
}

// wireType is how a value of t is framed as a struct field.
func wireType(t *ir.Type) string {
	if isTime(t) {
		return "Bytes"
	}
	if isDuration(t) {
		return "Varint"
	}
	if b := basicOf(t); b != nil {
		switch {
		case b.Name == "string":
			return "Bytes"
		case b.Name == "float64":
			return "Fixed64"
		case b.Name == "float32":
			return "Fixed32"
		}
		return "Varint"
	}
	u := underlying(t)
	if u.Kind == ir.PointerType {
		return wireType(u.Elem)
	}
	return "Bytes"
}

func underlying(t *ir.Type) *ir.Type {
	for t.Kind == ir.NamedType && t.Underlying != nil && !isTime(t) && !isDuration(t) {
		t = t.Underlying
	}
	return t
}

func isTime(t *ir.Type) bool {
	return t.Kind == ir.NamedType && t.PkgPath == "time" && t.Name == "Time"
}

func isDuration(t *ir.Type) bool {
	return t.Kind == ir.NamedType && t.PkgPath == "time" && t.Name == "Duration"
}

func isBytes(t *ir.Type) bool {
	u := underlying(t)
	return u.Kind == ir.SliceType && u.Elem.Kind == ir.BasicType && (u.Elem.Name == "uint8" || u.Elem.Name == "byte")
}

// zeroCheck returns the condition under which a field holds a value worth
// writing, or nil when it is always written.
func zeroCheck(x *jen.Statement, t *ir.Type) jen.Code {
	switch {
	case isTime(t):
		return jen.Op("!").Add(x).Dot("IsZero").Call()
	case isDuration(t):
		return jen.Add(x).Op("!=").Lit(0)
	}
	if b := basicOf(t); b != nil {
		switch b.Name {
		case "bool":
			return x
		case "string":
			return jen.Add(x).Op("!=").Lit("")
		}
		return jen.Add(x).Op("!=").Lit(0)
	}
	switch underlying(t).Kind {
	case ir.SliceType, ir.MapType:
		return jen.Len(x).Op(">").Lit(0)
	case ir.PointerType:
		return jen.Add(x).Op("!=").Nil()
	}
	return nil
}

func (c *codecGen) encodeFields(g *jen.Group, v *jen.Statement, st *ir.Type, depth int) {
	for i, f := range st.Fields {
		x := jen.Add(v).Dot(f.Name)
		body := []jen.Code{jen.Id("w").Dot("Tag").Call(jen.Lit(i+1), jen.Qual(codecPath, wireType(f.Type)))}
		write := func(g *jen.Group) {
			if underlying(f.Type).Kind == ir.PointerType {
				// A nil pointer field is left out; a set one is its value.
				c.encode(g, jen.Op("*").Add(x), underlying(f.Type).Elem, depth)
			} else {
				c.encode(g, x, f.Type, depth)
			}
		}
		if cond := zeroCheck(jen.Add(x), f.Type); cond != nil {
			g.If(cond).BlockFunc(func(g *jen.Group) {
				g.Add(body...)
				write(g)
			})
		} else {
			g.Add(body...)
			write(g)
		}
	}
}

func (c *codecGen) decodeFields(g *jen.Group, v *jen.Statement, st *ir.Type, depth int) {
	g.For(jen.Id("r").Dot("More").Call()).BlockFunc(func(g *jen.Group) {
		g.List(jen.Id("id"), jen.Id("wt")).Op(":=").Id("r").Dot("Tag").Call()
		g.Switch(jen.Id("id")).BlockFunc(func(g *jen.Group) {
			for i, f := range st.Fields {
				x := jen.Add(v).Dot(f.Name)
				g.Case(jen.Lit(i + 1)).Block(
					jen.If(jen.Id("r").Dot("Want").Call(jen.Id("id"), jen.Id("wt"), jen.Qual(codecPath, wireType(f.Type)))).BlockFunc(func(g *jen.Group) {
						if u := underlying(f.Type); u.Kind == ir.PointerType {
							g.Add(x).Op("=").New(typeCode(u.Elem))
							c.decode(g, "r", jen.Op("*").Add(x), u.Elem, depth)
						} else {
							c.decode(g, "r", x, f.Type, depth)
						}
					}),
				)
			}
			g.Default().Id("r").Dot("Skip").Call(jen.Id("wt"))
		})
	})
}

// encodePtr writes *p, of type t.
func (c *codecGen) encodePtr(g *jen.Group, p *jen.Statement, t *ir.Type) {
	if t.Kind == ir.NamedType && t.Struct() != nil {
		g.Id("encode"+c.structName(t)).Call(jen.Id("w"), p)
		return
	}
	c.encode(g, jen.Op("*").Add(p), t, 0)
}

// decodePtr reads *p, of type t, from the reader r.
func (c *codecGen) decodePtr(g *jen.Group, p *jen.Statement, t *ir.Type) {
	if t.Kind == ir.NamedType && t.Struct() != nil {
		g.Id("decode"+c.structName(t)).Call(jen.Id("r"), p)
		return
	}
	c.decode(g, "r", jen.Op("*").Add(p), t, 0)
}

// encode writes x, an addressable value of type t, without a tag.
func (c *codecGen) encode(g *jen.Group, x *jen.Statement, t *ir.Type, depth int) {
	w := jen.Id("w")
	switch {
	case isTime(t):
		g.Add(w).Dot("Time").Call(x)
		return
	case isDuration(t):
		g.Add(w).Dot("Varint").Call(jen.Int64().Call(x))
		return
	case isBytes(t):
		g.Add(w).Dot("ByteSlice").Call(x)
		return
	}
	if b := basicOf(t); b != nil {
		method, conv := basicCodec(b)
		g.Add(w).Dot(method).Call(convert(x, t, conv))
		return
	}
	if t.Kind == ir.NamedType && t.Struct() != nil {
		g.Id("encode"+c.structName(t)).Call(w, jen.Op("&").Add(x))
		return
	}
	u := underlying(t)
	i := fmt.Sprintf("i%d", depth)
	m := fmt.Sprintf("m%d", depth)
	switch u.Kind {
	case ir.StructType:
		g.Id(m).Op(":=").Add(w).Dot("Begin").Call()
		c.encodeFields(g, x, u, depth+1)
		g.Add(w).Dot("End").Call(jen.Id(m))
	case ir.PointerType:
		g.If(jen.Add(x).Op("==").Nil()).Block(
			jen.Add(w).Dot("Bool").Call(jen.False()),
		).Else().BlockFunc(func(g *jen.Group) {
			g.Add(w).Dot("Bool").Call(jen.True())
			c.encode(g, jen.Op("*").Add(x), u.Elem, depth+1)
		})
	case ir.SliceType, ir.ArrayType:
		g.Id(m).Op(":=").Add(w).Dot("Begin").Call()
		g.Add(w).Dot("Uvarint").Call(jen.Uint64().Call(jen.Len(x)))
		g.For(jen.Id(i).Op(":=").Range().Add(x)).BlockFunc(func(g *jen.Group) {
			c.encode(g, jen.Add(x).Index(jen.Id(i)), u.Elem, depth+1)
		})
		g.Add(w).Dot("End").Call(jen.Id(m))
	case ir.MapType:
		k, v := fmt.Sprintf("k%d", depth), fmt.Sprintf("v%d", depth)
		g.Id(m).Op(":=").Add(w).Dot("Begin").Call()
		g.Add(w).Dot("Uvarint").Call(jen.Uint64().Call(jen.Len(x)))
		g.For(jen.List(jen.Id(k), jen.Id(v)).Op(":=").Range().Add(x)).BlockFunc(func(g *jen.Group) {
			c.encode(g, jen.Id(k), u.Key, depth+1)
			c.encode(g, jen.Id(v), u.Elem, depth+1)
		})
		g.Add(w).Dot("End").Call(jen.Id(m))
	default:
		g.Comment(fmt.Sprintf("%s cannot be serialized", t))
	}
}

// decode reads into dst, an assignable expression of type t, from the
// reader named r.
func (c *codecGen) decode(g *jen.Group, r string, dst *jen.Statement, t *ir.Type, depth int) {
	rd := jen.Id(r)
	switch {
	case isTime(t):
		g.Add(dst).Op("=").Add(rd).Dot("Time").Call()
		return
	case isDuration(t):
		g.Add(dst).Op("=").Add(typeCode(t)).Call(jen.Add(rd).Dot("Varint").Call())
		return
	case isBytes(t):
		g.Add(dst).Op("=").Add(rd).Dot("ByteSlice").Call()
		return
	}
	if b := basicOf(t); b != nil {
		method, _ := basicCodec(b)
		read := jen.Add(rd).Dot(method).Call()
		if t.Kind == ir.BasicType && (b.Name == "string" || b.Name == "bool" || b.Name == "int64" || b.Name == "uint64" || b.Name == "float64" || b.Name == "float32") {
			g.Add(dst).Op("=").Add(read)
		} else {
			g.Add(dst).Op("=").Add(typeCode(t)).Call(read)
		}
		return
	}
	if t.Kind == ir.NamedType && t.Struct() != nil {
		g.Id("decode"+c.structName(t)).Call(rd, jen.Op("&").Add(dst))
		return
	}
	u := underlying(t)
	sub := fmt.Sprintf("r%d", depth+1)
	i := fmt.Sprintf("i%d", depth)
	switch u.Kind {
	case ir.StructType:
		g.BlockFunc(func(g *jen.Group) {
			g.Id("r").Op(":=").Add(rd).Dot("Nested").Call()
			c.decodeFields(g, dst, u, depth+1)
		})
	case ir.PointerType:
		g.If(jen.Add(rd).Dot("Bool").Call()).BlockFunc(func(g *jen.Group) {
			g.Add(dst).Op("=").New(typeCode(u.Elem))
			c.decode(g, r, jen.Op("*").Add(dst), u.Elem, depth+1)
		})
	case ir.SliceType:
		g.BlockFunc(func(g *jen.Group) {
			g.Id(sub).Op(":=").Add(rd).Dot("Nested").Call()
			g.Add(dst).Op("=").Make(typeCode(t), jen.Id(sub).Dot("Count").Call())
			g.For(jen.Id(i).Op(":=").Range().Add(dst)).BlockFunc(func(g *jen.Group) {
				c.decode(g, sub, jen.Add(dst).Index(jen.Id(i)), u.Elem, depth+1)
			})
		})
	case ir.ArrayType:
		g.BlockFunc(func(g *jen.Group) {
			g.Id(sub).Op(":=").Add(rd).Dot("Nested").Call()
			n := fmt.Sprintf("n%d", depth)
			g.Id(n).Op(":=").Id(sub).Dot("Count").Call()
			g.For(jen.Id(i).Op(":=").Lit(0), jen.Id(i).Op("<").Id(n).Op("&&").Id(i).Op("<").Len(dst), jen.Id(i).Op("++")).BlockFunc(func(g *jen.Group) {
				c.decode(g, sub, jen.Add(dst).Index(jen.Id(i)), u.Elem, depth+1)
			})
		})
	case ir.MapType:
		g.BlockFunc(func(g *jen.Group) {
			g.Id(sub).Op(":=").Add(rd).Dot("Nested").Call()
			n := fmt.Sprintf("n%d", depth)
			k, v := fmt.Sprintf("k%d", depth), fmt.Sprintf("v%d", depth)
			g.Id(n).Op(":=").Id(sub).Dot("Count").Call()
			g.Add(dst).Op("=").Make(typeCode(t), jen.Id(n))
			g.For(jen.Id(i).Op(":=").Lit(0), jen.Id(i).Op("<").Id(n).Op("&&").Id(sub).Dot("More").Call(), jen.Id(i).Op("++")).BlockFunc(func(g *jen.Group) {
				g.Var().Id(k).Add(typeCode(u.Key))
				g.Var().Id(v).Add(typeCode(u.Elem))
				c.decode(g, sub, jen.Id(k), u.Key, depth+1)
				c.decode(g, sub, jen.Id(v), u.Elem, depth+1)
				g.Add(dst).Index(jen.Id(k)).Op("=").Id(v)
			})
		})
	default:
		g.Add(rd).Dot("Fail").Call(jen.Lit(fmt.Sprintf("%s cannot be deserialized", t)))
	}
}

// basicCodec returns the codec method of a basic type and the type the
// value is converted to for it.
func basicCodec(b *ir.Type) (method, conv string) {
	switch b.Name {
	case "bool":
		return "Bool", "bool"
	case "string":
		return "String", "string"
	case "float64":
		return "Float64", "float64"
	case "float32":
		return "Float32", "float32"
	case "int", "int8", "int16", "int32", "int64", "rune":
		return "Varint", "int64"
	}
	return "Uvarint", "uint64"
}

func convert(x *jen.Statement, t *ir.Type, to string) jen.Code {
	if t.Kind == ir.BasicType && t.Name == to {
		return x
	}
	return jen.Id(to).Call(x)
}

// schema describes a type with its field ids, as recorded in checkpoints:
// what a later version of the program reads the state against.
func schema(t *ir.Type) string {
	var b strings.Builder
	writeSchema(&b, t, map[string]bool{})
	return b.String()
}

func writeSchema(b *strings.Builder, t *ir.Type, seen map[string]bool) {
	switch {
	case t.Kind == ir.NamedType:
		b.WriteString(t.PkgPath + "." + t.Name)
		if isTime(t) || isDuration(t) || t.Underlying == nil || seen[typeKey(t)] {
			return
		}
		seen[typeKey(t)] = true
		if t.Underlying.Kind == ir.StructType {
			writeSchema(b, t.Underlying, seen)
		} else {
			b.WriteByte('(')
			writeSchema(b, t.Underlying, seen)
			b.WriteByte(')')
		}
	case t.Kind == ir.StructType:
		b.WriteByte('{')
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(b, "%d %s ", i+1, f.Name)
			writeSchema(b, f.Type, seen)
		}
		b.WriteByte('}')
	case t.Kind == ir.PointerType:
		b.WriteByte('*')
		writeSchema(b, t.Elem, seen)
	case t.Kind == ir.SliceType:
		b.WriteString("[]")
		writeSchema(b, t.Elem, seen)
	case t.Kind == ir.ArrayType:
		fmt.Fprintf(b, "[%d]", t.Len)
		writeSchema(b, t.Elem, seen)
	case t.Kind == ir.MapType:
		b.WriteString("map[")
		writeSchema(b, t.Key, seen)
		b.WriteByte(']')
		writeSchema(b, t.Elem, seen)
	default:
		b.WriteString(t.String())
	}
}
