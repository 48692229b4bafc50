package codegen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/ir"
)

// chainGen emits one chain: its type, constructor, loop, a method per node
// and the control methods (flush, barrier, watermark, tick, end). What a
// node contributes to each comes from its nodeGen.
type chainGen struct {
	g     *gen
	c     *chain
	f     *jen.File
	recv  *jen.Statement
	nodes []nodeGen
	// members names the fields and methods of the chain's type that are
	// made of a node's identifier.
	members *namer
	// timed is set when the chain's records carry an event time: then
	// every per-record method takes it as a second argument.
	timed bool
	// writtenIn holds the per-record methods (toX, emitX) whose code is
	// written into their only caller: a source's loop (emitCode with
	// writeIn), direct (a combined head's toX). They are not made.
	writtenIn map[string]bool
}

// nodeGen is what one node contributes to its chain's code. base gives
// every method a default that contributes nothing.
type nodeGen interface {
	node() *ir.Node
	// fields declares the node's fields in the chain struct.
	fields(s *jen.Group)
	// init makes them in the constructor (j and sub are in scope).
	init(b *jen.Group)
	// doc describes the node for its method's comment.
	doc() string
	// record is the body of the node's per-record method (r, and ts when
	// timed, are in scope).
	record(b *jen.Group)
	// watermark runs when the chain's watermark reaches w.
	watermark(b *jen.Group)
	// tick runs every runtime.Linger, for processing time.
	tick(b *jen.Group)
	// snapshot adds the node's state to snapshot s.
	snapshot(b *jen.Group)
	// end runs when the input has ended, before the final snapshot.
	end(b *jen.Group)
	// final adds to the final snapshot s (sinks pre-commit there).
	final(b *jen.Group)
	// flush hands buffered output on.
	flush(b *jen.Group)
	// inputWatermark and ticks say what the chain's loop must provide.
	inputWatermark() bool
	ticks() bool
}

// base is the default nodeGen.
type base struct {
	cg *chainGen
	n  *ir.Node
}

func (b *base) node() *ir.Node     { return b.n }
func (b *base) doc() string        { return string(b.n.Kind) }
func (*base) fields(*jen.Group)    {}
func (*base) init(*jen.Group)      {}
func (*base) record(*jen.Group)    {}
func (*base) watermark(*jen.Group) {}
func (*base) tick(*jen.Group)      {}
func (*base) snapshot(*jen.Group)  {}
func (*base) end(*jen.Group)       {}
func (*base) final(*jen.Group)     {}
func (*base) flush(*jen.Group)     {}
func (*base) inputWatermark() bool { return false }
func (*base) ticks() bool          { return false }

// member is the name that pattern makes of the node's identifier in its
// chain's type (see chainGen.member).
func (b *base) member(pattern string) string { return b.cg.member(pattern, b.n) }

// field is c.xSuffix, a field of node x in its chain.
func (b *base) field(suffix string) *jen.Statement {
	return jen.Id("c").Dot(b.member("%s" + suffix))
}

// in is the node's input record in its per-record method: r, or *r when
// the method takes it by reference (see byRef).
func (b *base) in() *jen.Statement {
	if b.cg.byRef(b.n) {
		return jen.Op("*").Id("r")
	}
	return jen.Id("r")
}

// ref is what the node passes to its emit method for its output record
// x, a variable: its address when the emit method takes it by reference
// (emitsRef), else x.
func (b *base) ref(x *jen.Statement) *jen.Statement {
	if emitsRef(b.n) {
		return jen.Op("&").Add(x)
	}
	return x
}

// inRef is the address of the node's input record in its per-record
// method: r when the method takes it by reference (see byRef), else &r.
func (b *base) inRef() *jen.Statement {
	if b.cg.byRef(b.n) {
		return jen.Id("r")
	}
	return jen.Op("&").Id("r")
}

// arg is the argument for the record parameter of user function f in the
// node's per-record method: the record (in) or, when f takes it by
// pointer (ir.Func.Ref), its address (inRef), which spares a copy.
func (b *base) arg(f *ir.Func) *jen.Statement {
	return pass(f, b.in(), b.inRef())
}

// pass is val, a record, or ref, its address, when user function f takes
// its record by pointer (ir.Func.Ref).
func pass(f *ir.Func, val, ref *jen.Statement) *jen.Statement {
	if f.Ref {
		return ref
	}
	return val
}

// byRef reports whether node n's per-record method takes its record by
// reference: a map, filter, flatmap or sink fused behind a node whose emit
// method has its record by reference (emitsRef: a source, whose read loop
// reads each record into one variable, or a map, filter or flatmap), or
// the head of a chain that reads an inbox when it reads its record only
// to pass it on to user functions (refHead). A record passed by value is
// copied into every method on its way (a Nexmark event is 72 bytes, a bid
// 48), and a copy of a struct of more than four fields just stored from
// the argument registers stalls: the loads are wider than the stores
// (store forwarding fails). By reference, it is copied only into the
// user's functions that take it by value.
func (cg *chainGen) byRef(n *ir.Node) bool {
	h := cg.c.head
	if n == h {
		return refHead(h)
	}
	if len(n.Inputs) != 1 || n.Inputs[0].Side != "" {
		return false
	}
	from := cg.g.p.Nodes[n.Inputs[0].From]
	if cg.g.chainOf[from.ID] != cg.c || !emitsRef(from) {
		return false
	}
	switch n.Kind {
	case ir.Map, ir.Filter, ir.FlatMap, ir.Sink:
		return true
	}
	return false
}

// emitsRef reports whether node n's emit method (of its main output)
// takes the record by reference: a source's, whose read loop passes the
// address of the variable it read into, and, when the record is one Go
// keeps in memory (inMemory), a map's (the address of its result), a
// filter's (its input's) and a flatmap's (the address of each record its
// function emits: its emit function takes the record by value, as the
// user's signature says, and passes its address on). Their consumers in
// the chain get the address (byRef) or a copy; an Out copies the record
// into its batch.
func emitsRef(n *ir.Node) bool {
	switch n.Kind {
	case ir.Source:
		return true
	case ir.Map, ir.Filter, ir.FlatMap:
		return inMemory(n.Out)
	}
	return false
}

// refHead reports whether the per-record method of chain head h, which
// reads an inbox, takes its record by reference: its batches' records
// and its sender's by a call (direct) are then not copied before the
// user's functions get them. Only heads that never write to the record
// nor keep its address: windows and a process of one input. A keyed
// reduce keeps the record itself as its state, a count window keeps it in
// its window, and windows with a trigger keep the function that adds it
// (TriggeredWindows.Add), which would move every record that a sender
// passes by reference to the heap.
func refHead(h *ir.Node) bool {
	if h.Kind == ir.Source || h.Paired() || len(h.Inputs) != 1 {
		return false
	}
	switch h.Kind {
	case ir.Process:
		return true
	case ir.Reduce, ir.Aggregate:
		return h.Window != nil && h.Window.Kind != "count" && h.Trigger == nil
	}
	return false
}

// byCall reports whether the receiver of edge e may take its records by
// a call from its sender (runtime.Inbox.Calls): a chain head with one
// input that may run in its sender's goroutine (runtime.Inbox.Direct),
// so not a join's, nor one that needs ticks behind another chain than a
// source's. The sender then holds the receiver's chain, and calls its
// direct method while the inbox says so (ByCall).
func (g *gen) byCall(e crossEdge) bool { return g.takesCalls(e.to) }

// takesCalls reports whether chain head h offers its sender to take
// records by a call (see byCall).
func (g *gen) takesCalls(h *ir.Node) bool {
	if h.Kind == ir.Source || h.Paired() || len(h.Inputs) != 1 {
		return false
	}
	return !g.ticks(g.chainOf[h.ID]) || g.opts.Test || g.chainOf[h.Inputs[0].From].head.Kind == ir.Source
}

// callField is the field of the sender of edge e that holds its
// receiver's chain when that takes the records by a call (byCall), else
// nil: countsByCall. build sets it, so the name comes from the sender's
// chain's members before its code is made.
func (g *gen) callField(e crossEdge) string {
	key := nameKey{pattern: "%sByCall", of: e.to.Name}
	return g.chainMembers(g.chainOf[e.from.ID]).name(key, derive(key.pattern, g.id(e.to)))
}

// chainMembers names the fields and methods of chain c's type (see
// chainGen.members).
func (g *gen) chainMembers(c *chain) *namer {
	nm := g.members[c]
	if nm == nil {
		nm = newNamer("", nil, nil)
		g.members[c] = nm
	}
	return nm
}

// emit calls the node's emit method with x (and the event time ts).
func (b *base) emit(x jen.Code, ts jen.Code) jen.Code {
	return b.cg.emitCall(b.n, x, ts)
}

// fn names a user function.
func fn(f *ir.Func) *jen.Statement { return jen.Qual(f.PkgPath, f.Name) }

