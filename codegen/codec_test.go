package codegen

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/ir"
	"github.com/pipegen/pipegen/runtime/codec"
)

// IR types, as the front end builds them. Named types here have no
// package: their declarations go in the file under test (see decls).
func basic(name string) *ir.Type { return &ir.Type{Kind: ir.BasicType, Name: name} }
func named(name string, u *ir.Type) *ir.Type {
	return &ir.Type{Kind: ir.NamedType, Name: name, Underlying: u}
}

// ref is a reference to a named type inside its own definition, which the
// front end leaves unexpanded.
func ref(name string) *ir.Type    { return &ir.Type{Kind: ir.NamedType, Name: name} }
func ptrTo(e *ir.Type) *ir.Type   { return &ir.Type{Kind: ir.PointerType, Elem: e} }
func sliceOf(e *ir.Type) *ir.Type { return &ir.Type{Kind: ir.SliceType, Elem: e} }
func arrayOf(n int64, e *ir.Type) *ir.Type {
	return &ir.Type{Kind: ir.ArrayType, Len: n, Elem: e}
}
func mapOf(k, e *ir.Type) *ir.Type { return &ir.Type{Kind: ir.MapType, Key: k, Elem: e} }

// structOf takes name, type pairs.
func structOf(fields ...any) *ir.Type {
	t := &ir.Type{Kind: ir.StructType}
	for i := 0; i < len(fields); i += 2 {
		t.Fields = append(t.Fields, ir.Field{Name: fields[i].(string), Type: fields[i+1].(*ir.Type), Exported: true})
	}
	return t
}

var (
	tInt      = basic("int")
	tString   = basic("string")
	tFloat64  = basic("float64")
	tTime     = &ir.Type{Kind: ir.NamedType, PkgPath: "time", PkgName: "time", Name: "Time"}
	tDuration = &ir.Type{Kind: ir.NamedType, PkgPath: "time", PkgName: "time", Name: "Duration"}
)

// emitEntry emits the serializers of one keyed state's entries, as
// keyedFuncs does, and returns the formatted file with decls (Go
// declarations of the named types) appended.
func emitEntry(t *testing.T, decls string, key, val *ir.Type) string {
	t.Helper()
	f := jen.NewFilePathName("example.com/state", "main")
	f.NoFormat = true
	cg := newCodecGen(f, newGen(&ir.Pipeline{Name: "test"}, Options{}))
	f.Func().Id("encodeTestEntry").Params(jen.Id("w").Op("*").Qual(codecPath, "Writer"), jen.Id("k").Add(typeCode(key)), jen.Id("v").Op("*").Add(typeCode(val))).BlockFunc(func(b *jen.Group) {
		cg.encode(b, jen.Id("k"), key, 0)
		cg.encodePtr(b, jen.Id("v"), val)
	})
	f.Func().Id("decodeTestEntry").Params(jen.Id("r").Op("*").Qual(codecPath, "Reader")).Params(typeCode(key), jen.Op("*").Add(typeCode(val))).BlockFunc(func(b *jen.Group) {
		b.Var().Id("k").Add(typeCode(key))
		b.Id("v").Op(":=").New(typeCode(val))
		cg.decode(b, "r", jen.Id("k"), key, 0)
		cg.decodePtr(b, jen.Id("v"), val)
		b.Return(jen.Id("k"), jen.Id("v"))
	})
	cg.flush()
	f.Var().Id("_").Qual("time", "Duration") // for decls
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		t.Fatal(err)
	}
	buf.WriteString("\n" + decls + "\n")
	src, err := format.Source(buf.Bytes())
	if err != nil {
		t.Fatalf("the generated code does not parse: %v\n%s", err, numbered(buf.String()))
	}
	return string(src)
}

func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		fmt.Fprintf(&b, "%4d\t%s\n", i+1, l)
	}
	return b.String()
}

// typeCheck type-checks a generated file of package main, with
// runtime/codec read from source.
func typeCheck(t *testing.T, src string) {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "pipeline.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: testImporter{fset}}
	if _, err := conf.Check("main", fset, []*ast.File{file}, nil); err != nil {
		t.Fatalf("the generated code does not type-check: %v\n%s", err, numbered(src))
	}
}

