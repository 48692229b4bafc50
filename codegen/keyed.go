package codegen

import (
	"crypto/sha256"
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/ir"
)

// keyedValue is the type of what a keyed node keeps per key (per key and
// window, for windows): the accumulator, the reduced record, a process
// node's state, or a join's left records.
func (g *gen) keyedValue(n *ir.Node) *ir.Type {
	switch {
	case n.Kind == ir.Join:
		return g.p.Nodes[n.Inputs[0].From].Out
	case n.Kind == ir.Reduce && n.Window != nil:
		return reduceAccType(n.In())
	case n.Trigger != nil:
		return triggerAccType(n.Acc)
	}
	return g.stateValue(n)
}

// stateSchemas are the schemas of a keyed node's key and state, as
// checkpoints record them: a join's state schema is its two sides'.
func (g *gen) stateSchemas(n *ir.Node) (key, value string) {
	value = schema(g.keyedValue(n))
	if n.Kind == ir.Join {
		value += " + " + schema(g.p.Nodes[n.Inputs[1].From].Out)
	}
	if n.StateTTL > 0 {
		// The values carry their write times (runtime/schema's ttl).
		value = "ttl(" + value + ")"
	}
	return schema(n.KeyType), value
}

// fingerprint identifies the job's topology and state: every node's uid,
// kind, connector, format, inputs and state schemas. A checkpoint records
// it; a run whose fingerprint differs checks in detail what changed.
func (g *gen) fingerprint() string {
	h := sha256.New()
	for _, n := range g.p.Nodes {
		fmt.Fprintf(h, "%s %s %s %s %s", n.UID, n.Kind, section(n), n.Connector, n.Format)
		for _, e := range n.Inputs {
			fmt.Fprintf(h, " <%s.%s", g.p.Nodes[e.From].UID, e.Side)
		}
		if n.KeyType != nil {
			key, value := g.stateSchemas(n)
			fmt.Fprintf(h, " [%s] %s", key, value)
		}
		if bc := n.Broadcast; bc != nil {
			fmt.Fprintf(h, " broadcast %s", broadcastSchema(bc))
		}
		h.Write([]byte{'\n'})
	}
	return fmt.Sprintf("%x", h.Sum(nil)[:12])
}

// reduceAccType is runtime.ReduceAcc[T] as an IR type, so that the codec
// generator can write it: a struct of Set bool and V T.
func reduceAccType(t *ir.Type) *ir.Type {
	return &ir.Type{Kind: ir.NamedType, PkgPath: runtimePath, PkgName: "runtime", Name: "ReduceAcc", TypeArgs: []*ir.Type{t},
		Underlying: &ir.Type{Kind: ir.StructType, Fields: []ir.Field{
			{Name: "Set", Type: ir.BoolType, Exported: true},
			{Name: "V", Type: t, Exported: true},
		}}}
}

// keyedFuncs emits, for every keyed node, the hash of its key and the
// serializers of its state: key and value apart (windows, timers and joins
// write them in their own layout), and as an entry for state in a map.
func (g *gen) keyedFuncs(f *jen.File) {
	cg := newCodecGen(f, g)
	w := jen.Id("w").Op("*").Qual(codecPath, "Writer")
	r := jen.Id("r").Op("*").Qual(codecPath, "Reader")
	for _, n := range g.p.Nodes {
		if n.KeyType == nil {
			continue
		}
		key := n.KeyType
		hash := g.global("hashKey%s", n)
		f.Comment(fmt.Sprintf("%s hashes a key of %q. The hash decides the key group, which", hash, n.Name))
		f.Comment("checkpoints keep: it must never change.")
		f.Func().Id(hash).Params(jen.Id("k").Add(typeCode(key))).Uint64().BlockFunc(func(b *jen.Group) {
			if basic := basicOf(key); basic != nil {
				b.Return(hashExpr(jen.Id("k"), key, basic))
				return
			}
			b.Var().Id("h").Uint64()
			hashStmts(b, jen.Id("k"), key, 0)
			b.Return(jen.Id("h"))
		})
		val := g.keyedValue(n)
		keySchema, valueSchema := g.stateSchemas(n)
		f.Comment(fmt.Sprintf("The schema of the state of %q, recorded in every checkpoint.", n.Name))
		f.Const().DefsFunc(func(d *jen.Group) {
			d.Id(g.global("%sKeySchema", n)).Op("=").Lit(keySchema)
			d.Id(g.global("%sValueSchema", n)).Op("=").Lit(valueSchema)
			if bc := n.Broadcast; bc != nil {
				d.Id(g.global("%sBroadcastSchema", n)).Op("=").Lit(broadcastSchema(bc))
			}
		})
		encodeKey, decodeKey := g.global("encode%sKey", n), g.global("decode%sKey", n)
		f.Comment(fmt.Sprintf("%s and %s write and read a key of %q.", encodeKey, decodeKey, n.Name))
		f.Func().Id(encodeKey).Params(w, jen.Id("k").Add(typeCode(key))).BlockFunc(func(b *jen.Group) {
			cg.encode(b, jen.Id("k"), key, 0)
		})
		f.Func().Id(decodeKey).Params(r).Add(typeCode(key)).BlockFunc(func(b *jen.Group) {
			b.Var().Id("k").Add(typeCode(key))
			cg.decode(b, "r", jen.Id("k"), key, 0)
			b.Return(jen.Id("k"))
		})
		hasCodec := n.Window == nil && n.Kind != ir.Join || g.pebbleWindows(n) || g.pebbleCount(n) || g.pebbleJoin(n)
		g.valueCodec(f, cg, n, "Value", val, hasCodec)
		if n.Kind == ir.Join {
			g.valueCodec(f, cg, n, "Right", g.p.Nodes[n.Inputs[1].From].Out, false)
		}
		g.mapCodecs(f, cg, n)
		if bc := n.Broadcast; bc != nil {
			g.valueCodec(f, cg, n, "BroadcastKey", bc.Key, false)
			g.valueCodec(f, cg, n, "BroadcastValue", bc.Value, false)
		}
		if n.Window != nil && n.Window.Kind == "count" && n.Window.CountEvery < n.Window.Count {
			// Sliding count windows keep their last records.
			g.valueCodec(f, cg, n, "Record", n.In(), false)
		}
		if hasCodec {
			name := g.global("%sCodec", n)
			f.Comment(fmt.Sprintf("%s is how checkpoints write and read the state of %q.", name, n.Name))
			f.Var().Id(name).Op("=").Op("&").Qual(statePath, "Codec").Types(typeCode(key), typeCode(val)).Custom(multi,
				field("Hash", jen.Id(hash)),
				field("EncodeKey", jen.Id(encodeKey)),
				field("DecodeKey", jen.Id(decodeKey)),
				field("EncodeValue", jen.Id(g.global("encode%sValue", n))),
				field("DecodeValue", jen.Id(g.global("decode%sValue", n))),
				field("DecodeValueTo", jen.Id(g.global("decode%sValueTo", n))),
				field("KeySchema", jen.Id(g.global("%sKeySchema", n))),
				field("ValueSchema", jen.Id(g.global("%sValueSchema", n))),
				ttlField(n),
			)
		}
	}
	cg.flush()
}

