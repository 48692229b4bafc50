package codegen

import (
	"encoding/binary"
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
//
// Every named struct type, and every named type that contains itself (a
// tree of pointers, a slice of its own type), gets an encode and a decode
// function; everything else is written inline, where it is used. Inline
// code names its variables by nesting depth: m0 marks the value that
// Begin started at depth 0, r1 reads it, i0, k0 and v0 walk it.

const codecPath = "github.com/pipegen/pipegen/runtime/codec"

// codecGen emits serializers and remembers the ones emitted, so that each
// named type gets one encode and one decode function.
type codecGen struct {
	f *jen.File
	g *gen
	// queued holds the named types whose functions are emitted or queued.
	queued map[string]bool
	// types maps a named type to its expanded description: the IR leaves
	// the type's references to itself unexpanded (Underlying nil).
	types map[string]*ir.Type
	// derefs maps the expressions *p that deref made to p.
	derefs map[*jen.Statement]*jen.Statement
	// queue holds named types whose functions are still to emit.
	queue []*ir.Type
}

func newCodecGen(f *jen.File, g *gen) *codecGen {
	return &codecGen{f: f, g: g, queued: map[string]bool{}, types: map[string]*ir.Type{}, derefs: map[*jen.Statement]*jen.Statement{}}
}

func typeKey(t *ir.Type) string {
	if len(t.TypeArgs) > 0 {
		return t.PkgPath + "." + t.Name + "[" + t.TypeArgs[0].String() + "]"
	}
	return t.PkgPath + "." + t.Name
}

// resolve returns t, or the expanded type when t is a reference to a
// recursive type inside its own definition. The expansion comes first
// (the reference is inside it), and resolve remembers it.
func (c *codecGen) resolve(t *ir.Type) *ir.Type {
	if t.Kind != ir.NamedType || isTime(t) || isDuration(t) {
		return t
	}
	if t.Underlying != nil {
		if _, ok := c.types[typeKey(t)]; !ok {
			c.types[typeKey(t)] = t
		}
		return t
	}
	if full, ok := c.types[typeKey(t)]; ok {
		return full
	}
	return t
}

// under is t's structure: its underlying type, through defined types
// (time.Time and time.Duration are values of their own).
func (c *codecGen) under(t *ir.Type) *ir.Type {
	t = c.resolve(t)
	for t.Kind == ir.NamedType && t.Underlying != nil && !isTime(t) && !isDuration(t) {
		t = c.resolve(t.Underlying)
	}
	return t
}

// hasFunc reports whether values of t are written by functions of their
// own: named structs, and named types that contain themselves.
func (c *codecGen) hasFunc(t *ir.Type) bool {
	t = c.resolve(t)
	if t.Kind != ir.NamedType || t.Underlying == nil || isTime(t) || isDuration(t) {
		return false
	}
	return t.Underlying.Kind == ir.StructType || containsRef(t.Underlying, typeKey(t))
}

// containsRef reports whether t refers to the named type key without
// expanding it: whether the type containing t is recursive.
func containsRef(t *ir.Type, key string) bool {
	if t == nil {
		return false
	}
	if t.Kind == ir.NamedType {
		return t.Underlying == nil && typeKey(t) == key || containsRef(t.Underlying, key)
	}
	if containsRef(t.Elem, key) || containsRef(t.Key, key) {
		return true
	}
	for _, f := range t.Fields {
		if containsRef(f.Type, key) {
			return true
		}
	}
	return false
}

// holdsItself reports whether a value of the named type t can hold another
// t, through any types: whether its values can form a cycle (x.Next = x),
// on which its encoder would call itself without end.
func (c *codecGen) holdsItself(t *ir.Type) bool {
	key := typeKey(t)
	seen := map[string]bool{}
	var reaches func(u *ir.Type) bool
	reaches = func(u *ir.Type) bool {
		if u == nil {
			return false
		}
		if u.Kind == ir.NamedType {
			if isTime(u) || isDuration(u) || seen[typeKey(u)] {
				return false
			}
			if typeKey(u) == key {
				return true
			}
			seen[typeKey(u)] = true
			if u = c.resolve(u); u.Underlying == nil {
				return true // a reference not yet expanded: surely a cycle, maybe t's
			}
			return reaches(u.Underlying)
		}
		if reaches(u.Elem) || reaches(u.Key) {
			return true
		}
		for _, f := range u.Fields {
			if reaches(f.Type) {
				return true
			}
		}
		return false
	}
	return reaches(c.resolve(t).Underlying)
}

// nests reports whether values of t can nest without bound: whether t is
// or contains a reference to a type that contains itself.
func nests(t *ir.Type) bool {
	return nestsIn(t, map[string]bool{})
}

func nestsIn(t *ir.Type, seen map[string]bool) bool {
	if t == nil {
		return false
	}
	if t.Kind == ir.NamedType {
		if isTime(t) || isDuration(t) || seen[typeKey(t)] {
			return false
		}
		if t.Underlying == nil {
			return true // a reference to a type being defined
		}
		seen[typeKey(t)] = true
		return nestsIn(t.Underlying, seen)
	}
	if nestsIn(t.Elem, seen) || nestsIn(t.Key, seen) {
		return true
	}
	for _, f := range t.Fields {
		if nestsIn(f.Type, seen) {
			return true
		}
	}
	return false
}

// shortLen is the most bytes that the encoding of a value of t takes, its
// length included, and whether that is known and small enough that every
// length in it is one byte (maxShort or less): then its encoder ends
// it with EndShort, which is inlined, rather than End. It is known for
// numbers, bools, times and durations, and structs and arrays of them;
// not for strings, slices, maps, pointers, or a type that holds itself.
func (c *codecGen) shortLen(t *ir.Type) (int, bool) {
	return c.shortLenIn(t, map[string]bool{})
}

func (c *codecGen) shortLenIn(t *ir.Type, path map[string]bool) (int, bool) {
	switch {
	case isTime(t):
		return 1 + 10 + 5, true // codec.Writer.Time: its length, the seconds and the nanoseconds
	case isDuration(t):
		return binary.MaxVarintLen64, true
	}
	t = c.resolve(t)
	if b := basicOf(t); b != nil {
		return basicMaxLen(b.Name)
	}
	if t.Kind == ir.NamedType {
		key := typeKey(t)
		if t.Underlying == nil || path[key] {
			return 0, false
		}
		path[key] = true
		defer delete(path, key)
	}
	var n int
	switch u := c.under(t); u.Kind {
	case ir.StructType:
		for i, f := range u.Fields {
			if f.Name == "_" || isMapState(f.Type) {
				continue // not written (encodeFields)
			}
			if c.under(f.Type).Kind == ir.PointerType {
				return 0, false
			}
			v, ok := c.shortLenIn(f.Type, path)
			if !ok {
				return 0, false
			}
			n += uvarintLen(uint64(i+1)<<3) + v
		}
	case ir.ArrayType:
		v, ok := c.shortLenIn(u.Elem, path)
		if !ok {
			return 0, false
		}
		n = uvarintLen(uint64(u.Len)) + int(u.Len)*v
	default:
		return 0, false
	}
	return 1 + n, n <= maxShort
}

// maxShort is codec.MaxShort, the longest value codec.Writer.EndShort
// ends (the compiler does not import the runtime's codec).
const maxShort = 0x7f

// basicMaxLen is the most bytes a value of the basic type named name takes
// (basicCodec's encoding), and false for a string, which has no bound.
func basicMaxLen(name string) (int, bool) {
	bits := 64
	switch name {
	case "bool":
		return 1, true
	case "float64":
		return 8, true
	case "float32":
		return 4, true
	case "string":
		return 0, false
	case "int8", "uint8", "byte":
		bits = 8
	case "int16", "uint16":
		bits = 16
	case "int32", "uint32", "rune":
		bits = 32
	}
	// A varint holds 7 bits a byte; zigzag keeps a signed value's width.
	return (bits + 6) / 7, true
}

func uvarintLen(x uint64) int {
	return len(binary.AppendUvarint(nil, x))
}

// endMethod is the codec.Writer method that ends a value of t that begins
// with Begin: EndShort when it is short (shortLen), else End.
func (c *codecGen) endMethod(t *ir.Type) string {
	if _, ok := c.shortLen(t); ok {
		return "EndShort"
	}
	return "End"
}

// encodeFunc and decodeFunc name the functions of a named type (see
// hasFunc), and queue them.
func (c *codecGen) encodeFunc(t *ir.Type) string { return c.funcName("encode%s", t) }
func (c *codecGen) decodeFunc(t *ir.Type) string { return c.funcName("decode%s", t) }

func (c *codecGen) funcName(pattern string, t *ir.Type) string {
	t = c.resolve(t)
	if !c.queued[typeKey(t)] {
		c.queued[typeKey(t)] = true
		c.queue = append(c.queue, t)
	}
	return c.g.names.name(nameKey{pattern: pattern, of: typeKey(t)}, derive(pattern, t.Name))
}

// flush emits the functions of every queued type.
func (c *codecGen) flush() {
	for len(c.queue) > 0 {
		t := c.queue[0]
		c.queue = c.queue[1:]
		v := jen.Id("v")
		encodeDoc, decodeDoc := "%s writes a value of type %s of checkpointed state.", "%s reads a value of type %s."
		encode := func(g *jen.Group) { c.encodeValue(g, c.deref(v), t, c.under(t), 0) }
		decode := func(g *jen.Group) { c.decodeValue(g, "r", c.deref(v), t, c.under(t), 0) }
		param := "r"
		// A struct, field by field; otherwise a type that contains itself,
		// such as type Tree []Tree.
		if st := t.Underlying; st.Kind == ir.StructType {
			encodeDoc = "%s writes a %s of checkpointed state, field by field."
			decodeDoc = "%s reads a %s; fields it does not know are skipped."
			encode = func(g *jen.Group) {
				g.Id("m").Op(":=").Id("w").Dot("Begin").Call()
				c.encodeFields(g, v, st, 0)
				g.Id("w").Dot(c.endMethod(t)).Call(jen.Id("m"))
			}
			// The reader of the fields is a variable of the decoder
			// (in.Nested() would allocate it): it stays on the stack
			// unless a field's decoder nests further.
			param = "in"
			decode = func(g *jen.Group) {
				g.Var().Id("fields").Qual(codecPath, "Reader")
				g.Id("in").Dot("NestedTo").Call(jen.Op("&").Id("fields"))
				g.Id("r").Op(":=").Op("&").Id("fields")
				c.decodeFields(g, "r", v, st, 0)
			}
		}
		name, ts := c.encodeFunc(t), c.g.typeString(t)
		if c.holdsItself(t) {
			body := encode
			encode = func(g *jen.Group) {
				g.Comment(fmt.Sprintf("A %s can hold itself: Enter fails the writer on a cycle.", ts))
				g.If(jen.Op("!").Id("w").Dot("Enter").Call(jen.Lit(ts))).Block(jen.Return())
				body(g)
				g.Id("w").Dot("Leave").Call()
			}
		}
		c.f.Comment(fmt.Sprintf(encodeDoc, name, ts))
		c.f.Func().Id(name).Params(jen.Id("w").Op("*").Qual(codecPath, "Writer"), jen.Id("v").Op("*").Add(typeCode(t))).BlockFunc(encode)
		name = c.decodeFunc(t)
		c.f.Comment(fmt.Sprintf(decodeDoc, name, ts))
		c.f.Func().Id(name).Params(jen.Id(param).Op("*").Qual(codecPath, "Reader"), jen.Id("v").Op("*").Add(typeCode(t))).BlockFunc(decode)
	}
}

func isTime(t *ir.Type) bool {
	return t.Kind == ir.NamedType && t.PkgPath == "time" && t.Name == "Time"
}

func isDuration(t *ir.Type) bool {
	return t.Kind == ir.NamedType && t.PkgPath == "time" && t.Name == "Duration"
}

func (c *codecGen) isBytes(t *ir.Type) bool {
	u := c.under(t)
	return u.Kind == ir.SliceType && u.Elem.Kind == ir.BasicType && (u.Elem.Name == "uint8" || u.Elem.Name == "byte")
}

// framed reports whether a value of t is one value on the wire, as a
// field's value must be: every value is, except a pointer's (a presence
// flag and then the value).
func (c *codecGen) framed(t *ir.Type) bool {
	return c.under(t).Kind != ir.PointerType
}

// codecWireType names the codec.WireType that tags a framed value of t as
// a struct field.
func (c *codecGen) codecWireType(t *ir.Type) string {
	if isTime(t) {
		return "Bytes"
	}
	if b := basicOf(c.resolve(t)); b != nil {
		switch b.Name {
		case "string":
			return "Bytes"
		case "float64":
			return "Fixed64"
		case "float32":
			return "Fixed32"
		}
		return "Varint"
	}
	return "Bytes"
}

// zeroCheck returns the condition under which a field holds a value worth
// writing, or nil when it is always written.
func (c *codecGen) zeroCheck(x *jen.Statement, t *ir.Type) jen.Code {
	switch {
	case isTime(t):
		return jen.Op("!").Add(x).Dot("IsZero").Call()
	case isDuration(t):
		return jen.Add(x).Op("!=").Lit(0)
	}
	if b := basicOf(c.resolve(t)); b != nil {
		switch b.Name {
		case "bool":
			return x
		case "string":
			return jen.Add(x).Op("!=").Lit("")
		case "float64", "float32":
			// By the bits, so that -0 is written and reads back as -0.
			bits := "Float64bits"
			if b.Name == "float32" {
				bits = "Float32bits"
			}
			return jen.Qual("math", bits).Call(convert(x, c.resolve(t), b.Name)).Op("!=").Lit(0)
		}
		return jen.Add(x).Op("!=").Lit(0)
	}
	switch c.under(t).Kind {
	case ir.SliceType, ir.MapType:
		return jen.Len(x).Op(">").Lit(0)
	case ir.PointerType:
		return jen.Add(x).Op("!=").Nil()
	}
	return nil
}

// declares reports whether the inline code of a value of t declares
// variables in the scope it is emitted in: two such values in one scope
// need a block each.
func (c *codecGen) declares(t *ir.Type) bool {
	if c.hasFunc(t) || isTime(t) || isDuration(t) || c.isBytes(t) || basicOf(c.resolve(t)) != nil {
		return false
	}
	switch c.under(t).Kind {
	case ir.StructType, ir.SliceType, ir.ArrayType, ir.MapType:
		return true
	}
	return false
}

// deref returns *p. Where the result is indexed or selected from, operand
// puts it in parentheses; addr turns it back into p.
func (c *codecGen) deref(p *jen.Statement) *jen.Statement {
	x := jen.Op("*").Add(p)
	c.derefs[x] = p
	return x
}

// operand returns x ready to be indexed or selected from.
func (c *codecGen) operand(x *jen.Statement) *jen.Statement {
	if c.derefs[x] != nil {
		return jen.Parens(x)
	}
	return jen.Add(x)
}

// addr returns &x.
func (c *codecGen) addr(x *jen.Statement) *jen.Statement {
	if p := c.derefs[x]; p != nil {
		return jen.Add(p)
	}
	return jen.Op("&").Add(x)
}

func (c *codecGen) encodeFields(g *jen.Group, v *jen.Statement, st *ir.Type, depth int) {
	for i, f := range st.Fields {
		if f.Name == "_" || isMapState(f.Type) {
			continue // a blank field holds nothing, a map state's entries are state of their own; its id stays taken
		}
		x := c.operand(v).Dot(f.Name)
		tag := func(wt string) jen.Code {
			return jen.Id("w").Dot("Tag").Call(jen.Lit(i+1), jen.Qual(codecPath, wt))
		}
		u := c.under(f.Type)
		switch {
		case u.Kind == ir.PointerType && c.framed(u.Elem):
			// A nil pointer field is left out; a set one is its value.
			g.If(jen.Add(x).Op("!=").Nil()).BlockFunc(func(g *jen.Group) {
				g.Add(tag(c.codecWireType(u.Elem)))
				c.encodeThrough(g, x, u.Elem, depth)
			})
		case u.Kind == ir.PointerType:
			// A pointer to a pointer: the presence flags of the inner
			// pointers need a frame, to be one value.
			g.If(jen.Add(x).Op("!=").Nil()).BlockFunc(func(g *jen.Group) {
				g.Add(tag("Bytes"))
				m := fmt.Sprintf("m%d", depth)
				g.Id(m).Op(":=").Id("w").Dot("Begin").Call()
				c.encode(g, c.deref(x), u.Elem, depth+1)
				g.Id("w").Dot("End").Call(jen.Id(m))
			})
		default:
			cond := c.zeroCheck(x, f.Type)
			switch {
			case cond != nil:
				g.If(cond).BlockFunc(func(g *jen.Group) {
					g.Add(tag(c.codecWireType(f.Type)))
					c.encode(g, x, f.Type, depth)
				})
			case c.declares(f.Type):
				g.Add(tag(c.codecWireType(f.Type)))
				g.BlockFunc(func(g *jen.Group) { c.encode(g, x, f.Type, depth) })
			default:
				g.Add(tag(c.codecWireType(f.Type)))
				c.encode(g, x, f.Type, depth)
			}
		}
	}
}

// decodeFields reads the fields of struct st from the reader named r, a
// reader of the struct's bytes, into v.
func (c *codecGen) decodeFields(g *jen.Group, r string, v *jen.Statement, st *ir.Type, depth int) {
	rd := jen.Id(r)
	g.For(jen.Add(rd).Dot("More").Call()).BlockFunc(func(g *jen.Group) {
		g.List(jen.Id("id"), jen.Id("wt")).Op(":=").Add(rd).Dot("Tag").Call()
		g.Switch(jen.Id("id")).BlockFunc(func(g *jen.Group) {
			for i, f := range st.Fields {
				if f.Name == "_" || isMapState(f.Type) {
					continue
				}
				x := c.operand(v).Dot(f.Name)
				want := func(wt string, body func(g *jen.Group)) {
					g.Case(jen.Lit(i + 1)).Block(
						jen.If(jen.Add(rd).Dot("Want").Call(jen.Id("id"), jen.Id("wt"), jen.Qual(codecPath, wt))).BlockFunc(body),
					)
				}
				u := c.under(f.Type)
				switch {
				case u.Kind == ir.PointerType && c.framed(u.Elem):
					want(c.codecWireType(u.Elem), func(g *jen.Group) {
						g.Add(x).Op("=").New(typeCode(u.Elem))
						c.decodeThrough(g, r, x, u.Elem, depth)
					})
				case u.Kind == ir.PointerType:
					want("Bytes", func(g *jen.Group) {
						sub := fmt.Sprintf("r%d", depth+1)
						g.Id(sub).Op(":=").Add(rd).Dot("Nested").Call()
						g.Add(x).Op("=").New(typeCode(u.Elem))
						c.decode(g, sub, c.deref(x), u.Elem, depth+1)
					})
				default:
					want(c.codecWireType(f.Type), func(g *jen.Group) {
						c.decode(g, r, x, f.Type, depth)
					})
				}
			}
			g.Default().Add(rd).Dot("Skip").Call(jen.Id("wt"))
		})
	})
}

// encodePtr writes *p, of type t: the value of an entry.
func (c *codecGen) encodePtr(g *jen.Group, p *jen.Statement, t *ir.Type) {
	c.scoped(g, t, func(g *jen.Group) { c.encodeThrough(g, p, t, 0) })
}

// decodePtr reads *p, of type t, from the reader r: the value of an entry.
func (c *codecGen) decodePtr(g *jen.Group, p *jen.Statement, t *ir.Type) {
	c.scoped(g, t, func(g *jen.Group) { c.decodeThrough(g, "r", p, t, 0) })
}

// scoped emits body in a block of its own when the code of a t declares
// variables: the value of an entry follows its key, and the value of a map
// entry its key, in one scope.
func (c *codecGen) scoped(g *jen.Group, t *ir.Type, body func(g *jen.Group)) {
	if c.declares(t) {
		g.BlockFunc(body)
		return
	}
	body(g)
}

// encodeThrough writes *p, of type t.
func (c *codecGen) encodeThrough(g *jen.Group, p *jen.Statement, t *ir.Type, depth int) {
	if c.hasFunc(t) {
		g.Id(c.encodeFunc(t)).Call(jen.Id("w"), p)
		return
	}
	c.encode(g, c.deref(p), t, depth)
}

// decodeThrough reads *p, of type t, from the reader named r.
func (c *codecGen) decodeThrough(g *jen.Group, r string, p *jen.Statement, t *ir.Type, depth int) {
	if c.hasFunc(t) {
		g.Id(c.decodeFunc(t)).Call(jen.Id(r), p)
		return
	}
	c.decode(g, r, c.deref(p), t, depth)
}

// encode writes x, an addressable value of type t, without a tag. The code
// may declare variables in g's scope (see declares).
func (c *codecGen) encode(g *jen.Group, x *jen.Statement, t *ir.Type, depth int) {
	if c.hasFunc(t) {
		g.Id(c.encodeFunc(t)).Call(jen.Id("w"), c.addr(x))
		return
	}
	c.encodeValue(g, x, t, c.under(t), depth)
}

// encodeValue writes x, of type t whose structure is u.
func (c *codecGen) encodeValue(g *jen.Group, x *jen.Statement, t, u *ir.Type, depth int) {
	w := jen.Id("w")
	switch {
	case isTime(t):
		g.Add(w).Dot("Time").Call(x)
		return
	case isDuration(t):
		g.Add(w).Dot("Varint").Call(jen.Int64().Call(x))
		return
	case c.isBytes(t):
		g.Add(w).Dot("ByteSlice").Call(x)
		return
	}
	if b := basicOf(u); b != nil {
		method, conv := basicCodec(b)
		g.Add(w).Dot(method).Call(convert(x, c.resolve(t), conv))
		return
	}
	i := fmt.Sprintf("i%d", depth)
	m := fmt.Sprintf("m%d", depth)
	switch u.Kind {
	case ir.StructType:
		g.Id(m).Op(":=").Add(w).Dot("Begin").Call()
		c.encodeFields(g, x, u, depth+1)
		g.Add(w).Dot(c.endMethod(t)).Call(jen.Id(m))
	case ir.PointerType:
		g.If(jen.Add(x).Op("==").Nil()).Block(
			jen.Add(w).Dot("Bool").Call(jen.False()),
		).Else().BlockFunc(func(g *jen.Group) {
			g.Add(w).Dot("Bool").Call(jen.True())
			c.encodeThrough(g, x, u.Elem, depth+1)
		})
	case ir.SliceType, ir.ArrayType:
		g.Id(m).Op(":=").Add(w).Dot("Begin").Call()
		g.Add(w).Dot("Uvarint").Call(jen.Uint64().Call(jen.Len(x)))
		g.For(jen.Id(i).Op(":=").Range().Add(x)).BlockFunc(func(g *jen.Group) {
			c.encode(g, c.operand(x).Index(jen.Id(i)), u.Elem, depth+1)
		})
		g.Add(w).Dot(c.endMethod(t)).Call(jen.Id(m))
	case ir.MapType:
		k, v := fmt.Sprintf("k%d", depth), fmt.Sprintf("v%d", depth)
		g.Id(m).Op(":=").Add(w).Dot("Begin").Call()
		g.Add(w).Dot("Uvarint").Call(jen.Uint64().Call(jen.Len(x)))
		g.For(jen.List(jen.Id(k), jen.Id(v)).Op(":=").Range().Add(x)).BlockFunc(func(g *jen.Group) {
			c.scoped(g, u.Key, func(g *jen.Group) { c.encode(g, jen.Id(k), u.Key, depth+1) })
			c.encode(g, jen.Id(v), u.Elem, depth+1)
		})
		g.Add(w).Dot("End").Call(jen.Id(m))
	default:
		g.Comment(fmt.Sprintf("%s cannot be serialized", t))
	}
}

// decode reads into dst, an assignable expression of type t, from the
// reader named r. The code may declare variables in g's scope (see
// declares).
func (c *codecGen) decode(g *jen.Group, r string, dst *jen.Statement, t *ir.Type, depth int) {
	if c.hasFunc(t) {
		g.Id(c.decodeFunc(t)).Call(jen.Id(r), c.addr(dst))
		return
	}
	c.decodeValue(g, r, dst, t, c.under(t), depth)
}

// decodeValue reads dst, of type t whose structure is u.
func (c *codecGen) decodeValue(g *jen.Group, r string, dst *jen.Statement, t, u *ir.Type, depth int) {
	rd := jen.Id(r)
	switch {
	case isTime(t):
		g.Add(dst).Op("=").Add(rd).Dot("Time").Call()
		return
	case isDuration(t):
		g.Add(dst).Op("=").Add(typeCode(t)).Call(jen.Add(rd).Dot("Varint").Call())
		return
	case c.isBytes(t):
		g.Add(dst).Op("=").Add(rd).Dot("ByteSlice").Call()
		return
	}
	if b := basicOf(u); b != nil {
		method, conv := basicCodec(b)
		if read := checkedInt[conv]; read != "" && b.Name != conv {
			// An integer narrower than 64 bits, or an int: Int and Uint
			// refuse a value out of its range rather than truncate it.
			g.Add(dst).Op("=").Qual(codecPath, read).Types(typeCode(t)).Call(rd)
			return
		}
		read := jen.Add(rd).Dot(method).Call()
		if t.Kind == ir.BasicType && b.Name == conv {
			g.Add(dst).Op("=").Add(read)
		} else {
			g.Add(dst).Op("=").Add(typeCode(t)).Call(read)
		}
		return
	}
	sub := fmt.Sprintf("r%d", depth+1)
	i := fmt.Sprintf("i%d", depth)
	n := fmt.Sprintf("n%d", depth)
	switch u.Kind {
	case ir.StructType:
		g.Id(sub).Op(":=").Add(rd).Dot("Nested").Call()
		c.decodeFields(g, sub, dst, u, depth+1)
	case ir.PointerType:
		g.If(jen.Add(rd).Dot("Bool").Call()).BlockFunc(func(g *jen.Group) {
			g.Add(dst).Op("=").New(typeCode(u.Elem))
			c.decodeThrough(g, r, dst, u.Elem, depth+1)
		})
	case ir.SliceType:
		g.Id(sub).Op(":=").Add(rd).Dot("Nested").Call()
		if !nests(u.Elem) {
			g.Add(dst).Op("=").Make(typeCode(t), jen.Id(sub).Dot("Count").Call())
			g.For(jen.Id(i).Op(":=").Range().Add(dst)).BlockFunc(func(g *jen.Group) {
				c.decode(g, sub, c.operand(dst).Index(jen.Id(i)), u.Elem, depth+1)
			})
			return
		}
		// The elements nest without bound, and the count of every level
		// could claim all the bytes that remain: the slice grows with the
		// elements read instead, so that memory stays linear in the input.
		e := fmt.Sprintf("e%d", depth)
		g.Id(n).Op(":=").Id(sub).Dot("Count").Call()
		g.Add(dst).Op("=").Make(typeCode(t), jen.Lit(0))
		g.For(jen.Id(i).Op(":=").Lit(0), jen.Id(i).Op("<").Id(n).Op("&&").Id(sub).Dot("More").Call(), jen.Id(i).Op("++")).BlockFunc(func(g *jen.Group) {
			g.Var().Id(e).Add(typeCode(u.Elem))
			c.decode(g, sub, jen.Id(e), u.Elem, depth+1)
			g.Add(dst).Op("=").Append(dst, jen.Id(e))
		})
	case ir.ArrayType:
		// Elements beyond the array's length (it was longer when written)
		// are ignored; missing ones stay zero.
		g.Id(sub).Op(":=").Add(rd).Dot("Nested").Call()
		g.Id(n).Op(":=").Id(sub).Dot("Count").Call()
		g.For(jen.Id(i).Op(":=").Lit(0), jen.Id(i).Op("<").Id(n).Op("&&").Id(i).Op("<").Len(dst), jen.Id(i).Op("++")).BlockFunc(func(g *jen.Group) {
			c.decode(g, sub, c.operand(dst).Index(jen.Id(i)), u.Elem, depth+1)
		})
	case ir.MapType:
		k, v := fmt.Sprintf("k%d", depth), fmt.Sprintf("v%d", depth)
		g.Id(sub).Op(":=").Add(rd).Dot("Nested").Call()
		g.Id(n).Op(":=").Id(sub).Dot("Count").Call()
		if nests(u.Key) || nests(u.Elem) {
			// Without a size: see the slice above.
			g.Add(dst).Op("=").Make(typeCode(t))
		} else {
			g.Add(dst).Op("=").Make(typeCode(t), jen.Id(n))
		}
		g.For(jen.Id(i).Op(":=").Lit(0), jen.Id(i).Op("<").Id(n).Op("&&").Id(sub).Dot("More").Call(), jen.Id(i).Op("++")).BlockFunc(func(g *jen.Group) {
			g.Var().Id(k).Add(typeCode(u.Key))
			g.Var().Id(v).Add(typeCode(u.Elem))
			c.scoped(g, u.Key, func(g *jen.Group) { c.decode(g, sub, jen.Id(k), u.Key, depth+1) })
			c.decode(g, sub, jen.Id(v), u.Elem, depth+1)
			g.Add(c.operand(dst)).Index(jen.Id(k)).Op("=").Id(v)
		})
	default:
		g.Add(rd).Dot("Fail").Call(jen.Lit(fmt.Sprintf("%s cannot be deserialized", t)))
	}
}

// checkedInt maps the type that basicCodec converts an integer to, to the
// codec function that reads the integer into a narrower type.
var checkedInt = map[string]string{"int64": "Int", "uint64": "Uint"}

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
	case isMapState(t):
		// Its entries are state of their own, of these types.
		b.WriteString("mapstate[")
		writeSchema(b, t.TypeArgs[0], seen)
		b.WriteByte(']')
		writeSchema(b, t.TypeArgs[1], seen)
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