type testImporter struct{ fset *token.FileSet }

var (
	stdImporter = sync.OnceValue(importer.Default)
	codecPkg    = sync.OnceValues(func() (*types.Package, error) {
		dir := filepath.Join("..", "runtime", "codec")
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		fset := token.NewFileSet()
		var files []*ast.File
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
		}
		conf := types.Config{Importer: stdImporter()}
		return conf.Check(codecPath, fset, files, nil)
	})
)

func (im testImporter) Import(path string) (*types.Package, error) {
	if path == codecPath {
		return codecPkg()
	}
	return stdImporter().Import(path)
}

// The types of TestCodecEveryKind, in IR and in Go.
var (
	tCelsius = named("Celsius", tFloat64)
	tInner   = named("Inner", structOf("Name", tString, "N", basic("int32"), "Ratio", basic("float32")))
	tPInt    = named("PInt", ptrTo(tInt))
	tBlob    = named("Blob", sliceOf(basic("byte")))
	tTimeout = named("Timeout", basic("int64"))
	tNode    = named("Node", structOf("Name", tString, "Kids", sliceOf(ref("Node")), "Next", ptrTo(ref("Node"))))
	tTree    = named("Tree", sliceOf(ref("Tree")))
	tTrie    = named("Trie", mapOf(basic("rune"), ref("Trie")))
	tLoop    = named("Loop", ptrTo(ref("Loop")))
	// A and B refer to each other.
	tA = named("A", structOf("B", ptrTo(named("B", structOf("As", sliceOf(ref("A")))))))
)

const everyKindDecls = `
type Celsius float64
type Inner struct {
	Name  string
	N     int32
	Ratio float32
}
type PInt *int
type Blob []byte
type Timeout int64
type Node struct {
	Name string
	Kids []Node
	Next *Node
}
type Tree []Tree
type Trie map[rune]Trie
type Loop *Loop
type A struct{ B *B }
type B struct{ As []A }
type Key struct {
	Region string
	Shard  int
}
type Every struct {
	B      bool
	I8     int8
	U      uint
	U64    uint64
	F32    float32
	F64    float64
	C      Celsius
	S      string
	Bytes  []byte
	Blob   Blob
	U8s    []uint8
	T      time.Time
	D      time.Duration
	TO     Timeout
	PT     *time.Time
	Arr1   [3]float32
	Arr2   [2][2]int8
	_      int
	Anon   struct {
		X int
		Y *string
		Z [2]int
	}
	Inner
	PInner  *Inner
	PP      **int
	PPP     ***string
	PI      PInt
	PS      *[]int
	PM      *map[string]int
	PA      *[2]int
	PAnon   *struct{ X int }
	Items   []Inner
	PItems  []*Inner
	Nested  [][]*[]map[string]*int
	ByArr   map[[2]int]string
	ByAnon  map[struct{ A int }][]string
	ByID    map[int64]*Inner
	Times   map[string]time.Time
	Durs    []time.Duration
	Node    Node
	Tree    Tree
	Trie    Trie
	Loop    Loop
	A       A
}
`