// chainCode emits one chain.
func (g *gen) chainCode(f *jen.File, c *chain) {
	// The chain type's own fields and methods (sub, in, inputWM, run,
	// recordsLeft, flush, ...) are not named by members: none of them is a
	// name that a pattern of a member makes (toX, emitX, toXLeft, xState,
	// xTimer, xToY, ...).
	cg := &chainGen{g: g, c: c, f: f, recv: jen.Id("c").Op("*").Id(g.chainType(c)), members: g.chainMembers(c), writtenIn: map[string]bool{}}
	h := c.head
	cg.timed = h.Timed || h.Timestamps != nil
	for _, n := range c.nodes {
		cg.nodes = append(cg.nodes, g.nodeGen(cg, n))
	}
	cg.structType()
	cg.constructor()
	cg.loop()
	for _, ng := range cg.nodes {
		n := ng.node()
		if n.Kind != ir.Source && !n.Paired() && !cg.writtenIn[cg.member("to%s", n)] {
			cg.nodeMethod(ng)
		}
		switch x := ng.(type) {
		case *windowGen:
			x.resultMethod()
		case *triggerGen:
			x.resultMethod()
		case *countGen:
			x.resultMethod()
		case *processGen:
			x.methods()
		case *joinGen:
			x.methods()
		}
		if n.Kind != ir.Sink {
			cg.emitMethod(n, "")
			if n.Window != nil && !n.Window.Processing && n.Window.Kind != "count" && (n.Kind == ir.Aggregate || n.Kind == ir.Reduce) {
				cg.emitMethod(n, "late")
			}
			if n.Kind == ir.Join && n.Timed && (n.Window == nil || !n.Window.Processing) {
				cg.emitMethod(n, joinLateSide[0])
				cg.emitMethod(n, joinLateSide[1])
			}
			if sendsDeadLetters(n) {
				cg.emitMethod(n, deadLetter)
			}
			for _, side := range n.Sides {
				cg.emitMethod(n, side.Name)
			}
		}
	}
	cg.combineMethods()
	cg.controlMethods()
	cg.blame()
}

// member is the name that pattern makes of node n's identifier (see
// derive) among the fields and methods of the chain's type: member("to%s",
// counts) is toCounts.
func (cg *chainGen) member(pattern string, n *ir.Node) string {
	return cg.members.name(nameKey{pattern: pattern, of: n.Name}, derive(pattern, cg.g.id(n)))
}

// outField is the field that holds the Out of edge e: wordsToCounts.
func (cg *chainGen) outField(e crossEdge) string {
	key := nameKey{pattern: "%sTo%s", of: fmt.Sprintf("%s %s %d", e.from.Name, e.to.Name, e.input)}
	return cg.members.name(key, derive(key.pattern, cg.g.id(e.from), cg.g.id(e.to)))
}

// params are the parameters of a per-record method taking a record of
// type t.
func (cg *chainGen) params(t *ir.Type) []jen.Code {
	ps := []jen.Code{jen.Id("r").Add(typeCode(t))}
	if cg.timed {
		ps = append(ps, jen.Id("ts").Int64())
	}
	return ps
}

// args passes a record x (and its event time ts) to a per-record method.
func (cg *chainGen) args(x, ts jen.Code) []jen.Code {
	if cg.timed {
		return []jen.Code{x, ts}
	}
	return []jen.Code{x}
}

func (cg *chainGen) emitCall(n *ir.Node, x, ts jen.Code) jen.Code {
	return jen.Id("c").Dot(cg.member("emit%s", n)).Call(cg.args(x, ts)...)
}

// cacheLine is the size of the pads around a chain's fields: a cache line
// of amd64 and arm64 (64 bytes; 128 on Apple's arm64, where two lines are
// fetched together, would only make the false sharing rarer).
const cacheLine = 64

func (cg *chainGen) structType() {
	g, c, h := cg.g, cg.c, cg.c.head
	typ := g.chainType(c)
	var names []string
	for _, n := range c.nodes[1:] {
		names = append(names, n.Name)
	}
	doc := fmt.Sprintf("%s is one subtask of %s %q", typ, h.Kind, h.Name)
	if len(names) > 0 {
		doc += fmt.Sprintf(" and the nodes fused with it: %s", strings.Join(names, ", "))
	}
	cg.f.Comment(doc + ".")
	cg.f.Type().Id(typ).StructFunc(func(s *jen.Group) {
		// The chains of a stage's subtasks are allocated one after the
		// other and land side by side in memory: without the pads, the
		// counts that one subtask writes at every record can share a cache
		// line with the fields that the next subtask, on the other core,
		// reads at every record, and both run at half speed in the runs
		// where the allocator places them so (q3 at parallelism 2 took 1.5
		// times the CPU in about half its runs).
		s.Id("_").Index(jen.Lit(cacheLine)).Byte().Comment("keeps the fields below off the cache lines of whatever is allocated before the chain")
		s.Id("sub").Int().Comment("the subtask's index")
		if cg.snapshots() {
			s.Id("task").Op("*").Qual(runtimePath, "Task").Comment("its part in checkpoints")
		}
		switch {
		case h.Kind == ir.Source:
			s.Id("src").Op("*").Add(g.sourceType(h)).Types(typeCode(h.Out))
			s.Id("ctl").Op("*").Qual(runtimePath, "SourceCtl")
			if h.Timestamps != nil {
				s.Id("wm").Op("*").Add(g.watermarksType(h)).Comment("the source's event-time progress")
			}
		case h.Paired():
			s.Id("in").Op("*").Qual(runtimePath, "Pair").Types(crossRecord(cg.timed, h.Inputs[0].Type), crossRecord(cg.timed, h.Inputs[1].Type)).Comment("the left and right inputs")
			s.Id("inputWM").Int64().Comment("watermark of the sender of the batch being processed")
		default:
			s.Id("in").Op("*").Qual(runtimePath, "Inbox").Types(g.edgeRecord(cg.timed, h, 0))
			if cg.needsInputWM() {
				s.Id("inputWM").Int64().Comment("watermark of the sender of the batch being processed")
			}
		}
		if h.Kind != ir.Source && g.takesCalls(h) {
			s.Id("inCall").Bool().Comment("set while direct runs: a panic that leaves it set came from this chain (see blame)")
		}
		for _, e := range c.outs {
			s.Id(cg.outField(e)).Op("*").Qual(runtimePath, "Out").Types(g.edgeRecord(cg.timed, e.to, e.input)).Comment(fmt.Sprintf("to %s, %s", e.to.Name, e.to.Inputs[e.input].Partition))
			if g.byCall(e) {
				s.Id(g.callField(e)).Op("*").Id(g.chainType(g.chainOf[e.to.ID])).Comment(fmt.Sprintf("%s, when it takes the records by a call; set by %s", e.to.Name, g.own("build")))
			}
		}
		cg.combineFields(s)
		for _, ng := range cg.nodes {
			ng.fields(s)
		}
		for _, k := range cg.chainCollectors() {
			s.Id(cg.collectField(k)).Op("*").Qual(runtimePath, "DriverSink").Types(typeCode(k.t)).Comment(fmt.Sprintf("collects %s.%s for the test driver", k.n.Name, k.side))
		}
		s.Id("meter").Op("*").Qual(runtimePath, "Meter").Comment("the subtask's metrics")
		what := fmt.Sprintf("records emitted by %s, then late for them", cg.nodeNames())
		if h.Kind == ir.Join {
			what += " (the join's left input), then late of its right input"
		}
		s.Id("counts").Index(jen.Lit(cg.countSlots())).Uint64().Comment(what + "; flush publishes them")
		s.Id("_").Index(jen.Lit(cacheLine)).Byte().Comment("and off those of whatever is allocated after it")
	})
}

// snapshots reports whether the chain has anything to checkpoint: a source
// position, keyed state, a sink's pending files, or its senders'
// watermarks. A chain of stateless operators only passes barriers on, and
// the coordinator expects nothing from it.
func (cg *chainGen) snapshots() bool {
	h := cg.c.head
	if h.Kind == ir.Source || cg.timed {
		return true
	}
	for _, n := range cg.c.nodes {
		if n.Kind.Stateful() || n.Kind == ir.Sink {
			return true
		}
	}
	return false
}

func (cg *chainGen) needsInputWM() bool {
	for _, ng := range cg.nodes {
		if ng.inputWatermark() {
			return true
		}
	}
	return false
}

func (cg *chainGen) needsTicks() bool {
	for _, ng := range cg.nodes {
		if ng.ticks() {
			return true
		}
	}
	return false
}

