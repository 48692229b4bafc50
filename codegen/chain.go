package codegen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/ir"
)

// chainCode emits one chain: its type, constructor, loop, and a method per
// node.
func (g *gen) chainCode(f *jen.File, c *chain) {
	typ := g.chainType(c)
	recv := jen.Id("c").Op("*").Id(typ)
	h := c.head

	var names []string
	for _, n := range c.nodes[1:] {
		names = append(names, n.Name)
	}
	doc := fmt.Sprintf("%s is one subtask of %s %q", typ, h.Kind, h.Name)
	if len(names) > 0 {
		doc += fmt.Sprintf(" and the nodes fused with it: %s", strings.Join(names, ", "))
	}
	f.Comment(doc + ".")
	f.Type().Id(typ).StructFunc(func(s *jen.Group) {
		s.Id("sub").Int().Comment("the subtask's index")
		s.Id("task").Op("*").Qual(runtimePath, "Task").Comment("its part in checkpoints")
		switch h.Kind {
		case ir.Source:
			s.Id("src").Op("*").Qual(runtimePath, sourceType(h)).Types(typeCode(h.Out))
			s.Id("ctl").Op("*").Qual(runtimePath, "SourceCtl")
		default:
			s.Id("in").Op("*").Qual(runtimePath, "Inbox").Types(typeCode(h.In()))
		}
		for _, e := range c.outs {
			s.Id(g.outField(e)).Op("*").Qual(runtimePath, "Out").Types(typeCode(e.from.Out)).Comment(fmt.Sprintf("to %s, %s", e.to.Name, e.to.Inputs[e.input].Partition))
		}
		for _, n := range c.nodes {
			switch {
			case n.Kind == ir.Sink:
				s.Id(g.id(n)+"Sink").Op("*").Qual(runtimePath, sinkType(n)).Types(typeCode(n.In()))
			case n.Kind.Stateful():
				s.Id(g.id(n)+"State").Op("*").Qual(statePath, "Memory").Types(typeCode(n.KeyType), g.stateValueType(n)).Comment(fmt.Sprintf("state of %s: one %s per key", n.Name, g.stateValueName(n)))
			}
			if n.Kind == ir.FlatMap && n.Fn.Shape == "emit" {
				s.Id("emit" + g.pascal(n) + "Fn").Func().Params(typeCode(n.Out)).Comment("emit" + g.pascal(n) + ", made once")
			}
		}
	})

	// Constructor.
	params := []jen.Code{jen.Id("j").Op("*").Qual(runtimePath, "Job"), jen.Id("sub").Int()}
	if h.Kind != ir.Source {
		params = append(params, jen.Id("in").Op("*").Qual(runtimePath, "Inbox").Types(typeCode(h.In())))
	}
	for _, e := range c.outs {
		params = append(params, jen.Id(g.outField(e)).Op("*").Qual(runtimePath, "Out").Types(typeCode(e.from.Out)))
	}
	f.Func().Id("new" + upperFirst(typ)).Params(params...).Op("*").Id(typ).BlockFunc(func(b *jen.Group) {
		fields := jen.Dict{jen.Id("sub"): jen.Id("sub")}
		if h.Kind != ir.Source {
			fields[jen.Id("in")] = jen.Id("in")
		}
		for _, e := range c.outs {
			fields[jen.Id(g.outField(e))] = jen.Id(g.outField(e))
		}
		fields[jen.Id("task")] = jen.Id("j").Dot("Task").Call(jen.Id(g.constName(h)), jen.Id("sub"))
		b.Id("c").Op(":=").Op("&").Id(typ).Values(fields)
		if h.Kind == ir.Source {
			b.Id("c").Dot("src").Op("=").Add(g.newSource(h))
			b.Id("c").Dot("ctl").Op("=").Id("c").Dot("src").Dot("Ctl").Call()
		}
		for _, n := range c.nodes {
			switch {
			case n.Kind == ir.Sink:
				b.Id("c").Dot(g.id(n) + "Sink").Op("=").Add(g.newSink(n))
			case n.Kind.Stateful():
				b.Id("c").Dot(g.id(n)+"State").Op("=").Qual(statePath, "NewMemory").Types(typeCode(n.KeyType), g.stateValueType(n)).Call()
				b.Qual(runtimePath, "RestoreMemory").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)), jen.Id("c").Dot(g.id(n)+"State"), jen.Id("decode"+g.pascal(n)+"Entry"))
			}
			if n.Kind == ir.FlatMap && n.Fn.Shape == "emit" {
				b.Id("c").Dot("emit" + g.pascal(n) + "Fn").Op("=").Id("c").Dot("emit" + g.pascal(n))
			}
		}
		b.Return(jen.Id("c"))
	})

	g.loop(f, c, recv)
	for _, n := range c.nodes {
		if n.Kind != ir.Source {
			g.nodeMethod(f, c, n, recv)
		}
		if n.Kind != ir.Sink {
			g.emitMethod(f, c, n, recv)
		}
	}
	g.controlMethods(f, c, recv)
}