var tEvery = named("Every", structOf(
	"B", basic("bool"), "I8", basic("int8"), "U", basic("uint"), "U64", basic("uint64"),
	"F32", basic("float32"), "F64", tFloat64, "C", tCelsius, "S", tString,
	"Bytes", sliceOf(basic("byte")), "Blob", tBlob, "U8s", sliceOf(basic("uint8")),
	"T", tTime, "D", tDuration, "TO", tTimeout, "PT", ptrTo(tTime),
	"Arr1", arrayOf(3, basic("float32")), "Arr2", arrayOf(2, arrayOf(2, basic("int8"))),
	"_", tInt,
	"Anon", structOf("X", tInt, "Y", ptrTo(tString), "Z", arrayOf(2, tInt)),
	"Inner", tInner, "PInner", ptrTo(tInner),
	"PP", ptrTo(ptrTo(tInt)), "PPP", ptrTo(ptrTo(ptrTo(tString))), "PI", tPInt,
	"PS", ptrTo(sliceOf(tInt)), "PM", ptrTo(mapOf(tString, tInt)), "PA", ptrTo(arrayOf(2, tInt)),
	"PAnon", ptrTo(structOf("X", tInt)),
	"Items", sliceOf(tInner), "PItems", sliceOf(ptrTo(tInner)),
	"Nested", sliceOf(sliceOf(ptrTo(sliceOf(mapOf(tString, ptrTo(tInt)))))),
	"ByArr", mapOf(arrayOf(2, tInt), tString), "ByAnon", mapOf(structOf("A", tInt), sliceOf(tString)),
	"ByID", mapOf(basic("int64"), ptrTo(tInner)),
	"Times", mapOf(tString, tTime), "Durs", sliceOf(tDuration),
	"Node", tNode, "Tree", tTree, "Trie", tTrie, "Loop", tLoop, "A", tA,
))

var tKey = named("Key", structOf("Region", tString, "Shard", tInt))

// TestCodecEveryKind: the serializers of a struct with a field of every
// kind the state accepts type-check.
func TestCodecEveryKind(t *testing.T) {
	src := emitEntry(t, everyKindDecls, tKey, tEvery)
	typeCheck(t, src)
	for _, bad := range []string{"cannot be serialized", "cannot be deserialized", "&*", "w.Tag(18,", "case 18:"} {
		if strings.Contains(src, bad) {
			t.Errorf("the generated code has %q:\n%s", bad, numbered(src))
		}
	}
	for _, want := range []string{
		// One function per named struct and per type that contains itself.
		"func encodeEvery(w *codec.Writer, v *Every)", "func decodeEvery(in *codec.Reader, v *Every) {\n\tvar fields codec.Reader\n\tin.NestedTo(&fields)\n\tr := &fields\n",
		"func encodeInner(", "func encodeNode(", "func encodeTree(", "func encodeTrie(", "func encodeLoop(",
		"func encodeA(", "func encodeB(", "func encodeKey(",
		// Floats are left out when their bits are zero: -0 is written.
		"if math.Float64bits(float64(v.C)) != 0 {", "if math.Float32bits(v.F32) != 0 {",
		// A pointer field is its pointee; the pointee of a pointer to a
		// slice is indexed in parentheses.
		"w.Tag(15, codec.Bytes)\n\t\tw.Time(*v.PT)", "w.Tag(21, codec.Bytes)\n\t\tencodeInner(w, v.PInner)",
		"w.Tag(24, codec.Varint)\n\t\tw.Varint(int64(*v.PI))", "(*v.PS)[i0]", "(*v.PM)[k0] = v0",
		// A pointer to a pointer needs a frame.
		"if v.PP != nil {\n\t\tw.Tag(22, codec.Bytes)\n\t\tm0 := w.Begin()",
		// The blank field keeps its id, and is left out.
		"w.Tag(17, codec.Bytes)", "w.Tag(19, codec.Bytes)",
		// A type that nests without bound is not sized by its counts.
		"*v = make(Trie)\n", "v.Kids = make([]Node, 0)\n", "*v = make(Tree, 0)\n",
		"v.Items = make([]Inner, r1.Count())",
		// Integers narrower than 64 bits, and ints, are read with a
		// check of their range; 64-bit ones need none.
		"v.I8 = codec.Int[int8](r)", "v.U = codec.Uint[uint](r)", "v.U64 = r.Uvarint()", "v.TO = Timeout(r.Varint())",
		"*v.PI = codec.Int[int](r)", "v.Arr2[i0][i1] = codec.Int[int8](r2)", "k0 = codec.Int[rune](r1)",
		// The encoder of a type that can hold itself stops a cycle.
		"func encodeNode(w *codec.Writer, v *Node) {\n\t// A Node can hold itself: Enter fails the writer on a cycle.\n\tif !w.Enter(\"Node\") {\n\t\treturn\n\t}\n",
	} {
		if !strings.Contains(src, want) {
			t.Errorf("the generated code lacks %q:\n%s", want, numbered(src))
		}
	}
	// Those are the types whose values can form a cycle: A and B through
	// each other; Every holds a Node, but no Every.
	for _, typ := range []string{"Every", "Inner", "Key", "Node", "Tree", "Trie", "Loop", "A", "B"} {
		body := src[strings.Index(src, "func encode"+typ+"("):]
		body = body[:strings.Index(body, "\n}\n")]
		if got, want := strings.Contains(body, "w.Enter("), !slices.Contains([]string{"Every", "Inner", "Key"}, typ); got != want {
			t.Errorf("encode%s calls Enter: %t, want %t:\n%s", typ, got, want, body)
		}
	}
}