func (cg *chainGen) constructor() {
	g, c, h := cg.g, cg.c, cg.c.head
	typ := g.chainType(c)
	params := []jen.Code{jen.Id("j").Op("*").Qual(runtimePath, "Job"), jen.Id("sub").Int()}
	switch {
	case h.Kind == ir.Source:
	case h.Paired():
		params = append(params, jen.Id("left").Op("*").Qual(runtimePath, "Inbox").Types(crossRecord(cg.timed, h.Inputs[0].Type)),
			jen.Id("right").Op("*").Qual(runtimePath, "Inbox").Types(crossRecord(cg.timed, h.Inputs[1].Type)))
	default:
		params = append(params, jen.Id("in").Op("*").Qual(runtimePath, "Inbox").Types(g.edgeRecord(cg.timed, h, 0)))
	}
	for _, e := range c.outs {
		params = append(params, jen.Id(cg.outField(e)).Op("*").Qual(runtimePath, "Out").Types(g.edgeRecord(cg.timed, e.to, e.input)))
	}
	cg.f.Func().Id(g.chainNew(c)).Params(params...).Op("*").Id(typ).BlockFunc(func(b *jen.Group) {
		fields := jen.Dict{jen.Id("sub"): jen.Id("sub")}
		switch {
		case h.Kind == ir.Source:
		case h.Paired():
			fields[jen.Id("in")] = jen.Qual(runtimePath, "NewPair").Call(jen.Id("left"), jen.Id("right"))
		default:
			fields[jen.Id("in")] = jen.Id("in")
		}
		for _, e := range c.outs {
			fields[jen.Id(cg.outField(e))] = jen.Id(cg.outField(e))
		}
		if cg.snapshots() {
			fields[jen.Id("task")] = jen.Id("j").Dot("Task").Call(jen.Id(g.constName(h)), jen.Id("sub"))
		}
		b.Id("c").Op(":=").Op("&").Id(typ).Values(fields)
		if h.Kind == ir.Source {
			b.Id("c").Dot("src").Op("=").Add(g.newSource(h))
			b.Id("c").Dot("ctl").Op("=").Id("c").Dot("src").Dot("Ctl").Call()
			switch {
			case h.Timestamps != nil && (h.Connector == "kafka" || g.opts.Test):
				// Watermarks per partition, or as the test driver sets them.
				b.Id("c").Dot("wm").Op("=").Id("c").Dot("src").Dot("Watermarks").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(h)))
			case h.Timestamps != nil:
				b.Id("c").Dot("wm").Op("=").Qual(runtimePath, "NewWatermarks").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(h)))
			}
			if h.Timestamps != nil && h.Timestamps.MaxDrift > 0 && !g.opts.Test {
				// The subtasks keep within the drift of each other's
				// watermarks (watermark alignment).
				b.Id("c").Dot("src").Dot("Align").Call(jen.Id(g.constName(h)), jen.Id("c").Dot("wm"))
			}
			if sendsDeadLetters(h) {
				emit := jen.Id("c").Dot(cg.member("emit%sDeadLetter", h))
				if cg.timed {
					// A dead letter has the newest event time read so far:
					// never late, and never ahead of the records.
					emit = jen.Func().Params(jen.Id("r").String()).Block(
						jen.Add(emit).Call(jen.Id("r"), jen.Id("c").Dot("wm").Dot("Latest").Call()))
				}
				b.Id("c").Dot("src").Dot("OnDeadLetter").Call(emit)
			}
		} else if cg.timed {
			b.Id("c").Dot("task").Dot("RestoreWatermarks").Call(jen.Id(g.constName(h)), jen.Id("c").Dot("in"))
		}
		cg.combineInit(b)
		for _, ng := range cg.nodes {
			ng.init(b)
		}
		for _, k := range cg.chainCollectors() {
			b.Id("c").Dot(cg.collectField(k)).Op("=").Qual(runtimePath, "NewDriverSink").Types(typeCode(k.t)).Call(jen.Id("j"), jen.Id(k.konst), jen.Id("sub"))
		}
		ids := []jen.Code{jen.Id("sub")}
		for _, n := range c.nodes {
			ids = append(ids, jen.Id(g.constName(n)))
		}
		b.Id("c").Dot("meter").Op("=").Id("j").Dot("Meter").Call(ids...)
		if h.Kind != ir.Source {
			b.Id("c").Dot("in").Dot("Observe").Call(jen.Id("c").Dot("meter"))
			task := jen.Id("c").Dot("task")
			if !cg.snapshots() {
				task = jen.Nil()
			}
			b.Id("c").Dot("in").Dot("Bind").Call(task, jen.Id("c").Dot("flush"))
			if g.takesCalls(h) {
				b.Id("c").Dot("in").Dot("Calls").Call()
			}
			if cg.needsTicks() {
				b.Id("c").Dot("in").Dot("Ticks").Call()
			}
		}
		for _, e := range c.outs {
			b.Id("c").Dot(cg.outField(e)).Dot("Observe").Call(jen.Id("c").Dot("meter"))
		}
		b.Return(jen.Id("c"))
	})
}

// loop emits the chain's run method: a source's read loop, or an inbox's
// receive loop, with the control events in band.
func (cg *chainGen) loop() {
	h, f := cg.c.head, cg.f
	c := jen.Id("c")
	if h.Kind == ir.Source {
		f.Comment(fmt.Sprintf("run reads source %q until its input ends (and every other source's has). Between", h.Name))
		f.Comment("records it injects the checkpoint barriers the coordinator asks for; it hands")
		f.Comment("partial batches downstream when nothing can be read now, and at least every")
		f.Comment("runtime.Linger.")
		if h.Timestamps != nil {
			f.Comment("Every record gets its event time; the watermark follows the records, at fixed")
			f.Comment("record counts, so that it falls at the same places in every run.")
		}
		// gotAt emits the record: val is the record, ref its address.
		// With writeIn (ref is then r) the loop passes the record on in
		// its own body, not by a call to the source's emit method
		// (emitCode): through the filters behind the source as well, each
		// a call less per record. Go inlines a small emit method, but not
		// one that passes its records to a receiver that may take them by
		// a call and, when it does not, sends them through an Out (two
		// calls, over the inliner's budget): q7's emitBids was a call per
		// bid.
		gotAt := func(val, ref func() *jen.Statement, writeIn bool) []jen.Code {
			emit := []jen.Code{jen.Add(c).Dot(cg.member("emit%s", h)).Call(cg.args(ref(), jen.Id("ts"))...)}
			// A source that nothing reads keeps its method, which drops
			// the records: written in, the loop would not use r.
			if writeIn && len(consumersOf(cg.g.p, h, "")) > 0 {
				e := cg.emitCode(h, "", true)
				emit = append([]jen.Code{jen.Comment(fmt.Sprintf("On to %s: the emit methods written in, a call less per record.", strings.Join(e.to, ", ")))}, e.body...)
			}
			ts := h.Timestamps
			if ts == nil {
				return emit
			}
			var extract jen.Code
			switch {
			case ts.Extract == nil:
				// A Kafka source's record timestamp.
				extract = jen.Add(c).Dot("src").Dot("Timestamp").Call()
			case ts.Extract.Shape == "time":
				extract = jen.Qual(runtimePath, "TimeMillis").Call(fn(ts.Extract).Call(pass(ts.Extract, val(), ref())))
			default:
				extract = fn(ts.Extract).Call(pass(ts.Extract, val(), ref()))
			}
			return append(append([]jen.Code{jen.Id("ts").Op(":=").Add(extract)}, emit...),
				jen.If(jen.List(jen.Id("w"), jen.Id("ok")).Op(":=").Add(c).Dot("wm").Dot("Observe").Call(jen.Id("ts")), jen.Id("ok")).Block(
					jen.Add(c).Dot("watermark").Call(jen.Id("w")),
				),
			)
		}
		got := gotAt(func() *jen.Statement { return jen.Id("r") }, func() *jen.Statement { return jen.Op("&").Id("r") }, false)
		var done, idle []jen.Code
		if ts := h.Timestamps; ts != nil {
			done = append(done,
				jen.If(jen.List(jen.Id("w"), jen.Id("ok")).Op(":=").Add(c).Dot("wm").Dot("Finish").Call(), jen.Id("ok")).Block(
					jen.Add(c).Dot("watermark").Call(jen.Id("w")).Comment("the end of time: every window fires"),
				),
				jen.If(jen.Add(c).Dot("ctl").Dot("AtEnd").Call()).Block(jen.Break()),
				jen.Add(c).Dot("flush").Call(),
			)
			idle = append(idle,
				jen.If(jen.List(jen.Id("w"), jen.Id("ok")).Op(":=").Add(c).Dot("wm").Dot("Pending").Call(), jen.Id("ok")).Block(
					jen.Add(c).Dot("watermark").Call(jen.Id("w")).Comment("nothing to read now: event time goes on"),
				),
				jen.Add(c).Dot("flush").Call(),
			)
			if ts.IdleTimeout > 0 {
				idle = append(idle, jen.If(jen.Add(c).Dot("wm").Dot("Idle").Call(jen.Qual("time", "Now").Call())).Block(
					jen.Add(c).Dot("idle").Call(),
				))
			}
		}
		next := []jen.Code{jen.List(jen.Id("r"), jen.Id("ok")).Op(":=").Add(c).Dot("src").Dot("Next").Call(), jen.Id("ok")}
		callDefer := jen.Null()
		if len(cg.callOuts()) > 0 {
			callDefer = jen.Defer().Add(c).Dot("recoverCall").Call().Comment("a panic names the chain it came from")
		}
		poll := jen.If(jen.Id("id").Op(":=").Add(c).Dot("ctl").Dot("Poll").Call(), jen.Id("id").Op(">").Lit(0)).Block(
			jen.Add(c).Dot("barrier").Call(jen.Id("id")),
		).Else().If(jen.Id("id").Op("<").Lit(0)).Block(
			jen.Add(c).Dot("flush").Call(),
		)
		// none is what the chain does when the source has no record now:
		// its input has ended (done), or not yet (idle).
		var none *jen.Statement
		if h.Timestamps != nil {
			none = jen.If(jen.Add(c).Dot("src").Dot("Done").Call()).Block(done...).
				Else().Block(idle...)
		} else {
			none = jen.If(jen.Add(c).Dot("src").Dot("Done").Call().Op("&&").Add(c).Dot("ctl").Dot("AtEnd").Call()).Block(jen.Break()).
				Else().Block(jen.Add(c).Dot("flush").Call())
		}
		if h.Connector == "generator" && !cg.g.opts.Test {
			cg.generatorLoop(gotAt, none, callDefer, poll)
			return
		}
		step := jen.If(next...).Block(got...).Else().Add(none)
		f.Func().Params(cg.recv).Id("run").Params().Block(
			jen.Defer().Add(c).Dot("src").Dot("Recover").Call().Comment("a panic names the record's file and line"),
			callDefer,
			jen.For().Block(step, poll),
			jen.Add(c).Dot("end").Call(),
		)
		return
	}
	f.Comment(fmt.Sprintf("run takes records and control events from the inbox of %q until every", h.Name))
	f.Comment("input has ended. The inbox aligns barriers: one arrives here once it came from")
	f.Comment("every input, and the senders wait until Release.")
	records := jen.Case(jen.Qual(runtimePath, "Records")).BlockFunc(func(b *jen.Group) {
		if cg.needsInputWM() {
			b.Add(c).Dot("inputWM").Op("=").Add(c).Dot("in").Dot("SenderWatermark").Call(jen.Id("m").Dot("From"))
		}
		b.Add(c).Dot("records").Call(jen.Id("m").Dot("Recs"))
		b.Add(c).Dot("in").Dot("Recycle").Call(jen.Id("m").Dot("Recs"))
	})
	if h.Paired() {
		side := func(s, recs string) []jen.Code {
			return []jen.Code{
				jen.Add(c).Dot("inputWM").Op("=").Add(c).Dot("in").Dot(s).Dot("SenderWatermark").Call(jen.Id("m").Dot("From")),
				jen.Add(c).Dot("records" + s).Call(jen.Id("m").Dot(recs)),
				jen.Add(c).Dot("in").Dot(s).Dot("Recycle").Call(jen.Id("m").Dot(recs)),
			}
		}
		records = jen.Case(jen.Qual(runtimePath, "Records")).Block(
			jen.If(jen.Id("m").Dot("Side").Op("==").Lit(0)).Block(side("Left", "Left")...).Else().Block(side("Right", "Right")...),
		)
	}
	cases := []jen.Code{
		records,
		jen.Case(jen.Qual(runtimePath, "Barrier")).Block(
			jen.Add(c).Dot("barrier").Call(jen.Id("m").Dot("Checkpoint")),
			jen.Add(c).Dot("in").Dot("Release").Call(jen.Id("m").Dot("Checkpoint")),
		),
	}
	if cg.timed {
		cases = append(cases, jen.Case(jen.Qual(runtimePath, "Watermark")).Block(
			jen.Add(c).Dot("watermark").Call(jen.Id("m").Dot("Time")),
		))
	}
	if cg.needsTicks() {
		cases = append(cases, jen.Case(jen.Qual(runtimePath, "Tick")).Block(
			jen.Add(c).Dot("tick").Call(),
		))
	}
	cases = append(cases, jen.Case(jen.Qual(runtimePath, "End")).Block(
		jen.Add(c).Dot("end").Call(),
		jen.Return(jen.False()),
	))
	f.Func().Params(cg.recv).Id("run").Params().Block(
		jen.For(jen.Add(c).Dot("handle").Call(jen.Add(c).Dot("in").Dot("Next").Call())).Block(),
	)
	msg := jen.Qual(runtimePath, "Msg").Types(cg.g.edgeRecord(cg.timed, h, 0))
	if h.Paired() {
		msg = jen.Qual(runtimePath, "PairMsg").Types(crossRecord(cg.timed, h.Inputs[0].Type), crossRecord(cg.timed, h.Inputs[1].Type))
		f.Comment(fmt.Sprintf("handle acts on one event of the inputs of %q: a batch of records of one", h.Name))
		f.Comment("side or a control event of both; false at the end of input. Under a test")
		f.Comment("driver, and when both senders run in one goroutine, it runs in theirs")
		f.Comment("(runtime.Pair.Direct).")
	} else {
		f.Comment(fmt.Sprintf("handle acts on one message of the inbox of %q: a batch of records or a", h.Name))
		f.Comment("control event; false at the end of input. At parallelism 1 with one sender it runs")
		f.Comment("in the sender's goroutine (runtime.Inbox.Direct), called from its sends.")
	}
	f.Func().Params(cg.recv).Id("handle").Params(jen.Id("m").Add(msg)).Bool().Block(
		jen.Switch(jen.Id("m").Dot("Kind")).Block(cases...),
		jen.Return(jen.True()),
	)
	if h.Paired() {
		cg.records("recordsLeft", cg.member("to%sLeft", h), h.Inputs[0].Type, fmt.Sprintf("the left input of %q", h.Name))
		cg.records("recordsRight", cg.member("to%sRight", h), h.Inputs[1].Type, fmt.Sprintf("the right input of %q", h.Name))
		return
	}
	if cg.g.combined(h) {
		cg.mergeRecords()
	} else {
		cg.records("records", cg.member("to%s", h), h.In(), fmt.Sprintf("%q", h.Name))
	}
	if cg.g.takesCalls(h) {
		cg.direct(cg.member("to%s", h), h.In())
	}
}