func sourceType(n *ir.Node) string {
	if n.Connector == "generator" {
		return "GeneratorSource"
	}
	return "FileSource"
}

func sinkType(n *ir.Node) string {
	if n.Connector == "stdout" {
		return "StdoutSink"
	}
	return "FileSink"
}

func (g *gen) newSource(n *ir.Node) jen.Code {
	args := []jen.Code{jen.Id("j"), jen.Id(g.constName(n)), jen.Id("sub")}
	if n.Connector == "generator" {
		return jen.Qual(runtimePath, "NewGeneratorSource").Call(append(args, jen.Qual(n.Fn.PkgPath, n.Fn.Name))...)
	}
	var format jen.Code
	switch n.Format {
	case "jsonl":
		format = jen.Qual(runtimePath, "JSONFormat").Types(typeCode(n.Out)).Call()
	case "csv":
		format = jen.Qual(runtimePath, "CSVFormatFor").Types(typeCode(n.Out)).Call(jen.Id("j"), jen.Id(g.constName(n)))
	default:
		format = jen.Qual(runtimePath, "LinesFormat").Call()
	}
	return jen.Qual(runtimePath, "NewFileSource").Call(append(args, format)...)
}

func (g *gen) newSink(n *ir.Node) jen.Code {
	in := n.In()
	var enc jen.Code
	switch {
	case n.Format == "jsonl":
		enc = jen.Qual(runtimePath, "EncodeJSON").Types(typeCode(in))
	case in.IsString():
		enc = jen.Qual(runtimePath, "EncodeString")
	default:
		enc = jen.Qual(runtimePath, "EncodeStringer").Types(typeCode(in))
	}
	ctor := "NewFileSink"
	if n.Connector == "stdout" {
		ctor = "NewStdoutSink"
	}
	return jen.Qual(runtimePath, ctor).Call(jen.Id("j"), jen.Id(g.constName(n)), jen.Id("sub"), enc)
}

func (g *gen) stateValueType(n *ir.Node) jen.Code {
	return typeCode(g.stateValue(n))
}

// stateValue is the type of a keyed node's state per key.
func (g *gen) stateValue(n *ir.Node) *ir.Type {
	if n.Kind == ir.Aggregate {
		return n.Acc
	}
	return n.In()
}

func (g *gen) stateValueName(n *ir.Node) string {
	if n.Kind == ir.Aggregate {
		return n.Acc.String()
	}
	return n.In().String()
}