// valueCodec emits encodeXSuffix and decodeXSuffix for values of type t
// and, with to, decodeXSuffixTo, which decodes into a value the caller
// provides (state.Codec's DecodeValueTo).
func (g *gen) valueCodec(f *jen.File, cg *codecGen, n *ir.Node, suffix string, t *ir.Type, to bool) {
	encode, decode := g.global("encode%s"+suffix, n), g.global("decode%s"+suffix, n)
	f.Comment(fmt.Sprintf("%s and %s write and read a value of type %s of the state of %q.", encode, decode, g.typeString(t), n.Name))
	if cg.hasFunc(t) {
		// The type's own encoder: a snapshot calls it with no wrapper
		// in between, one call fewer a window or entry.
		f.Var().Id(encode).Op("=").Id(cg.encodeFunc(t))
	} else {
		f.Func().Id(encode).Params(jen.Id("w").Op("*").Qual(codecPath, "Writer"), jen.Id("v").Op("*").Add(typeCode(t))).BlockFunc(func(b *jen.Group) {
			cg.encodePtr(b, jen.Id("v"), t)
		})
	}
	r := jen.Id("r").Op("*").Qual(codecPath, "Reader")
	if !to {
		f.Func().Id(decode).Params(r).Op("*").Add(typeCode(t)).BlockFunc(func(b *jen.Group) {
			b.Id("v").Op(":=").New(typeCode(t))
			cg.decodePtr(b, jen.Id("v"), t)
			b.Return(jen.Id("v"))
		})
		return
	}
	decodeTo := g.global("decode%s"+suffix+"To", n)
	f.Func().Id(decode).Params(r).Op("*").Add(typeCode(t)).Block(
		jen.Id("v").Op(":=").New(typeCode(t)),
		jen.Id(decodeTo).Call(jen.Id("r"), jen.Id("v")),
		jen.Return(jen.Id("v")),
	)
	f.Comment(fmt.Sprintf("%s is %s into *v, which is zero: a restore decodes into values it", decodeTo, decode))
	f.Comment("allocates many at a time.")
	f.Func().Id(decodeTo).Params(jen.Id("r").Op("*").Qual(codecPath, "Reader"), jen.Id("v").Op("*").Add(typeCode(t))).BlockFunc(func(b *jen.Group) {
		cg.decodePtr(b, jen.Id("v"), t)
	})
}

// NodeState is what the checkpoints of a keyed node record of its state:
// the schemas of its key and value, and the value's type; and the schema
// of its broadcast state, if it has one.
type NodeState struct {
	KeySchema, ValueSchema string
	Value                  *ir.Type
	BroadcastSchema        string
}

// StateSchemas returns, for every node of p with keyed or broadcast state,
// by its index, what its checkpoints record of its state (pipegen check
// --savepoint compares them with a savepoint's).
func StateSchemas(p *ir.Pipeline) map[int]NodeState {
	g := &gen{p: p}
	out := map[int]NodeState{}
	for i, n := range p.Nodes {
		var ns NodeState
		if n.KeyType != nil {
			ns.KeySchema, ns.ValueSchema = g.stateSchemas(n)
			ns.Value = g.keyedValue(n)
		}
		if bc := n.Broadcast; bc != nil {
			ns.BroadcastSchema = broadcastSchema(bc)
		}
		if ns != (NodeState{}) {
			out[i] = ns
		}
	}
	return out
}

// broadcastSchema is the schema of a broadcast state: its map's.
func broadcastSchema(bc *ir.BroadcastState) string {
	return schema(&ir.Type{Kind: ir.MapType, Key: bc.Key, Elem: bc.Value})
}