// TestCodecEntryScopes: an entry whose key and value both declare
// variables, inline, and values that are not structs.
func TestCodecEntryScopes(t *testing.T) {
	for _, c := range []struct {
		name     string
		key, val *ir.Type
	}{
		{"array key, slice value", arrayOf(2, tInt), sliceOf(tInt)},
		{"anonymous struct key, map value", structOf("A", tString, "B", arrayOf(2, tInt)), mapOf(tString, sliceOf(tInt))},
		{"string key, pointer value", tString, ptrTo(ptrTo(tInt))},
		{"int key, array of structs", tInt, arrayOf(3, structOf("X", tInt, "Y", arrayOf(2, tInt), "Z", arrayOf(2, tInt)))},
		{"time key, time value", tTime, tTime},
		{"named float key, duration value", tCelsius, tDuration},
		{"key, recursive slice value", tKey, tTree},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := emitEntry(t, everyKindDecls, c.key, c.val)
			typeCheck(t, src)
		})
	}
}

// TestCodecFuncNames: named types that share a name, or whose functions
// would meet another name of the file (a type CountsEntry and the entry
// functions of node counts), get functions of their own names.
func TestCodecFuncNames(t *testing.T) {
	g := newGen(&ir.Pipeline{Name: "test"}, Options{})
	cg := newCodecGen(jen.NewFile("main"), g)
	entry := g.names.name(nameKey{pattern: "encode%sEntry", of: "counts"}, "encodeCountsEntry")
	got := []string{
		entry,
		cg.encodeFunc(&ir.Type{Kind: ir.NamedType, PkgPath: "a", Name: "Item", Underlying: structOf()}),
		cg.encodeFunc(&ir.Type{Kind: ir.NamedType, PkgPath: "b", Name: "Item", Underlying: structOf()}),
		cg.encodeFunc(&ir.Type{Kind: ir.NamedType, PkgPath: "a", Name: "Item", Underlying: structOf()}),
		cg.encodeFunc(&ir.Type{Kind: ir.NamedType, PkgPath: "a", Name: "CountsEntry", Underlying: structOf()}),
		cg.decodeFunc(&ir.Type{Kind: ir.NamedType, PkgPath: "a", Name: "CountsEntry", Underlying: structOf()}),
		cg.encodeFunc(&ir.Type{Kind: ir.NamedType, PkgPath: "a", Name: "item", Underlying: structOf()}),
	}
	want := []string{"encodeCountsEntry", "encodeItem", "encodeItem2", "encodeItem", "encodeCountsEntry2", "decodeCountsEntry", "encodeItem3"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("function names %v, want %v", got, want)
	}
}