// loop emits the chain's run method: a source's read loop, or an inbox's
// receive loop, with the control events in band.
func (g *gen) loop(f *jen.File, c *chain, recv *jen.Statement) {
	h := c.head
	if h.Kind == ir.Source {
		f.Comment(fmt.Sprintf("run reads source %q until its input ends (and every other source's has). Between", h.Name))
		f.Comment("records it injects the checkpoint barriers the coordinator asks for; it hands")
		f.Comment("partial batches downstream when nothing can be read now, and at least every")
		f.Comment("runtime.Linger.")
		f.Func().Params(recv).Id("run").Params().Block(
			jen.Defer().Id("c").Dot("src").Dot("Recover").Call().Comment("a panic names the record's file and line"),
			jen.For().Block(
				jen.If(jen.List(jen.Id("r"), jen.Id("ok")).Op(":=").Id("c").Dot("src").Dot("Next").Call(), jen.Id("ok")).Block(
					jen.Id("c").Dot("emit"+g.pascal(h)).Call(jen.Id("r")),
				).Else().If(jen.Id("c").Dot("src").Dot("Done").Call().Op("&&").Id("c").Dot("ctl").Dot("AtEnd").Call()).Block(
					jen.Break(),
				).Else().Block(
					jen.Id("c").Dot("flush").Call(),
				),
				jen.If(jen.Id("id").Op(":=").Id("c").Dot("ctl").Dot("Poll").Call(), jen.Id("id").Op(">").Lit(0)).Block(
					jen.Id("c").Dot("barrier").Call(jen.Id("id")),
				).Else().If(jen.Id("id").Op("<").Lit(0)).Block(
					jen.Id("c").Dot("flush").Call(),
				),
			),
			jen.Id("c").Dot("end").Call(),
		)
		return
	}
	f.Comment(fmt.Sprintf("run takes records and control events from the inbox of %q until every", h.Name))
	f.Comment("input has ended. The inbox aligns barriers: one arrives here once it came from")
	f.Comment("every input, and the senders wait until Release.")
	f.Func().Params(recv).Id("run").Params().Block(
		jen.Id("c").Dot("in").Dot("Bind").Call(jen.Id("c").Dot("task"), jen.Id("c").Dot("flush")),
		jen.For().Block(
			jen.Id("m").Op(":=").Id("c").Dot("in").Dot("Next").Call(),
			jen.Switch(jen.Id("m").Dot("Kind")).Block(
				jen.Case(jen.Qual(runtimePath, "Records")).Block(
					jen.Id("c").Dot("records").Call(jen.Id("m").Dot("Recs")),
					jen.Id("c").Dot("in").Dot("Recycle").Call(jen.Id("m").Dot("Recs")),
				),
				jen.Case(jen.Qual(runtimePath, "Barrier")).Block(
					jen.Id("c").Dot("barrier").Call(jen.Id("m").Dot("ID")),
					jen.Id("c").Dot("in").Dot("Release").Call(jen.Id("m").Dot("ID")),
				),
				jen.Case(jen.Qual(runtimePath, "End")).Block(
					jen.Id("c").Dot("end").Call(),
					jen.Return(),
				),
			),
		),
	)
	f.Comment(fmt.Sprintf("records passes a batch to %q. A panic in user code is reported with the", h.Name))
	f.Comment("record that caused it; the deferred check costs nothing per record.")
	f.Func().Params(recv).Id("records").Params(jen.Id("recs").Index().Add(typeCode(h.In()))).Block(
		jen.Id("i").Op(":=").Lit(0),
		jen.Defer().Func().Params().Block(
			jen.If(jen.Id("p").Op(":=").Recover(), jen.Id("p").Op("!=").Nil()).Block(
				jen.Qual(runtimePath, "PanicWithRecord").Call(jen.Id("p"), jen.Id("recs").Index(jen.Id("i"))),
			),
		).Call(),
		jen.For(jen.Empty(), jen.Id("i").Op("<").Len(jen.Id("recs")), jen.Id("i").Op("++")).Block(
			jen.Id("c").Dot("to"+g.pascal(h)).Call(jen.Id("recs").Index(jen.Id("i"))),
		),
	)
}

