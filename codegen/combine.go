package codegen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
	"github.com/pipegen/pipegen/ir"
)

// Combined edges (Flink's local-global aggregation). An aggregate on
// event-time tumbling windows with a merge function, fed by a hash edge,
// takes partial accumulators instead of records from a sender that does
// not call it (parallelism > 1): the sending chain keeps its own
// accumulator per key and window (runtime.Combiner), folds its records
// into them with the aggregate's add, and sends one runtime.Partial per
// key and window; the aggregate merges them into its windows. The sender
// keeps nothing across a checkpoint: it sends all its partials before it
// forwards a barrier, and before a watermark the partials of the windows
// the watermark closes, so that they are not late for the receiver. At
// parallelism 1 the receiver takes the records by a call (direct), as
// without merge. Allowed lateness, triggers and a late side output that is
// read would need the partials judged and re-fired as the records would
// be: such aggregates take records.

// combined reports whether the edge into node h carries partial
// accumulators (see above).
func (g *gen) combined(h *ir.Node) bool {
	return h.Kind == ir.Aggregate && h.Merge != nil && h.Window != nil && h.Window.Kind == "tumbling" &&
		!h.Window.Processing && h.Lateness == 0 && h.Trigger == nil && !g.pebbleWindows(h) &&
		len(h.Inputs) == 1 && h.Inputs[0].Partition == ir.Hash && h.Timed &&
		len(consumersOf(g.p, h, "late")) == 0 && g.collect[h.Name+".late"] == nil &&
		g.chainOf[h.ID].head == h
}

// edgeRecord is the type of the records of the edge into input i of node
// to as they cross between chains: a partial accumulator on a combined
// edge, else the record (crossRecord).
func (g *gen) edgeRecord(timed bool, to *ir.Node, i int) jen.Code {
	if g.combined(to) {
		return jen.Qual(runtimePath, "Timed").Types(partialType(to, g.keyedValue(to)))
	}
	return crossRecord(timed, to.Inputs[i].Type)
}

func partialType(to *ir.Node, acc *ir.Type) jen.Code {
	return jen.Qual(runtimePath, "Partial").Types(typeCode(to.KeyType), typeCode(acc))
}

// combineOuts are the chain's outputs that are combined edges.
func (cg *chainGen) combineOuts() []crossEdge {
	var out []crossEdge
	for _, e := range cg.c.outs {
		if cg.g.combined(e.to) {
			out = append(out, e)
		}
	}
	return out
}

func (cg *chainGen) combField(e crossEdge) string { return cg.member("%sCombiner", e.to) }
func (cg *chainGen) sendField(e crossEdge) string { return cg.member("send%sPartialFn", e.to) }
func (cg *chainGen) sendMethod(e crossEdge) string {
	return cg.member("send%sPartial", e.to)
}

// combineFields declares a sender's combiner and its send function.
func (cg *chainGen) combineFields(s *jen.Group) {
	for _, e := range cg.combineOuts() {
		acc := cg.g.keyedValue(e.to)
		s.Id(cg.combField(e)).Op("*").Qual(runtimePath, "Combiner").Types(typeCode(e.to.KeyType), typeCode(acc)).Comment(fmt.Sprintf("partials for %s at parallelism > 1, sent before every barrier and the watermark that closes their window", e.to.Name))
		s.Id(cg.sendField(e)).Func().Params(typeCode(e.to.KeyType), jen.Qual(runtimePath, "Window"), jen.Op("*").Add(typeCode(acc))).Comment(cg.sendMethod(e) + ", made once")
	}
}

// combineInit makes the combiners.
func (cg *chainGen) combineInit(b *jen.Group) {
	for _, e := range cg.combineOuts() {
		acc := cg.g.keyedValue(e.to)
		b.Id("c").Dot(cg.combField(e)).Op("=").Qual(runtimePath, "NewCombiner").Types(typeCode(e.to.KeyType), typeCode(acc)).Call(assigner(e.to.Window))
		b.Id("c").Dot(cg.sendField(e)).Op("=").Id("c").Dot(cg.sendMethod(e))
	}
}

// combineMethods emits the send method of each combined output.
func (cg *chainGen) combineMethods() {
	for _, e := range cg.combineOuts() {
		acc := cg.g.keyedValue(e.to)
		name := cg.sendMethod(e)
		cg.f.Comment(fmt.Sprintf("%s sends the partial accumulator of key k and window w to %s, which merges it", name, e.to.Name))
		cg.f.Comment(fmt.Sprintf("(%s); it is due at w's last millisecond, as the records it holds.", e.to.Merge.Name))
		cg.f.Func().Params(cg.recv).Id(name).Params(jen.Id("k").Add(typeCode(e.to.KeyType)), jen.Id("w").Qual(runtimePath, "Window"), jen.Id("acc").Op("*").Add(typeCode(acc))).Block(
			jen.Id("s").Op(":=").Id("c").Dot(cg.outField(e)).Dot("HashSlot").Call(cg.g.hashCall(e.to, jen.Id("k"))),
			jen.Id("s").Dot("TS").Op("=").Id("w").Dot("MaxTimestamp").Call(),
			jen.Id("s").Dot("V").Dot("Key").Op("=").Id("k"),
			jen.Id("s").Dot("V").Dot("Acc").Op("=").Op("*").Id("acc"),
		)
	}
}