// direct emits the method that takes one record from the chain's only
// sender when both run in one goroutine (runtime.Inbox.Calls): the call
// saves writing the record into a batch and reading it back, 5% of the
// CPU of examples/nexmark's q7 and q4. The sender calls it as a method of
// this chain's type, not through a function value, and passes the
// record by reference: through a function value the record would escape
// to the heap, and by value a record of more than four fields is copied
// on the way, each copy just after the stores of the argument registers,
// which stalls (the loads are wider than the stores): 6% of q7's CPU. It
// has no deferred recover, which cost 4% of q7's CPU (and kept the call
// from being inlined): it marks the chain as in a call (inCall), and the
// sender's recover names this chain in a panic that came from it (blame).
func (cg *chainGen) direct(to string, t *ir.Type) {
	c, f, h := jen.Id("c"), cg.f, cg.c.head
	r := jen.Id("r")
	if !cg.byRef(h) {
		r = jen.Op("*").Id("r")
	}
	params := []jen.Code{jen.Id("r").Op("*").Add(typeCode(t))}
	if cg.timed {
		params = append(params, jen.Id("ts").Int64())
	}
	f.Comment(fmt.Sprintf("direct passes one record to %q from its only sender, which calls it instead of", h.Name))
	f.Comment("handing over batches when both run in one goroutine (runtime.Inbox.Calls). The")
	f.Comment("record stays the sender's: nothing keeps its address after the call. A panic")
	f.Comment("leaves inCall set, for the sender's recover to name this chain (blame).")
	f.Func().Params(cg.recv).Id("direct").Params(params...).BlockFunc(func(b *jen.Group) {
		b.Add(c).Dot("inCall").Op("=").True()
		b.Add(c).Dot("in").Dot("Took").Call()
		if cg.needsInputWM() {
			b.Add(c).Dot("inputWM").Op("=").Add(c).Dot("in").Dot("SenderWatermark").Call(jen.Lit(0))
		}
		if cg.g.combined(h) && cg.byRef(h) {
			// Its only caller (its batches hold partials, which records
			// merges): the operator's code is written in, a call less per
			// record (q7's buckets, examples/nexmark/README.md).
			cg.writtenIn[to] = true
			b.Comment(fmt.Sprintf("%s %q, written in: %s.", section(h)[:len(section(h))-1], h.Name, cg.nodes[0].doc()))
			cg.nodes[0].record(b)
		} else {
			b.Add(c).Dot(to).Call(cg.args(r, jen.Id("ts"))...)
		}
		b.Add(c).Dot("inCall").Op("=").False()
	})
}

// callOuts are the chain's outputs whose receivers may take the records
// by a call (byCall).
func (cg *chainGen) callOuts() []crossEdge {
	var out []crossEdge
	for _, e := range cg.c.outs {
		if cg.g.byCall(e) {
			out = append(out, e)
		}
	}
	return out
}

// blame emits the method that names, in a panic, the chain that this one
// had called (direct) and that had not returned, innermost first: such a
// chain has no recover of its own. The chain's recovers call it (its
// run's recoverCall for a source, records for a chain that reads an
// inbox) and the blame of the chain that calls it.
func (cg *chainGen) blame() {
	outs := cg.callOuts()
	if len(outs) == 0 {
		return
	}
	g, f := cg.g, cg.f
	f.Comment("blame annotates panic p with the chain that this one passed a record to by a")
	f.Comment("call (direct) if that had not returned, and reports whether it had not.")
	f.Func().Params(cg.recv).Id("blame").Params(jen.Id("p").Any()).Params(jen.Any(), jen.Bool()).BlockFunc(func(b *jen.Group) {
		for _, e := range outs {
			to := g.chainOf[e.to.ID]
			var inner []jen.Code
			if len((&chainGen{g: g, c: to}).callOuts()) > 0 {
				inner = append(inner, jen.List(jen.Id("p"), jen.Id("_")).Op("=").Id("d").Dot("blame").Call(jen.Id("p")))
			}
			inner = append(inner, jen.Return(jen.Qual(runtimePath, "InChain").Call(jen.Id("p"), jen.Lit(to.head.Name), jen.Id("d").Dot("sub")), jen.True()))
			b.If(jen.Id("d").Op(":=").Id("c").Dot(g.callField(e)), jen.Id("d").Op("!=").Nil().Op("&&").Id("d").Dot("inCall")).Block(inner...)
		}
		b.Return(jen.Id("p"), jen.False())
	})
	if cg.c.head.Kind != ir.Source {
		return
	}
	f.Comment("recoverCall, deferred by run, names in a panic the chain that this one passed a")
	f.Comment("record to by a call, when it came from there (blame).")
	f.Func().Params(cg.recv).Id("recoverCall").Params().Block(
		jen.If(jen.Id("p").Op(":=").Recover(), jen.Id("p").Op("!=").Nil()).Block(
			jen.List(jen.Id("p"), jen.Id("_")).Op("=").Id("c").Dot("blame").Call(jen.Id("p")),
			jen.Panic(jen.Id("p")),
		),
	)
}