// nodeMethod emits toX, the per-record method of node X.
func (g *gen) nodeMethod(f *jen.File, c *chain, n *ir.Node, recv *jen.Statement) {
	in := n.In()
	name := "to" + g.pascal(n)
	emit := jen.Id("c").Dot("emit" + g.pascal(n))
	fn := func(fn *ir.Func) *jen.Statement { return jen.Qual(fn.PkgPath, fn.Name) }
	var doc string
	var body []jen.Code
	r := jen.Id("r")
	switch n.Kind {
	case ir.Map:
		doc = fmt.Sprintf("map %s, %s", n.Fn.Name, n.Fn.Signature)
		if n.Fn.Shape == "error" {
			body = append(body,
				jen.List(jen.Id("out"), jen.Err()).Op(":=").Add(fn(n.Fn)).Call(r),
				jen.If(jen.Err().Op("!=").Nil()).Block(
					jen.Qual(runtimePath, "Abortf").Call(jen.Lit(fmt.Sprintf("operators.%s: %s: %%w", n.Name, n.Fn.Name)), jen.Err()),
				),
				jen.Add(emit).Call(jen.Id("out")),
			)
		} else {
			body = append(body, jen.Add(emit).Call(fn(n.Fn).Call(r)))
		}
	case ir.Filter:
		doc = fmt.Sprintf("filter %s, %s", n.Fn.Name, n.Fn.Signature)
		body = append(body, jen.If(fn(n.Fn).Call(r)).Block(jen.Add(emit).Call(r)))
	case ir.FlatMap:
		doc = fmt.Sprintf("flatmap %s, %s", n.Fn.Name, n.Fn.Signature)
		if n.Fn.Shape == "emit" {
			body = append(body, fn(n.Fn).Call(r, jen.Id("c").Dot("emit"+g.pascal(n)+"Fn")))
		} else {
			body = append(body, jen.For(jen.List(jen.Id("_"), jen.Id("out")).Op(":=").Range().Add(fn(n.Fn)).Call(r)).Block(
				jen.Add(emit).Call(jen.Id("out")),
			))
		}
	case ir.Union:
		doc = "union of " + g.inputNames(n)
		body = append(body, jen.Add(emit).Call(r))
	case ir.Reduce:
		doc = fmt.Sprintf("reduce %s by %s, emitting %s", n.Fn.Name, n.Key.Name, emitDoc(n))
		st := jen.Id("c").Dot(g.id(n) + "State")
		body = append(body,
			jen.Id("k").Op(":=").Add(fn(n.Key)).Call(r),
			jen.If(jen.Id("acc").Op(":=").Add(st).Dot("Get").Call(jen.Id("k")), jen.Id("acc").Op("!=").Nil()).Block(
				jen.Op("*").Id("acc").Op("=").Add(fn(n.Fn)).Call(jen.Op("*").Id("acc"), r),
				jen.Id("r").Op("=").Op("*").Id("acc"),
			).Else().Block(
				jen.Add(st).Dot("Put").Call(jen.Id("k"), jen.Op("&").Id("r")),
			),
		)
		if n.Emit == "update" {
			body = append(body, jen.Add(emit).Call(r))
		}
	case ir.Aggregate:
		doc = fmt.Sprintf("aggregate by %s: add %s", n.Key.Name, n.Add.Name)
		if n.Result != nil {
			doc += ", result " + n.Result.Name
		}
		doc += ", emitting " + emitDoc(n)
		st := jen.Id("c").Dot(g.id(n) + "State")
		body = append(body,
			jen.Id("k").Op(":=").Add(fn(n.Key)).Call(r),
			jen.Id("acc").Op(":=").Add(st).Dot("Get").Call(jen.Id("k")),
			jen.If(jen.Id("acc").Op("==").Nil()).Block(
				jen.Id("acc").Op("=").New(typeCode(n.Acc)),
				jen.Add(st).Dot("Put").Call(jen.Id("k"), jen.Id("acc")),
			),
			fn(n.Add).Call(jen.Id("acc"), r),
		)
		if n.Emit == "update" {
			body = append(body, jen.Add(emit).Call(g.aggregateResult(n, jen.Id("k"), jen.Id("acc"))))
		}
	case ir.Sink:
		doc = fmt.Sprintf("%s sink, format %s", n.Connector, n.Format)
		body = append(body, jen.Id("c").Dot(g.id(n)+"Sink").Dot("Write").Call(r))
	}
	f.Comment(fmt.Sprintf("%s is %s %q: %s.", name, section(n)[:len(section(n))-1], n.Name, doc))
	f.Func().Params(recv).Id(name).Params(jen.Id("r").Add(typeCode(in))).Block(body...)
}

func emitDoc(n *ir.Node) string {
	if n.Emit == "final" {
		return "one result per key when the input ends"
	}
	return "a result after every record"
}

func (g *gen) aggregateResult(n *ir.Node, k, acc jen.Code) jen.Code {
	if n.Result == nil {
		return jen.Op("*").Add(acc)
	}
	return jen.Qual(n.Result.PkgPath, n.Result.Name).Call(k, acc)
}

func (g *gen) inputNames(n *ir.Node) string {
	var names []string
	for _, e := range n.Inputs {
		names = append(names, g.p.Nodes[e.From].Name)
	}
	return strings.Join(names, ", ")
}