func TestSchema(t *testing.T) {
	user := func(name string, u *ir.Type) *ir.Type {
		return &ir.Type{Kind: ir.NamedType, PkgPath: "example.com/u", PkgName: "u", Name: name, Underlying: u}
	}
	inner := user("Inner", structOf("N", tInt))
	node := user("Node", structOf("Kids", sliceOf(&ir.Type{Kind: ir.NamedType, PkgPath: "example.com/u", Name: "Node"})))
	for _, c := range []struct {
		t    *ir.Type
		want string
	}{
		{tString, "string"},
		{basic("byte"), "byte"},
		{tTime, "time.Time"},
		{tDuration, "time.Duration"},
		{user("Celsius", tFloat64), "example.com/u.Celsius(float64)"},
		{inner, "example.com/u.Inner{1 N int}"},
		{structOf("A", ptrTo(inner), "B", sliceOf(inner), "C", mapOf(tString, arrayOf(3, inner))),
			"{1 A *example.com/u.Inner{1 N int}; 2 B []example.com/u.Inner; 3 C map[string][3]example.com/u.Inner}"},
		{structOf("_", tInt, "T", tTime), "{1 _ int; 2 T time.Time}"},
		{node, "example.com/u.Node{1 Kids []example.com/u.Node}"},
		{user("Tags", sliceOf(user("Label", tString))), "example.com/u.Tags([]example.com/u.Label(string))"},
		{mapOf(arrayOf(2, tInt), ptrTo(ptrTo(tDuration))), "map[[2]int]**time.Duration"},
	} {
		if got := schema(c.t); got != c.want {
			t.Errorf("schema(%s) = %q, want %q", c.t, got, c.want)
		}
	}
}

// TestShortLen checks the bound that lets an encoder end a value with
// EndShort: the most bytes a value takes, and none for types without one.
func TestShortLen(t *testing.T) {
	int64s := func(n int) *ir.Type {
		var fields []any
		for i := range n {
			fields = append(fields, fmt.Sprintf("F%d", i), basic("int64"))
		}
		return structOf(fields...)
	}
	for _, c := range []struct {
		name string
		t    *ir.Type
		want int // 0: no bound
	}{
		{"count", named("Count", structOf("N", basic("int64"))), 1 + 1 + 10},
		{"narrow ints", structOf("A", basic("int8"), "B", basic("uint16"), "C", basic("int32"), "D", basic("bool")), 1 + 1 + 2 + 1 + 3 + 1 + 5 + 1 + 1},
		{"floats", structOf("A", tFloat64, "B", basic("float32")), 1 + 1 + 8 + 1 + 4},
		{"time and duration", structOf("At", tTime, "Every", tDuration), 1 + 1 + 16 + 1 + 10},
		{"array", arrayOf(3, basic("int8")), 1 + 1 + 3*2},
		{"nested", structOf("In", named("In", structOf("N", tInt))), 1 + 1 + 12},
		// Up to 127 bytes inside the length: eleven int64 fields
		// (121) fit, twelve (132) do not.
		{"eleven int64s", int64s(11), 1 + 11*11},
		{"twelve int64s", int64s(12), 0},
		{"string", structOf("S", tString), 0},
		{"pointer", structOf("P", ptrTo(tInt)), 0},
		{"slice", structOf("S", sliceOf(tInt)), 0},
		// Not a valid Go type (it would be infinite), but one that
		// shows shortLen stops at a type inside itself.
		{"holds itself", named("Node", structOf("Next", arrayOf(1, ref("Node")))), 0},
	} {
		cg := newCodecGen(jen.NewFile("main"), newGen(&ir.Pipeline{Name: "test"}, Options{}))
		n, ok := cg.shortLen(c.t)
		if !ok {
			n = 0
		}
		if n != c.want {
			t.Errorf("%s: shortLen = %d, %v; want %d", c.name, n, ok, c.want)
		}
	}
	var fields []any
	for i := range 16 {
		fields = append(fields, fmt.Sprintf("F%d", i), basic("bool"))
	}
	cg := newCodecGen(jen.NewFile("main"), newGen(&ir.Pipeline{Name: "test"}, Options{}))
	if n, _ := cg.shortLen(structOf(fields...)); n != 1+15*2+3 {
		t.Errorf("sixteen bools: shortLen = %d; want %d (field 16's tag is two bytes)", n, 1+15*2+3)
	}
}

// TestMaxShort keeps the compiler's bound equal to the runtime's.
func TestMaxShort(t *testing.T) {
	if maxShort != codec.MaxShort {
		t.Fatalf("codegen's maxShort is %d, runtime/codec's MaxShort %d", maxShort, codec.MaxShort)
	}
}