// records emits the method that passes a batch of records to the method
// to, guarded so that a panic in user code names its record.
func (cg *chainGen) records(name, to string, t *ir.Type, what string) {
	c, f := jen.Id("c"), cg.f
	rec := jen.Id("recs").Index(jen.Id("i"))
	ref := name == "records" && cg.byRef(cg.c.head)
	var call jen.Code = jen.Add(c).Dot(to).Call(rec)
	switch {
	case ref && cg.timed:
		call = jen.Add(c).Dot(to).Call(jen.Op("&").Add(rec).Dot("V"), jen.Add(rec).Dot("TS"))
	case ref:
		call = jen.Add(c).Dot(to).Call(jen.Op("&").Add(rec))
	case cg.timed:
		call = jen.Add(c).Dot(to).Call(jen.Add(rec).Dot("V"), jen.Add(rec).Dot("TS"))
	}
	f.Comment(fmt.Sprintf("%s passes a batch to %s. A panic in user code is reported with the", name, what))
	f.Comment("record that caused it; the deferred check costs nothing per record.")
	var recovered []jen.Code
	if len(cg.callOuts()) > 0 {
		// A panic in a chain that this one called is that chain's, and
		// of a record of its own.
		recovered = append(recovered, jen.If(jen.List(jen.Id("q"), jen.Id("called")).Op(":=").Add(c).Dot("blame").Call(jen.Id("p")), jen.Id("called")).Block(jen.Panic(jen.Id("q"))))
	}
	recovered = append(recovered, jen.Qual(runtimePath, "PanicWithRecord").Call(jen.Id("p"), jen.Id("recs").Index(jen.Id("i"))))
	f.Func().Params(cg.recv).Id(name).Params(jen.Id("recs").Index().Add(crossRecord(cg.timed, t))).Block(
		jen.Id("i").Op(":=").Lit(0),
		jen.Defer().Func().Params().Block(
			jen.If(jen.Id("p").Op(":=").Recover(), jen.Id("p").Op("!=").Nil()).Block(recovered...),
		).Call(),
		jen.For(jen.Empty(), jen.Id("i").Op("<").Len(jen.Id("recs")), jen.Id("i").Op("++")).Block(call),
	)
}

// nodeMethod emits toX, the per-record method of node X.
func (cg *chainGen) nodeMethod(ng nodeGen) {
	n := ng.node()
	name := cg.member("to%s", n)
	cg.f.Comment(fmt.Sprintf("%s is %s %q: %s.", name, section(n)[:len(section(n))-1], n.Name, ng.doc()))
	params := cg.params(n.In())
	if cg.byRef(n) {
		params[0] = jen.Id("r").Op("*").Add(typeCode(n.In()))
	}
	cg.f.Func().Params(cg.recv).Id(name).Params(params...).BlockFunc(ng.record)
}

// emitMethod emits emitX, which passes node X's output records on (or, for
// side "late", the records too late for its window): by a call to every
// consumer fused in this chain, and through an Out to every other. A node
// whose records a source's loop passes on itself (writtenIn) has none.
func (cg *chainGen) emitMethod(n *ir.Node, side string) {
	if side == "" && cg.writtenIn[cg.member("emit%s", n)] {
		return
	}
	e := cg.emitCode(n, side, false)
	what := fmt.Sprintf("the records of %q", n.Name)
	switch {
	case n.Side(side) != nil:
		what = fmt.Sprintf("the side output %s of %q", side, n.Name)
	case side == "late":
		what = fmt.Sprintf("the records too late for the windows of %q", n.Name)
	case side == joinLateSide[0], side == joinLateSide[1]:
		what = fmt.Sprintf("the records of the %s input too late to be paired by %q", strings.TrimPrefix(side, "late-"), n.Name)
	case side == deadLetter && n.Connector == "kafka":
		what = fmt.Sprintf("the malformed records of %q (JSON objects: source, topic, partition, offset, error, record)", n.Name)
	case side == deadLetter:
		what = fmt.Sprintf("the malformed records of %q (JSON objects: source, file, line, error, record)", n.Name)
	}
	doc := fmt.Sprintf("%s passes %s to %s.", e.name, what, strings.Join(e.to, ", "))
	if len(e.to) == 0 {
		doc = fmt.Sprintf("%s drops %s: nothing reads them.", e.name, what)
	}
	cg.f.Comment(doc)
	params := cg.params(e.t)
	if e.byRef {
		params[0] = jen.Id("r").Op("*").Add(typeCode(e.t))
	}
	cg.f.Func().Params(cg.recv).Id(e.name).Params(params...).Block(e.body...)
}

// emitCode is the code of an emit method (emitMethod): its name, its
// record's type, whether it takes the record by reference, its body and
// the nodes it passes the records to.
type emitCode struct {
	name  string
	t     *ir.Type
	byRef bool
	body  []jen.Code
	to    []string
}

// emitCode makes the emit method of node n's output side. With writeIn it
// is the code that a source's loop runs in the method's place, with the
// record's address in r: a filter fused behind n (one that takes the
// record by reference) is written in with what it emits. Each method so
// written in is marked writtenIn, and is not made.
func (cg *chainGen) emitCode(n *ir.Node, side string, writeIn bool) emitCode {
	g := cg.g
	var body []jen.Code
	var to []string
	t := n.Out
	name := cg.member("emit%s", n)
	if writeIn {
		cg.writtenIn[name] = true
	}
	sideOut := n.Side(side) // a process's own, whatever its name
	switch {
	case sideOut != nil:
		t, name = sideOut.Type, cg.sideEmit(n, side)
	case side == "late":
		t = n.In()
		name = cg.member("emit%sLate", n)
	case side == joinLateSide[0]:
		t = n.Inputs[0].Type
		name = cg.member("emit%sLeftLate", n)
	case side == joinLateSide[1]:
		t = n.Inputs[1].Type
		name = cg.member("emit%sRightLate", n)
	case side == deadLetter:
		t = ir.StringType
		name = cg.member("emit%sDeadLetter", n)
	}
	switch {
	case side == "":
		body = append(body, cg.count(n, false))
	case sideOut != nil:
	case side == "late", side == joinLateSide[0]:
		body = append(body, cg.count(n, true))
	case side == joinLateSide[1]:
		body = append(body, cg.countLateRight())
	}
	// A source, map, filter or flatmap passes its record by reference
	// (emitsRef): a large record (a Nexmark event, a bid) copied into
	// every call costs a few percent of the whole job.
	byRef := side == "" && emitsRef(n)
	r := func() *jen.Statement {
		if byRef {
			return jen.Op("*").Id("r")
		}
		return jen.Id("r")
	}
	consumers := consumersOf(g.p, n, side)
	// Hash edges that key the record by the same function share its
	// hash, computed once (a node's hashKey depends on its key's type
	// only): a stream fanned out to several operators keyed alike. An
	// edge whose receiver may take the record by a call hashes only when
	// it batches, and keeps its own.
	hashKey := func(e crossEdge) *ir.Func {
		if len(e.to.Keys) == 2 {
			return e.to.Keys[e.input]
		}
		return e.to.Key
	}
	// Each node has its own ir.Func: they are told apart by name.
	keyName := func(f *ir.Func) string { return f.PkgPath + "." + f.Name }
	shared := map[string]int{}
	for _, e := range consumers {
		if g.chainOf[e.to.ID] != cg.c && e.to.Inputs[e.input].Partition == ir.Hash && !g.byCall(e) && !g.combined(e.to) {
			shared[keyName(hashKey(e))]++
		}
	}
	hashVars := map[string]string{}
	for _, e := range consumers {
		to = append(to, e.to.Name)
		if g.chainOf[e.to.ID] == cg.c {
			x := r()
			if byRef && cg.byRef(e.to) {
				x = jen.Id("r")
			}
			if writeIn && byRef && e.to.Kind == ir.Filter && cg.byRef(e.to) {
				cg.writtenIn[cg.member("to%s", e.to)] = true
				var kept []jen.Code
				inner := cg.emitCode(e.to, "", true)
				if !emitsRef(e.to) && len(inner.to) > 0 {
					// Its emit method would take the record by value.
					kept = append(kept, jen.Id("r").Op(":=").Op("*").Id("r"))
				}
				kept = append(kept, inner.body...)
				body = append(body,
					jen.Comment(fmt.Sprintf("%s %q: filter %s.", section(e.to)[:len(section(e.to))-1], e.to.Name, e.to.Fn.Name)),
					jen.If(fn(e.to.Fn).Call(pass(e.to.Fn, jen.Op("*").Id("r"), jen.Id("r")))).Block(kept...))
				continue
			}
			body = append(body, jen.Id("c").Dot(cg.member("to%s", e.to)).Call(cg.args(x, jen.Id("ts"))...))
			continue
		}
		out := jen.Id("c").Dot(cg.outField(e))
		rec := r()
		if cg.timed {
			rec = jen.Qual(runtimePath, "Timed").Types(typeCode(t)).Values(jen.Dict{jen.Id("TS"): jen.Id("ts"), jen.Id("V"): r()})
		}
		var send []jen.Code
		switch e.to.Inputs[e.input].Partition {
		case ir.Hash:
			key := hashKey(e)
			addr := jen.Op("&").Id("r")
			if byRef {
				addr = jen.Id("r")
			}
			if g.combined(e.to) {
				send = cg.combineSend(e, r(), addr)
				break
			}
			hash := g.hashCall(e.to, fn(key).Call(pass(key, r(), addr)))
			if name := keyName(key); shared[name] > 1 && !g.byCall(e) {
				v, ok := hashVars[name]
				if !ok {
					v = fmt.Sprintf("h%d", len(hashVars))
					hashVars[name] = v
					body = append(body, jen.Id(v).Op(":=").Add(hash))
				}
				hash = jen.Id(v)
			}
			// The record is written into its batch in place
			// (runtime.Out.HashSlot), not built and passed by value:
			// every copy of a large record costs a stall.
			slot := jen.Add(out).Dot("HashSlot").Call(hash)
			if cg.timed {
				send = []jen.Code{
					jen.Id("s").Op(":=").Add(slot),
					jen.Id("s").Dot("TS").Op("=").Id("ts"),
					jen.Id("s").Dot("V").Op("=").Add(r()),
				}
			} else {
				send = []jen.Code{jen.Op("*").Add(slot).Op("=").Add(r())}
			}
		case ir.Forward:
			send = []jen.Code{jen.Add(out).Dot("Forward").Call(rec)}
		case ir.Broadcast:
			send = []jen.Code{jen.Add(out).Dot("Broadcast").Call(rec)}
		default:
			send = []jen.Code{jen.Add(out).Dot("Rebalance").Call(rec)}
		}
		if !g.byCall(e) {
			if len(send) > 1 && len(consumers) > 1 {
				// A block of its own: s is declared once per output.
				body = append(body, jen.Block(send...))
			} else {
				body = append(body, send...)
			}
			continue
		}
		// The receiver may run in this goroutine and take the record by
		// a call (runtime.Inbox.Calls): no batch, no hash, and no copy.
		ref := jen.Op("&").Id("r")
		if byRef {
			ref = jen.Id("r")
		}
		body = append(body, jen.If(jen.Id("d").Op(":=").Id("c").Dot(g.callField(e)), jen.Id("d").Op("!=").Nil()).Block(
			jen.Id("d").Dot("direct").Call(cg.args(ref, jen.Id("ts"))...),
		).Else().Block(send...))
	}
	if k := g.collect[n.Name+"."+side]; k != nil && len(to) == 0 {
		body = append(body, jen.Id("c").Dot(cg.collectField(k)).Dot("Write").Call(r()))
		to = append(to, "the test driver")
	}
	return emitCode{name: name, t: t, byRef: byRef, body: body, to: to}
}