// combineSend is what the sender's emit method does for a record of a
// combined edge e instead of writing it into a batch: r is the record (a
// pointer if addr is), which goes into its key's and window's partial. A
// record late by the sender's watermark, the one the receiver judges the
// sender's records by, goes on as an empty partial at the record's time:
// late there too, the receiver counts it as it would count the record.
func (cg *chainGen) combineSend(e crossEdge, val, ref *jen.Statement) []jen.Code {
	h := e.to
	return []jen.Code{
		jen.Id("k").Op(":=").Add(fn(h.Key).Call(pass(h.Key, val, ref))),
		jen.If(jen.Id("acc").Op(":=").Id("c").Dot(cg.combField(e)).Dot("Acc").Call(jen.Id("k"), jen.Id("ts")), jen.Id("acc").Op("!=").Nil()).Block(
			fn(h.Add).Call(jen.Id("acc"), pass(h.Add, val, ref)),
		).Else().Block(
			jen.Id("s").Op(":=").Id("c").Dot(cg.outField(e)).Dot("HashSlot").Call(cg.g.hashCall(h, jen.Id("k"))),
			jen.Id("s").Dot("TS").Op("=").Id("ts"),
			jen.Id("s").Dot("V").Op("=").Qual(runtimePath, "Partial").Types(typeCode(h.KeyType), typeCode(cg.g.keyedValue(h))).Values(jen.Dict{jen.Id("Key"): jen.Id("k")}),
		),
	}
}

// mergeRecords emits the records method of a chain headed by an aggregate
// whose input is combined: each partial merges into its window.
func (cg *chainGen) mergeRecords() {
	c, f, h := jen.Id("c"), cg.f, cg.c.head
	w := cg.nodes[0].(*windowGen)
	rec := jen.Id("recs").Index(jen.Id("i"))
	f.Comment(fmt.Sprintf("records merges a batch of partial accumulators into the windows of %q (%s):", h.Name, h.Merge.Name))
	f.Comment("its senders combine the records before they cross. A panic in user code is")
	f.Comment("reported with the partial that caused it; the deferred check costs nothing per")
	f.Comment("partial.")
	var recovered []jen.Code
	if len(cg.callOuts()) > 0 {
		// A panic in a chain that this one called is that chain's, and
		// of a record of its own.
		recovered = append(recovered, jen.If(jen.List(jen.Id("q"), jen.Id("called")).Op(":=").Add(c).Dot("blame").Call(jen.Id("p")), jen.Id("called")).Block(jen.Panic(jen.Id("q"))))
	}
	recovered = append(recovered, jen.Qual(runtimePath, "PanicWithRecord").Call(jen.Id("p"), rec))
	f.Func().Params(cg.recv).Id("records").Params(jen.Id("recs").Index().Add(cg.g.edgeRecord(true, h, 0))).Block(
		jen.Id("i").Op(":=").Lit(0),
		jen.Defer().Func().Params().Block(
			jen.If(jen.Id("p").Op(":=").Recover(), jen.Id("p").Op("!=").Nil()).Block(recovered...),
		).Call(),
		jen.For(jen.Empty(), jen.Id("i").Op("<").Len(jen.Id("recs")), jen.Id("i").Op("++")).Block(
			jen.Id("p").Op(":=").Op("&").Add(rec),
			jen.If(jen.Id("acc").Op(":=").Add(w.state()).Dot("Acc").Call(jen.Id("p").Dot("V").Dot("Key"), jen.Id("p").Dot("TS"), jen.Add(c).Dot("inputWM")), jen.Id("acc").Op("!=").Nil()).Block(
				fn(h.Merge).Call(jen.Id("acc"), jen.Op("&").Id("p").Dot("V").Dot("Acc")),
				jen.Add(w.state()).Dot("Added").Call(w.update()),
			).Else().Block(
				jen.Comment("A record late by its sender's watermark, sent on empty: counted as"),
				jen.Comment("late, as the record would have been. (A partial is never late: its"),
				jen.Comment("sender sent it before the watermark that closes its window.)"),
				cg.count(h, true),
			),
		),
	)
}