// emitMethod emits emitX, which passes node X's output records on: by a
// call to every consumer fused in this chain, and through an Out to every
// other.
func (g *gen) emitMethod(f *jen.File, c *chain, n *ir.Node, recv *jen.Statement) {
	var body []jen.Code
	var to []string
	for _, e := range consumers(g.p, n) {
		to = append(to, e.to.Name)
		if g.chainOf[e.to.ID] == c {
			body = append(body, jen.Id("c").Dot("to"+g.pascal(e.to)).Call(jen.Id("r")))
			continue
		}
		out := jen.Id("c").Dot(g.outField(e))
		switch e.to.Inputs[e.input].Partition {
		case ir.Hash:
			key := e.to.Key
			body = append(body, jen.Add(out).Dot("Hash").Call(g.hashCall(e.to, jen.Qual(key.PkgPath, key.Name).Call(jen.Id("r"))), jen.Id("r")))
		case ir.Forward:
			body = append(body, jen.Add(out).Dot("Forward").Call(jen.Id("r")))
		case ir.Broadcast:
			body = append(body, jen.Add(out).Dot("Broadcast").Call(jen.Id("r")))
		default:
			body = append(body, jen.Add(out).Dot("Rebalance").Call(jen.Id("r")))
		}
	}
	doc := fmt.Sprintf("emit%s passes the records of %q to %s.", g.pascal(n), n.Name, strings.Join(to, ", "))
	if len(to) == 0 {
		doc = fmt.Sprintf("emit%s drops the records of %q: nothing reads them.", g.pascal(n), n.Name)
	}
	f.Comment(doc)
	f.Func().Params(recv).Id("emit" + g.pascal(n)).Params(jen.Id("r").Add(typeCode(n.Out))).Block(body...)
}

// hashCall hashes the key x of keyed node n.
func (g *gen) hashCall(n *ir.Node, x jen.Code) jen.Code {
	return jen.Id("hashKey" + g.pascal(n)).Call(x)
}

// keyedFuncs emits, for every keyed node, the hash of its key and the
// serializers of its state's entries.
func (g *gen) keyedFuncs(f *jen.File) {
	cg := newCodecGen(f)
	for _, n := range g.p.Nodes {
		if n.KeyType == nil {
			continue
		}
		f.Comment(fmt.Sprintf("hashKey%s hashes a key of %q. The hash decides the key group, which", g.pascal(n), n.Name))
		f.Comment("checkpoints keep: it must never change.")
		f.Func().Id("hashKey" + g.pascal(n)).Params(jen.Id("k").Add(typeCode(n.KeyType))).Uint64().BlockFunc(func(b *jen.Group) {
			if basic := basicOf(n.KeyType); basic != nil {
				b.Return(hashExpr(jen.Id("k"), n.KeyType, basic))
				return
			}
			b.Var().Id("h").Uint64()
			hashStmts(b, jen.Id("k"), n.KeyType, 0)
			b.Return(jen.Id("h"))
		})
		val := g.stateValue(n)
		f.Comment(fmt.Sprintf("The schema of the state of %q, recorded in every checkpoint.", n.Name))
		f.Const().Defs(
			jen.Id(g.id(n)+"KeySchema").Op("=").Lit(schema(n.KeyType)),
			jen.Id(g.id(n)+"ValueSchema").Op("=").Lit(schema(val)),
		)
		f.Comment(fmt.Sprintf("encode%sEntry writes one key and value of the state of %q.", g.pascal(n), n.Name))
		f.Func().Id("encode"+g.pascal(n)+"Entry").Params(jen.Id("w").Op("*").Qual(codecPath, "Writer"), jen.Id("k").Add(typeCode(n.KeyType)), jen.Id("v").Op("*").Add(typeCode(val))).BlockFunc(func(b *jen.Group) {
			cg.encode(b, jen.Id("k"), n.KeyType, 0)
			cg.encodePtr(b, jen.Id("v"), val)
		})
		f.Comment(fmt.Sprintf("decode%sEntry reads one key and value of the state of %q.", g.pascal(n), n.Name))
		f.Func().Id("decode"+g.pascal(n)+"Entry").Params(jen.Id("r").Op("*").Qual(codecPath, "Reader")).Params(typeCode(n.KeyType), jen.Op("*").Add(typeCode(val))).BlockFunc(func(b *jen.Group) {
			b.Var().Id("k").Add(typeCode(n.KeyType))
			b.Id("v").Op(":=").New(typeCode(val))
			cg.decode(b, "r", jen.Id("k"), n.KeyType, 0)
			cg.decodePtr(b, jen.Id("v"), val)
			b.Return(jen.Id("k"), jen.Id("v"))
		})
	}
	cg.flush()
}

