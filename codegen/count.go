package codegen

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/ir"
)

// countGen is a reduce or aggregate on count windows: per key the records
// since its window last fired (runtime.CountWindows).
type countGen struct{ base }

func (c *countGen) state() *jen.Statement { return c.field("State") }
func (c *countGen) acc() *ir.Type         { return c.cg.g.keyedValue(c.n) }

func (c *countGen) doc() string {
	n, w := c.n, c.n.Window
	what := fmt.Sprintf("count windows of %d records", w.Count)
	if w.CountEvery < w.Count {
		what = fmt.Sprintf("sliding count windows of %d records every %d", w.Count, w.CountEvery)
	}
	return fmt.Sprintf("%s by %s on %s, emitting as the last record of a window arrives", windowOp(n), n.Key.Name, what)
}

// pebbleCount reports whether node n keeps its count windows in the
// pebble store of its subtask (pebblestate.CountWindows): on the pebble
// backend.
func (g *gen) pebbleCount(n *ir.Node) bool {
	return g.p.StateBackend == "pebble" && (n.Kind == ir.Reduce || n.Kind == ir.Aggregate) && n.Window != nil && n.Window.Kind == "count"
}

func (c *countGen) stateType() *jen.Statement {
	if c.cg.g.pebbleCount(c.n) {
		return jen.Qual(pebblePath, "CountWindows").Types(typeCode(c.n.KeyType), typeCode(c.n.In()), typeCode(c.acc()))
	}
	return jen.Qual(runtimePath, "CountWindows").Types(typeCode(c.n.KeyType), typeCode(c.n.In()), typeCode(c.acc()))
}

func (c *countGen) fields(s *jen.Group) {
	s.Id(c.member("%sState")).Op("*").Add(c.stateType()).Comment(fmt.Sprintf("open count windows of %s per key", c.n.Name))
}

func (c *countGen) init(b *jen.Group) {
	g, n := c.cg.g, c.n
	var add jen.Code
	if n.Kind == ir.Reduce {
		add = jen.Id("acc").Dot("Add").Call(jen.Id("r"), fn(n.Fn))
	} else {
		add = fn(n.Add).Call(jen.Id("acc"), pass(n.Add, jen.Id("r"), jen.Op("&").Id("r")))
	}
	addFn := jen.Func().Params(jen.Id("acc").Op("*").Add(typeCode(c.acc())), jen.Id("r").Add(typeCode(n.In()))).Block(add)
	if g.pebbleCount(n) {
		b.Add(c.state()).Op("=").Qual(pebblePath, "OpenCountWindows").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)),
			jen.Lit(n.Window.Count), jen.Lit(n.Window.CountEvery), addFn, jen.Id("c").Dot(c.member("%sResult")), jen.Id(g.global("%sCodec", n)),
			c.recordCodec("encode%sRecord"), c.recordCodec("decode%sRecord"))
		return
	}
	b.Add(c.state()).Op("=").Qual(runtimePath, "NewCountWindows").Types(typeCode(n.KeyType), typeCode(n.In()), typeCode(c.acc())).Call(
		jen.Lit(n.Window.Count), jen.Lit(n.Window.CountEvery), addFn, jen.Id("c").Dot(c.member("%sResult")))
	b.Qual(runtimePath, "RestoreKeyed").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)), jen.Lit(""),
		jen.Func().Params(jen.Id("sec").Index().Byte()).Error().Block(
			jen.Return(jen.Add(c.state()).Dot("Restore").Call(jen.Id("sec"), jen.Id(g.global("decode%sKey", n)), jen.Id(g.global("decode%sValue", n)), c.recordCodec("decode%sRecord"))),
		))
}

// recordCodec names the encoder or decoder of buffered records: sliding
// count windows keep them, tumbling ones do not (nil).
func (c *countGen) recordCodec(pattern string) jen.Code {
	if c.n.Window.CountEvery < c.n.Window.Count {
		return jen.Id(c.cg.g.global(pattern, c.n))
	}
	return jen.Nil()
}

func (c *countGen) record(b *jen.Group) {
	ts := jen.Code(jen.Id("ts"))
	if !c.cg.timed {
		ts = jen.Lit(0)
	}
	b.Add(c.state()).Dot("Add").Call(fn(c.n.Key).Call(c.arg(c.n.Key)), jen.Id("r"), ts)
}

func (c *countGen) snapshot(b *jen.Group) {
	g, n := c.cg.g, c.n
	if g.pebbleCount(n) {
		b.Qual(pebblePath, "SnapshotCountWindows").Call(jen.Id("s"), jen.Id(g.constName(n)), c.state())
		return
	}
	b.Qual(runtimePath, "SnapshotKeyed").Call(jen.Id("s"), jen.Id(g.constName(n)), jen.Lit(""), jen.Id(g.global("hashKey%s", n)), jen.Id(g.global("%sKeySchema", n)), jen.Id(g.global("%sValueSchema", n)),
		jen.Func().Params(jen.Id("sec").Op("*").Qual(statePath, "Sections"), jen.Id("kg").Func().Params(typeCode(n.KeyType)).Int()).Error().Block(
			jen.Return(jen.Add(c.state()).Dot("Snapshot").Call(jen.Id("sec"), jen.Id("kg"), jen.Id(g.global("encode%sKey", n)), jen.Id(g.global("encode%sValue", n)), c.recordCodec("encode%sRecord"))),
		))
}

// resultMethod emits xResult, which turns a count window that fired into
// the node's output record, with the time of its last record.
func (c *countGen) resultMethod() {
	n, f := c.n, c.cg.f
	var out jen.Code
	if n.Kind == ir.Reduce {
		out = jen.Id("acc").Dot("V")
	} else {
		out = aggregateResult(n, jen.Id("k"), jen.Id("acc"), nil)
	}
	name := c.member("%sResult")
	f.Comment(fmt.Sprintf("%s emits the result of a count window of %q that fired.", name, n.Name))
	f.Func().Params(c.cg.recv).Id(name).Params(jen.Id("k").Add(typeCode(n.KeyType)), jen.Id("acc").Op("*").Add(typeCode(c.acc())), jen.Id("ts").Int64()).Block(
		c.emit(out, jen.Id("ts")),
	)
}