// count counts one record that node n emitted (or, late, one too late for
// it): a plain increment of the chain's own counter, which flush
// publishes to the metrics.
func (cg *chainGen) count(n *ir.Node, late bool) jen.Code {
	i := slices.Index(cg.c.nodes, n)
	if late {
		i += len(cg.c.nodes)
	}
	return jen.Id("c").Dot("counts").Index(jen.Lit(i)).Op("++")
}

// countLateRight counts one record of a join's right input too late to be
// paired: a join heads its chain, and its chain's counts have one more
// slot, after the emitted and late ones, for these (metrics.Chain.Publish).
func (cg *chainGen) countLateRight() jen.Code {
	return jen.Id("c").Dot("counts").Index(jen.Lit(2 * len(cg.c.nodes))).Op("++")
}

// countSlots is the length of the chain's counts (see count).
func (cg *chainGen) countSlots() int {
	if cg.c.head.Kind == ir.Join {
		return 2*len(cg.c.nodes) + 1
	}
	return 2 * len(cg.c.nodes)
}

// nodeNames lists the chain's nodes.
func (cg *chainGen) nodeNames() string {
	var names []string
	for _, n := range cg.c.nodes {
		names = append(names, n.Name)
	}
	return strings.Join(names, ", ")
}

// deadLetter is the side output of a file or Kafka source's malformed records.
const deadLetter = "dead-letter"

// joinLateSide are the side outputs of a join's records too late to be
// paired, of its left and its right input.
var joinLateSide = [2]string{"late-left", "late-right"}

// sendsDeadLetters reports whether n is a file or Kafka source whose malformed
// records go to its side output dead-letter.
func sendsDeadLetters(n *ir.Node) bool {
	if n.Kind != ir.Source || n.Connector != "file" && n.Connector != "kafka" {
		return false
	}
	for _, o := range n.Options {
		if o.Name == "on-error" {
			return o.Value == deadLetter
		}
	}
	return false
}

// consumersOf returns the nodes that read node n's output side ("" for the
// main output).
func consumersOf(p *ir.Pipeline, n *ir.Node, side string) []crossEdge {
	var out []crossEdge
	for _, m := range p.Nodes {
		for i, e := range m.Inputs {
			if e.From == n.ID && e.Side == side {
				out = append(out, crossEdge{from: n, to: m, input: i})
			}
		}
	}
	return out
}

// controlMethods emits flush, barrier, watermark, tick and end: what the
// chain does on idle, on a checkpoint barrier, when event time advances,
// on a processing-time tick and at the end of its input.
func (cg *chainGen) controlMethods() {
	c, f := cg.c, cg.f
	h := c.head
	s := jen.Id("s")

	f.Comment("flush hands partial batches downstream; the chain calls it when it has nothing")
	f.Comment("to do, and at least every runtime.Linger.")
	f.Func().Params(cg.recv).Id("flush").Params().BlockFunc(func(b *jen.Group) {
		for _, ng := range cg.nodes {
			ng.flush(b)
		}
		for _, e := range c.outs {
			b.Id("c").Dot(cg.outField(e)).Dot("Flush").Call()
		}
		b.Id("c").Dot("meter").Dot("Publish").Call(jen.Id("c").Dot("counts").Index(jen.Empty(), jen.Empty()))
	})

	// The snapshot: the source's position, every keyed state, the sinks'
	// pre-commit. Taken before the barrier goes on, so that it holds the
	// effect of exactly the records before the barrier; handed to the
	// writer before the barrier goes on too, since passing the barrier may
	// wait for room downstream (backpressure, as a record would), and the
	// snapshot can be written meanwhile. The stall that a checkpoint's
	// figures report is the time from Begin to Submit.
	if cg.snapshots() {
		f.Comment("barrier takes the chain's snapshot for checkpoint id, hands it to the writer, and")
		f.Comment("passes the barrier on after the records before it.")
	} else {
		f.Comment("barrier passes checkpoint barrier id downstream, after the records before it:")
		f.Comment("the chain has no state of its own to snapshot.")
	}
	f.Func().Params(cg.recv).Id("barrier").Params(jen.Id("id").Int64()).BlockFunc(func(b *jen.Group) {
		if cg.snapshots() {
			b.Add(s).Op(":=").Id("c").Dot("task").Dot("Begin").Call(jen.Id("id"))
			cg.positions(b)
			for _, ng := range cg.nodes {
				ng.snapshot(b)
			}
			for _, k := range cg.chainCollectors() {
				b.Id("c").Dot(cg.collectField(k)).Dot("PreCommit").Call(s, jen.Id(k.konst))
			}
			b.Id("c").Dot("task").Dot("Submit").Call(s)
		}
		for _, e := range cg.combineOuts() {
			b.Id("c").Dot(cg.combField(e)).Dot("Drain").Call(jen.Id("c").Dot(cg.sendField(e)))
		}
		for _, e := range c.outs {
			b.Id("c").Dot(cg.outField(e)).Dot("Barrier").Call(jen.Id("id"))
		}
	})

	if cg.timed {
		f.Comment("watermark moves the chain's event time to w: what waited for it fires, then the")
		f.Comment("watermark goes on downstream, after the records it released.")
		f.Func().Params(cg.recv).Id("watermark").Params(jen.Id("w").Int64()).BlockFunc(func(b *jen.Group) {
			b.Id("c").Dot("meter").Dot("Watermark").Call(jen.Id("w"))
			for _, ng := range cg.nodes {
				ng.watermark(b)
			}
			for _, e := range cg.combineOuts() {
				b.Id("c").Dot(cg.combField(e)).Dot("Advance").Call(jen.Id("w"), jen.Id("c").Dot(cg.sendField(e)))
			}
			for _, e := range c.outs {
				b.Id("c").Dot(cg.outField(e)).Dot("Watermark").Call(jen.Id("w"))
			}
		})
		if h.Timestamps != nil && h.Timestamps.IdleTimeout > 0 {
			f.Comment("idle tells the receivers that this source subtask has had no records for its")
			f.Comment("idle timeout: their watermarks go on without it until it sends again.")
			f.Func().Params(cg.recv).Id("idle").Params().BlockFunc(func(b *jen.Group) {
				for _, e := range c.outs {
					b.Id("c").Dot(cg.outField(e)).Dot("Idle").Call()
				}
			})
		}
	}
	if cg.needsTicks() {
		f.Comment("tick runs every runtime.Linger: processing time has moved.")
		f.Func().Params(cg.recv).Id("tick").Params().BlockFunc(func(b *jen.Group) {
			for _, ng := range cg.nodes {
				ng.tick(b)
			}
		})
	}

	f.Comment("end runs when the chain's input has ended: it emits what waited for the end, takes")
	f.Comment("the chain's part of the final checkpoint, and tells every receiver that nothing")
	f.Comment("follows.")
	f.Func().Params(cg.recv).Id("end").Params().BlockFunc(func(b *jen.Group) {
		for _, ng := range cg.nodes {
			ng.end(b)
		}
		if cg.snapshots() {
			b.Add(s).Op(":=").Id("c").Dot("task").Dot("Final").Call()
			cg.positions(b)
			for _, ng := range cg.nodes {
				ng.final(b)
			}
			for _, k := range cg.chainCollectors() {
				b.Id("c").Dot(cg.collectField(k)).Dot("PreCommit").Call(s, jen.Id(k.konst))
			}
		}
		for _, e := range cg.combineOuts() {
			b.Id("c").Dot(cg.combField(e)).Dot("Drain").Call(jen.Id("c").Dot(cg.sendField(e)))
		}
		for _, e := range c.outs {
			b.Id("c").Dot(cg.outField(e)).Dot("End").Call()
		}
		if cg.snapshots() {
			b.Id("c").Dot("task").Dot("Submit").Call(s)
		}
		b.Id("c").Dot("meter").Dot("Publish").Call(jen.Id("c").Dot("counts").Index(jen.Empty(), jen.Empty()))
		b.Id("c").Dot("meter").Dot("End").Call()
	})
}