// controlMethods emits flush, barrier and end: what the chain does on
// idle, on a checkpoint barrier and at the end of its input.
func (g *gen) controlMethods(f *jen.File, c *chain, recv *jen.Statement) {
	var flush, barrier, end []jen.Code
	snap := jen.Id("s")
	// The snapshot: the source's position, every keyed state, the sinks'
	// pre-commit. Taken before the barrier goes on, so that it holds the
	// effect of exactly the records before the barrier.
	barrier = append(barrier, jen.Id("s").Op(":=").Id("c").Dot("task").Dot("Begin").Call(jen.Id("id")))
	if c.head.Kind == ir.Source {
		barrier = append(barrier, jen.Id("c").Dot("src").Dot("Snapshot").Call(snap, jen.Id(g.constName(c.head))))
	}
	for _, n := range c.nodes {
		if n.Kind.Stateful() {
			barrier = append(barrier, jen.Qual(runtimePath, "SnapshotMemory").Call(snap, jen.Id(g.constName(n)), jen.Id("c").Dot(g.id(n)+"State"),
				jen.Id("hashKey"+g.pascal(n)), jen.Id("encode"+g.pascal(n)+"Entry"), jen.Id(g.id(n)+"KeySchema"), jen.Id(g.id(n)+"ValueSchema")))
		}
	}
	for _, n := range c.nodes {
		if n.Kind.Stateful() && n.Emit == "final" {
			st := jen.Id("c").Dot(g.id(n) + "State")
			var val jen.Code = jen.Op("*").Id("v")
			k := jen.Id("_")
			if n.Kind == ir.Aggregate && n.Result != nil {
				val = g.aggregateResult(n, jen.Id("k"), jen.Id("v"))
				k = jen.Id("k")
			}
			end = append(end, jen.Comment(fmt.Sprintf("%s emits one result per key now that its input has ended.", n.Name)),
				jen.For(jen.List(k, jen.Id("v")).Op(":=").Range().Add(st).Dot("All")).Block(
					jen.Id("c").Dot("emit"+g.pascal(n)).Call(val),
				))
		}
	}
	end = append(end, jen.Id("s").Op(":=").Id("c").Dot("task").Dot("Final").Call())
	if c.head.Kind == ir.Source {
		end = append(end, jen.Id("c").Dot("src").Dot("Snapshot").Call(snap, jen.Id(g.constName(c.head))))
	}
	for _, n := range c.nodes {
		if n.Kind == ir.Sink {
			sink := jen.Id("c").Dot(g.id(n) + "Sink")
			flush = append(flush, jen.Add(sink).Dot("Flush").Call())
			barrier = append(barrier, jen.Add(sink).Dot("PreCommit").Call(snap, jen.Id(g.constName(n))))
			end = append(end, jen.Add(sink).Dot("PreCommit").Call(snap, jen.Id(g.constName(n))), jen.Add(sink).Dot("End").Call())
		}
	}
	for _, e := range c.outs {
		out := jen.Id("c").Dot(g.outField(e))
		flush = append(flush, jen.Add(out).Dot("Flush").Call())
		barrier = append(barrier, jen.Add(out).Dot("Barrier").Call(jen.Id("id")))
		end = append(end, jen.Add(out).Dot("End").Call())
	}
	barrier = append(barrier, jen.Id("c").Dot("task").Dot("Submit").Call(snap))
	end = append(end, jen.Id("c").Dot("task").Dot("Submit").Call(snap))
	f.Comment("flush hands partial batches downstream; the chain calls it when it has nothing")
	f.Comment("to do.")
	f.Func().Params(recv).Id("flush").Params().Block(flush...)
	f.Comment("barrier takes the chain's snapshot for checkpoint id, passes the barrier on after")
	f.Comment("the records before it, and hands the snapshot to the writer.")
	f.Func().Params(recv).Id("barrier").Params(jen.Id("id").Int64()).Block(barrier...)
	f.Comment("end runs when the chain's input has ended: it emits what waited for the end, takes")
	f.Comment("the chain's part of the final checkpoint, and tells every receiver that nothing")
	f.Comment("follows.")
	f.Func().Params(recv).Id("end").Params().Block(end...)
}
