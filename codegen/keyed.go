package codegen

import (
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
	}
	return g.stateValue(n)
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
	cg := newCodecGen(f)
	w := jen.Id("w").Op("*").Qual(codecPath, "Writer")
	r := jen.Id("r").Op("*").Qual(codecPath, "Reader")
	for _, n := range g.p.Nodes {
		if n.KeyType == nil {
			continue
		}
		p := g.pascal(n)
		key := n.KeyType
		f.Comment(fmt.Sprintf("hashKey%s hashes a key of %q. The hash decides the key group, which", p, n.Name))
		f.Comment("checkpoints keep: it must never change.")
		f.Func().Id("hashKey" + p).Params(jen.Id("k").Add(typeCode(key))).Uint64().BlockFunc(func(b *jen.Group) {
			if basic := basicOf(key); basic != nil {
				b.Return(hashExpr(jen.Id("k"), key, basic))
				return
			}
			b.Var().Id("h").Uint64()
			hashStmts(b, jen.Id("k"), key, 0)
			b.Return(jen.Id("h"))
		})
		val := g.keyedValue(n)
		valueSchema := schema(val)
		if n.Kind == ir.Join {
			valueSchema += " + " + schema(g.p.Nodes[n.Inputs[1].From].Out)
		}
		f.Comment(fmt.Sprintf("The schema of the state of %q, recorded in every checkpoint.", n.Name))
		f.Const().Defs(
			jen.Id(g.id(n)+"KeySchema").Op("=").Lit(schema(key)),
			jen.Id(g.id(n)+"ValueSchema").Op("=").Lit(valueSchema),
		)
		f.Comment(fmt.Sprintf("encode%sKey and decode%sKey write and read a key of %q.", p, p, n.Name))
		f.Func().Id("encode"+p+"Key").Params(w, jen.Id("k").Add(typeCode(key))).BlockFunc(func(b *jen.Group) {
			cg.encode(b, jen.Id("k"), key, 0)
		})
		f.Func().Id("decode" + p + "Key").Params(r).Add(typeCode(key)).BlockFunc(func(b *jen.Group) {
			b.Var().Id("k").Add(typeCode(key))
			cg.decode(b, "r", jen.Id("k"), key, 0)
			b.Return(jen.Id("k"))
		})
		g.valueCodec(f, cg, n, "Value", val)
		if n.Kind == ir.Join {
			g.valueCodec(f, cg, n, "Right", g.p.Nodes[n.Inputs[1].From].Out)
		}
		if n.Window == nil && n.Kind != ir.Join {
			f.Comment(fmt.Sprintf("encode%sEntry writes one key and value of the state of %q.", p, n.Name))
			f.Func().Id("encode"+p+"Entry").Params(w, jen.Id("k").Add(typeCode(key)), jen.Id("v").Op("*").Add(typeCode(val))).Block(
				jen.Id("encode"+p+"Key").Call(jen.Id("w"), jen.Id("k")),
				jen.Id("encode"+p+"Value").Call(jen.Id("w"), jen.Id("v")),
			)
			f.Comment(fmt.Sprintf("decode%sEntry reads one key and value of the state of %q.", p, n.Name))
			f.Func().Id("decode"+p+"Entry").Params(r).Params(typeCode(key), jen.Op("*").Add(typeCode(val))).Block(
				jen.Return(jen.Id("decode"+p+"Key").Call(jen.Id("r")), jen.Id("decode"+p+"Value").Call(jen.Id("r"))),
			)
		}
	}
	cg.flush()
}

// valueCodec emits encodeXSuffix and decodeXSuffix for values of type t.
func (g *gen) valueCodec(f *jen.File, cg *codecGen, n *ir.Node, suffix string, t *ir.Type) {
	p := g.pascal(n)
	f.Comment(fmt.Sprintf("encode%s%s and decode%s%s write and read a %s of the state of %q.", p, suffix, p, suffix, t, n.Name))
	f.Func().Id("encode"+p+suffix).Params(jen.Id("w").Op("*").Qual(codecPath, "Writer"), jen.Id("v").Op("*").Add(typeCode(t))).BlockFunc(func(b *jen.Group) {
		cg.encodePtr(b, jen.Id("v"), t)
	})
	f.Func().Id("decode" + p + suffix).Params(jen.Id("r").Op("*").Qual(codecPath, "Reader")).Op("*").Add(typeCode(t)).BlockFunc(func(b *jen.Group) {
		b.Id("v").Op(":=").New(typeCode(t))
		cg.decodePtr(b, jen.Id("v"), t)
		b.Return(jen.Id("v"))
	})
}