// positions adds the chain's own progress to snapshot s: a source's read
// position and watermark generator, or the event time of an inbox's
// senders.
func (cg *chainGen) positions(b *jen.Group) {
	h := cg.c.head
	node := jen.Id(cg.g.constName(h))
	switch {
	case h.Kind == ir.Source:
		b.Id("c").Dot("src").Dot("Snapshot").Call(jen.Id("s"), node)
		if h.Timestamps != nil {
			b.Id("s").Dot("Watermarks").Call(node, jen.Id("c").Dot("wm"))
		}
	case cg.timed:
		b.Id("s").Dot("InboxWatermarks").Call(node, jen.Id("c").Dot("in").Dot("Watermarks").Call())
	}
}

// kafkaPath is the Kafka connector's facade, imported only by the
// programs of pipelines that use it.
const kafkaPath = "github.com/pipegen/pipegen/runtime/kafka"

func (g *gen) sourceType(n *ir.Node) *jen.Statement {
	if g.opts.Test {
		return jen.Qual(runtimePath, "DriverSource")
	}
	switch n.Connector {
	case "generator":
		return jen.Qual(runtimePath, "GeneratorSource")
	case "kafka":
		return jen.Qual(kafkaPath, "Source")
	}
	return jen.Qual(runtimePath, "FileSource")
}

func (g *gen) sinkType(n *ir.Node) *jen.Statement {
	if g.opts.Test {
		return jen.Qual(runtimePath, "DriverSink")
	}
	switch n.Connector {
	case "stdout":
		return jen.Qual(runtimePath, "StdoutSink")
	case "kafka":
		return jen.Qual(kafkaPath, "Sink")
	}
	return jen.Qual(runtimePath, "FileSink")
}

// watermarksType is the watermark generator of a timed source: a Kafka
// source's works per partition.
func (g *gen) watermarksType(n *ir.Node) *jen.Statement {
	if n.Connector == "kafka" && !g.opts.Test {
		return jen.Qual(kafkaPath, "Watermarks")
	}
	return jen.Qual(runtimePath, "Watermarks")
}

func (g *gen) newSource(n *ir.Node) jen.Code {
	args := []jen.Code{jen.Id("j"), jen.Id(g.constName(n)), jen.Id("sub")}
	if g.opts.Test {
		return jen.Qual(runtimePath, "NewDriverSource").Types(typeCode(n.Out)).Call(args...)
	}
	if n.Connector == "generator" {
		f := jen.Code(fn(n.Fn))
		if n.Fn.Shape == "into" {
			// The source itself (NextInto) takes the record as a result; the run
			// loop calls the function itself.
			f = jen.Func().Params(jen.Id("seq").Uint64()).Params(typeCode(n.Out), jen.Bool()).Block(
				jen.Var().Id("r").Add(typeCode(n.Out)),
				jen.Id("ok").Op(":=").Add(fn(n.Fn)).Call(jen.Id("seq"), jen.Op("&").Id("r")),
				jen.Return(jen.Id("r"), jen.Id("ok")),
			)
		}
		return jen.Qual(runtimePath, "NewGeneratorSource").Call(append(args, f)...)
	}
	var format jen.Code
	switch {
	case n.Format == "jsonl" && jsonDecodes(n):
		format = jen.Qual(runtimePath, "JSONFormatFast").Call(jen.Id(g.global("decode%sJSONL", n)))
	case n.Format == "jsonl":
		format = jen.Qual(runtimePath, "JSONFormat").Types(typeCode(n.Out)).Call()
	case n.Format == "csv" && n.Connector == "kafka" && csvDecodes(n):
		format = jen.Qual(kafkaPath, "CSVFormatFast").Call(jen.Id("j"), jen.Id(g.constName(n)), jen.Id(g.global("decode%sCSV", n)))
	case n.Format == "csv" && csvDecodes(n):
		format = jen.Qual(runtimePath, "CSVFormatFast").Call(jen.Id("j"), jen.Id(g.constName(n)), jen.Id(g.global("decode%sCSV", n)))
	case n.Format == "csv" && n.Connector == "kafka":
		format = jen.Qual(kafkaPath, "CSVFormat").Types(typeCode(n.Out)).Call(jen.Id("j"), jen.Id(g.constName(n)))
	case n.Format == "csv":
		format = jen.Qual(runtimePath, "CSVFormatFor").Types(typeCode(n.Out)).Call(jen.Id("j"), jen.Id(g.constName(n)))
	case n.Format == "raw":
		format = jen.Qual(kafkaPath, "RawFormat").Call()
	default:
		format = jen.Qual(runtimePath, "LinesFormat").Call()
	}
	if n.Connector == "kafka" {
		return jen.Qual(kafkaPath, "NewSource").Call(append(args, format)...)
	}
	return jen.Qual(runtimePath, "NewFileSource").Call(append(args, format)...)
}

// stateValueType is the type of a keyed node's state per key.
func (g *gen) stateValueType(n *ir.Node) jen.Code {
	return typeCode(g.stateValue(n))
}

// stateValue is the type of a keyed node's state per key.
func (g *gen) stateValue(n *ir.Node) *ir.Type {
	switch n.Kind {
	case ir.Aggregate:
		return n.Acc
	case ir.Process:
		return n.State
	}
	return n.In()
}

func (g *gen) stateValueName(n *ir.Node) string {
	return g.typeString(g.stateValue(n))
}

func (g *gen) inputNames(n *ir.Node) string {
	var names []string
	for _, e := range n.Inputs {
		names = append(names, g.p.Nodes[e.From].Name)
	}
	return strings.Join(names, ", ")
}

// hashCall hashes the key x of keyed node n.
func (g *gen) hashCall(n *ir.Node, x jen.Code) jen.Code {
	return jen.Id(g.global("hashKey%s", n)).Call(x)
}

// inMemory reports whether Go keeps a record of type t in memory rather
// than in registers inside a function: a struct of more than four fields
// or of more than 32 bytes, or an array of more than one element (the
// compiler's limits for values it can keep in registers). Passing such a
// record by value between the chain's methods copies it each time, and
// the copy just after the stores of the argument registers stalls; a
// smaller record is cheaper passed by value.
func inMemory(t *ir.Type) bool {
	size, ok := typeSize(t)
	if !ok || size > 32 {
		return true
	}
	for t != nil && t.Kind == ir.NamedType {
		t = t.Underlying
	}
	switch {
	case t == nil:
		return true
	case t.Kind == ir.StructType:
		if len(t.Fields) > 4 {
			return true
		}
		for _, f := range t.Fields {
			if inMemory(f.Type) {
				return true
			}
		}
	case t.Kind == ir.ArrayType:
		return t.Len > 1 || inMemory(t.Elem)
	}
	return false
}

// typeSize is the size of a value of type t on a 64-bit platform, false
// when t's structure is not known (an opaque type but a function or
// channel). Alignment padding is left out: it only matters above 32
// bytes, which a struct reaches without it too.
func typeSize(t *ir.Type) (int64, bool) {
	for t != nil && t.Kind == ir.NamedType {
		t = t.Underlying
	}
	if t == nil {
		return 0, false
	}
	switch t.Kind {
	case ir.BasicType:
		switch t.Name {
		case "bool", "int8", "uint8", "byte":
			return 1, true
		case "int16", "uint16":
			return 2, true
		case "int32", "uint32", "rune", "float32":
			return 4, true
		case "string", "complex128":
			return 16, true
		}
		return 8, true
	case ir.PointerType, ir.MapType:
		return 8, true
	case ir.SliceType:
		return 24, true
	case ir.ArrayType:
		n, ok := typeSize(t.Elem)
		return n * t.Len, ok
	case ir.StructType:
		var sum int64
		for _, f := range t.Fields {
			n, ok := typeSize(f.Type)
			if !ok {
				return 0, false
			}
			sum += n
		}
		return sum, true
	}
	return 0, false
}

// generatorLoop emits the run method of a generator source's chain. The
// source deals out runs of sequence numbers that need nothing of it in
// between (TakeRun); the chain calls the generate function for each,
// statically, and accounts for the records of a run together (TookRun),
// before a barrier and at the run's end: a call per record to take a
// number and another to account for it were a tenth of examples/nexmark's
// q2. A static call lets Go inline a small function, where a call through
// a function value costs the call and a copy more (a Nexmark event is 72
// bytes: 10-14% of q2 and q7). A record returned by value is still stored
// and copied into r once, which the form by pointer spares. gotAt emits
// one record, given as a value and as its address; none is what the
// chain does when the source has no run for it, before poll looks for a
// barrier (within a run, each record, or each batch, is followed by a
// look).
//
// Within a run the records come in batches (generatorBatch): the chain
// calls the function for up to a batch of numbers, into an array, then
// passes them on one by one. Made one at a time between the operators'
// work, Nexmark's events cost more: in q7 the generator's bid function
// took 1.8 times the samples it took in the hand-written q7 (perf, same
// code, same events), most of them where its random choices, which no
// processor predicts, had sent it the wrong way; made in batches, q7
// took 0.94 of the CPU, q0 0.90, q4 and q5 0.96, q2, q3 and q8 the same
// (paired runs, examples/nexmark/README.md). A record made but not
// passed on before a barrier is passed on after it, as if it had been
// made then: the function is one of seq alone, and the position in the
// checkpoint counts only the records passed on. The chain looks for a
// barrier after each batch, not after each record: a barrier waits for
// at most a batch's records to go through the chain (56 Nexmark events,
// a few microseconds; longer behind slow operators), and the loop that
// passes them on keeps nothing live for the barrier's path (q7 took
// 0.991 of the CPU, q0 0.986). That loop passes each record on in its
// own body (gotAt's writeIn): with the filters behind the source written
// in as well, and a combined aggregate's code in its direct, q7 took
// 0.973 (examples/nexmark/README.md).
func (cg *chainGen) generatorLoop(gotAt func(val, ref func() *jen.Statement, writeIn bool) []jen.Code, none, callDefer, poll jen.Code) {
	h, f := cg.c.head, cg.f
	c := jen.Id("c")
	src := jen.Add(c).Dot("src")
	// The run's records not accounted for yet are seq - from: from moves
	// to seq whenever TookRun accounts for them.
	took := jen.Id("seq").Op("-").Id("from")
	atBarrier := jen.If(jen.Id("id").Op(":=").Add(c).Dot("ctl").Dot("Poll").Call(), jen.Id("id").Op("!=").Lit(0)).Block(
		jen.Add(src).Dot("TookRun").Call(took).Comment("the records before a barrier count as emitted"),
		jen.Id("from").Op("=").Id("seq"),
		jen.If(jen.Id("id").Op(">").Lit(0)).Block(
			jen.Add(c).Dot("barrier").Call(jen.Id("id")),
		).Else().Block(
			jen.Add(c).Dot("flush").Call(),
		),
	)
	var decl jen.Code = jen.Null()
	var loop []jen.Code
	if batch := generatorBatch(h.Out); batch > 1 {
		// made records of the batch, from seq; the function has ended
		// (or skips a number) when it makes fewer than asked.
		var call jen.Code
		if h.Fn.Shape == "into" {
			call = jen.Block(
				jen.Id("batch").Index(jen.Id("made")).Op("=").Add(typeCode(h.Out)).Values().Comment("a zero record at every call, as the function's contract says"),
				jen.Add(src).Dot("At").Call(jen.Id("seq").Op("+").Id("made")).Comment("a panic names it"),
				jen.If(jen.Op("!").Add(fn(h.Fn)).Call(jen.Id("seq").Op("+").Id("made"), jen.Op("&").Id("batch").Index(jen.Id("made")))).Block(jen.Break()),
			)
		} else {
			call = jen.Block(
				jen.Add(src).Dot("At").Call(jen.Id("seq").Op("+").Id("made")).Comment("a panic names it"),
				jen.Var().Id("ok").Bool(),
				jen.If(jen.List(jen.Id("batch").Index(jen.Id("made")), jen.Id("ok")).Op("=").Add(fn(h.Fn)).Call(jen.Id("seq").Op("+").Id("made")), jen.Op("!").Id("ok")).Block(jen.Break()),
			)
		}
		pass := []jen.Code{
			jen.Id("r").Op(":=").Op("&").Id("batch").Index(jen.Id("i")),
			jen.Add(src).Dot("At").Call(jen.Id("seq")).Comment("a panic names it"),
			jen.Id("seq").Op("++"),
		}
		pass = append(pass, gotAt(func() *jen.Statement { return jen.Op("*").Id("r") }, func() *jen.Statement { return jen.Id("r") }, true)...)
		decl = jen.Var().Id("batch").Index(jen.Lit(int(batch))).Add(typeCode(h.Out)).Comment("records made, to pass on")
		loop = []jen.Code{
			jen.For(jen.Id("n").Op(">").Lit(0)).Block(
				jen.Id("want").Op(":=").Min(jen.Id("n"), jen.Id("uint64").Call(jen.Len(jen.Id("batch")))),
				jen.Id("made").Op(":=").Id("uint64").Call(jen.Lit(0)),
				jen.For(jen.Empty(), jen.Id("made").Op("<").Id("want"), jen.Id("made").Op("++")).Add(call),
				jen.For(jen.Id("i").Op(":=").Range().Id("made")).Block(pass...),
				atBarrier,
				jen.Id("n").Op("-=").Id("made"),
				jen.If(jen.Id("made").Op("<").Id("want")).Block(jen.Break()),
			),
		}
	} else {
		var call []jen.Code
		if h.Fn.Shape == "into" {
			// The function writes the record into r, field by field as it
			// makes it: no result stored and copied again (docs/dsl.md,
			// Records by pointer). r is a zero record at every call, as the
			// function's contract says.
			call = []jen.Code{
				jen.Var().Id("r").Add(typeCode(h.Out)),
				jen.Add(src).Dot("At").Call(jen.Id("seq")).Comment("a panic names it"),
				jen.If(jen.Op("!").Add(fn(h.Fn)).Call(jen.Id("seq"), jen.Op("&").Id("r"))).Block(jen.Break()),
			}
		} else {
			decl = jen.Var().Id("r").Add(typeCode(h.Out))
			call = []jen.Code{
				jen.Add(src).Dot("At").Call(jen.Id("seq")).Comment("a panic names it"),
				jen.Var().Id("ok").Bool(),
				jen.If(jen.List(jen.Id("r"), jen.Id("ok")).Op("=").Add(fn(h.Fn)).Call(jen.Id("seq")), jen.Op("!").Id("ok")).Block(jen.Break()),
			}
		}
		record := append(call, jen.Id("seq").Op("++"))
		record = append(record, gotAt(func() *jen.Statement { return jen.Id("r") }, func() *jen.Statement { return jen.Op("&").Id("r") }, false)...)
		record = append(record, atBarrier)
		loop = []jen.Code{jen.For(jen.Empty(), jen.Id("n").Op(">").Lit(0), jen.Id("n").Op("--")).Block(record...)}
	}
	f.Comment("The generator's sequence numbers come in runs (TakeRun), whose records are")
	f.Comment("accounted for together (TookRun), before a barrier and at the run's end.")
	body := []jen.Code{
		jen.List(jen.Id("seq"), jen.Id("n")).Op(":=").Add(src).Dot("TakeRun").Call(),
		jen.If(jen.Id("n").Op("==").Lit(0)).Block(none, poll, jen.Continue()),
		jen.Id("from").Op(":=").Id("seq"),
	}
	body = append(body, loop...)
	body = append(body,
		jen.Add(src).Dot("TookRun").Call(took),
		jen.If(jen.Id("n").Op(">").Lit(0)).Block(
			jen.Add(src).Dot("NoRecord").Call().Comment("none for seq: the function has ended, or seq is skipped"),
		),
	)
	f.Func().Params(cg.recv).Id("run").Params().Block(
		jen.Defer().Add(src).Dot("Recover").Call().Comment("a panic names the record's file and line"),
		callDefer,
		decl,
		jen.For().Block(body...),
		jen.Add(c).Dot("end").Call(),
	)
}

// generatorBatch is how many records a generator source's chain makes
// before it passes them on (generatorLoop): about 4 KB of them, which
// stay in the first-level cache (56 Nexmark events; q7 took the same CPU
// with 64, 128 and 256, 1.3% more with 16 and 32), at most 256, and 1
// (no batch) for a record of more than 2 KB or of a size not known.
func generatorBatch(t *ir.Type) int64 {
	size, ok := typeSize(t)
	if !ok || size <= 0 {
		return 1
	}
	return min(max(4096/size, 1), 256)
}
