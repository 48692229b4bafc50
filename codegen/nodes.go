package codegen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/ir"
)

// nodeGen returns the generator of node n's part of its chain.
func (g *gen) nodeGen(cg *chainGen, n *ir.Node) nodeGen {
	b := base{cg: cg, n: n}
	switch n.Kind {
	case ir.Source:
		return &b
	case ir.Map:
		return &mapGen{b}
	case ir.Filter:
		return &filterGen{b}
	case ir.FlatMap:
		return &flatMapGen{b}
	case ir.Union:
		return &unionGen{b}
	case ir.Sink:
		return &sinkGen{b}
	case ir.Reduce, ir.Aggregate:
		if n.Trigger != nil {
			return &triggerGen{windowGen{b}}
		}
		if n.Window != nil && n.Window.Kind == "count" {
			return &countGen{b}
		}
		if n.Window != nil {
			return &windowGen{b}
		}
		return &keyedGen{b}
	case ir.Process:
		return &processGen{b}
	case ir.Join:
		return &joinGen{b}
	}
	panic("codegen: no generator for node kind " + string(n.Kind))
}

type mapGen struct{ base }

func (m *mapGen) doc() string { return fmt.Sprintf("map %s, %s", m.n.Fn.Name, m.n.Fn.Signature) }

func (m *mapGen) record(b *jen.Group) {
	n := m.n
	if n.Fn.Shape == "error" {
		b.List(jen.Id("out"), jen.Err()).Op(":=").Add(fn(n.Fn)).Call(m.arg(n.Fn))
		b.If(jen.Err().Op("!=").Nil()).Block(
			jen.Qual(runtimePath, "Abortf").Call(jen.Lit(fmt.Sprintf("operators.%s: %s: %%w", n.Name, n.Fn.Name)), jen.Err()),
		)
		b.Add(m.emit(m.ref(jen.Id("out")), jen.Id("ts")))
		return
	}
	if !emitsRef(n) {
		b.Add(m.emit(fn(n.Fn).Call(m.arg(n.Fn)), jen.Id("ts")))
		return
	}
	b.Id("out").Op(":=").Add(fn(n.Fn)).Call(m.arg(n.Fn))
	b.Add(m.emit(jen.Op("&").Id("out"), jen.Id("ts")))
}

type filterGen struct{ base }

func (f *filterGen) doc() string { return fmt.Sprintf("filter %s, %s", f.n.Fn.Name, f.n.Fn.Signature) }

func (f *filterGen) record(b *jen.Group) {
	x := f.in()
	if emitsRef(f.n) {
		x = f.inRef()
	}
	b.If(fn(f.n.Fn).Call(f.arg(f.n.Fn))).Block(f.emit(x, jen.Id("ts")))
}

type flatMapGen struct{ base }

func (f *flatMapGen) doc() string {
	return fmt.Sprintf("flatmap %s, %s", f.n.Fn.Name, f.n.Fn.Signature)
}

// record calls the user's flatmap. The emit shape gets a function
// literal made at the call (`nexmark.Bids(r, func(out Bid) {
// c.emitBids(&out, ts) })`), not a function made once and kept in a
// field: Go then inlines a small flatmap and, through it, the literal and
// the emit method, so that an emitted record goes on without a call
// through a function value, and the record is not copied into the
// literal's parameter right after it was stored (a store-forwarding
// stall; q2 0.91 of the CPU of the function made once, AMD EPYC, 7
// pairs). A flatmap that is not inlined gets the literal on the stack,
// made per record: two stores, as long as the flatmap keeps no emit
// function beyond its call, which docs/dsl.md asks. The literal takes
// the record by value, as the user's signature says, and passes its
// address on when the emit method takes it by reference (emitsRef); it
// passes the input record's event time itself.
func (f *flatMapGen) record(b *jen.Group) {
	n := f.n
	if n.Fn.Shape == "emit" {
		args := []jen.Code{f.ref(jen.Id("out"))}
		if f.cg.timed {
			args = append(args, jen.Id("ts"))
		}
		b.Add(fn(n.Fn)).Call(f.arg(n.Fn), jen.Func().Params(jen.Id("out").Add(typeCode(n.Out))).Block(
			jen.Id("c").Dot(f.member("emit%s")).Call(args...),
		))
		return
	}
	b.For(jen.List(jen.Id("_"), jen.Id("out")).Op(":=").Range().Add(fn(n.Fn)).Call(f.arg(n.Fn))).Block(
		f.emit(f.ref(jen.Id("out")), jen.Id("ts")),
	)
}

type unionGen struct{ base }

func (u *unionGen) doc() string { return "union of " + u.cg.g.inputNames(u.n) }

func (u *unionGen) record(b *jen.Group) { b.Add(u.emit(jen.Id("r"), jen.Id("ts"))) }

type sinkGen struct{ base }

func (s *sinkGen) sink() *jen.Statement { return s.field("Sink") }

func (s *sinkGen) doc() string {
	if s.n.Key != nil {
		return fmt.Sprintf("%s sink, format %s, key %s", s.n.Connector, s.n.Format, s.n.Key.Name)
	}
	return fmt.Sprintf("%s sink, format %s", s.n.Connector, s.n.Format)
}

func (s *sinkGen) fields(g *jen.Group) {
	g.Id(s.member("%sSink")).Op("*").Add(s.cg.g.sinkType(s.n)).Types(typeCode(s.n.In()))
}

func (s *sinkGen) init(b *jen.Group) {
	n := s.n
	in := n.In()
	var enc jen.Code
	switch {
	case n.Format == "csv":
		fast := jen.Nil()
		if csvEncodes(n) {
			fast = jen.Id(s.cg.g.csvEncoderName(in)) // generated: see csvcodec.go
		}
		if n.Connector == "file" && !s.cg.g.opts.Test {
			// A file sink writes the header line at the top of each file.
			b.Add(s.sink()).Op("=").Qual(runtimePath, "NewCSVFileSink").Types(typeCode(in)).Call(jen.Id("j"), jen.Id(s.cg.g.constName(n)), jen.Id("sub"), fast)
			return
		}
		enc = jen.Qual(runtimePath, "CSVEncoder").Types(typeCode(in)).Call(jen.Id("j"), jen.Id(s.cg.g.constName(n)), fast)
	case s.encodesByRef():
		enc = jen.Nil() // the per-record method encodes each record itself
	case n.Format == "jsonl" && jsonSupport(in) == "":
		enc = jen.Id(s.cg.g.global("encode%sJSON", n)) // generated: see jsoncodec.go
	case n.Format == "jsonl":
		enc = jen.Qual(runtimePath, "EncodeJSON").Types(typeCode(in))
	case n.Format == "raw":
		enc = jen.Qual(kafkaPath, "EncodeRaw")
	case in.IsString():
		enc = jen.Qual(runtimePath, "EncodeString")
	default:
		enc = jen.Qual(runtimePath, "EncodeStringer").Types(typeCode(in))
	}
	args := []jen.Code{jen.Id("j"), jen.Id(s.cg.g.constName(n)), jen.Id("sub"), enc}
	if s.cg.g.opts.Test {
		b.Add(s.sink()).Op("=").Qual(runtimePath, "NewDriverSink").Types(typeCode(in)).Call(args[:3]...)
		return
	}
	ctor := jen.Qual(runtimePath, "NewFileSink")
	switch n.Connector {
	case "stdout":
		ctor = jen.Qual(runtimePath, "NewStdoutSink")
	case "kafka":
		ctor = jen.Qual(kafkaPath, "NewSink")
		args = append(args, kafkaKey(n))
	}
	if s.encodesByRef() {
		b.Add(s.sink()).Op("=").Add(ctor).Types(typeCode(in)).Call(args...).Comment(fmt.Sprintf("no encoder: %s encodes each record", s.member("to%s")))
		return
	}
	b.Add(s.sink()).Op("=").Add(ctor).Call(args...)
}

// kafkaKey makes a Kafka sink's message key from its key function: nil
// without one.
func kafkaKey(n *ir.Node) jen.Code {
	if n.Key == nil {
		return jen.Nil()
	}
	helper := map[string]string{"bytes": "KeyBytes", "int": "KeyInt", "uint": "KeyUint"}[n.Key.Shape]
	if n.Key.Ref {
		return jen.Qual(kafkaPath, helper).Call(jen.Qual(kafkaPath, "ByRef").Call(fn(n.Key)))
	}
	return jen.Qual(kafkaPath, helper).Call(fn(n.Key))
}

func (s *sinkGen) record(b *jen.Group) {
	if s.encodesByRef() {
		b.Add(s.sink()).Dot("Wrote").Call(jen.Id(s.cg.g.global("encode%sJSON", s.n)).Call(jen.Add(s.sink()).Dot("Buf").Call(), s.inRef()))
		return
	}
	b.Add(s.sink()).Dot("Write").Call(s.in())
}

// encodesByRef reports whether the sink's per-record method encodes its
// record itself, into the sink's buffer (Buf, Wrote), with the generated
// encoder, which takes the record by reference (encodesRef): the sink's
// Write would take it by value and call the encoder through a function
// value, and a record copied on the way, right after the stores of the
// argument registers, stalls (examples/nexmark's q1: 3% of its CPU).
func (s *sinkGen) encodesByRef() bool { return !s.cg.g.opts.Test && encodesRef(s.n) }

// encodesRef reports whether the generated encoder of sink n takes its
// record by reference: a stdout or file sink of JSON lines whose encoder
// is generated, which its chain calls itself (sinkGen.encodesByRef).
func encodesRef(n *ir.Node) bool {
	return (n.Connector == "stdout" || n.Connector == "file") && n.Format == "jsonl" && jsonSupport(n.In()) == ""
}

func (s *sinkGen) flush(b *jen.Group) { b.Add(s.sink()).Dot("Flush").Call() }

func (s *sinkGen) snapshot(b *jen.Group) {
	b.Add(s.sink()).Dot("PreCommit").Call(jen.Id("s"), jen.Id(s.cg.g.constName(s.n)))
}

func (s *sinkGen) final(b *jen.Group) {
	s.snapshot(b)
	b.Add(s.sink()).Dot("End").Call()
}

// keyedGen is a reduce or aggregate without a window: one value per key in
// memory, emitting after every record or once per key at the end.
type keyedGen struct{ base }

func (k *keyedGen) state() *jen.Statement { return k.field("State") }

func (k *keyedGen) doc() string {
	n := k.n
	if n.Kind == ir.Reduce {
		return fmt.Sprintf("reduce %s by %s, emitting %s", n.Fn.Name, n.Key.Name, emitDoc(n))
	}
	doc := fmt.Sprintf("aggregate by %s: add %s", n.Key.Name, n.Add.Name)
	if n.Result != nil {
		doc += ", result " + n.Result.Name
	}
	return doc + ", emitting " + emitDoc(n)
}

func (k *keyedGen) fields(s *jen.Group) {
	g := k.cg.g
	s.Id(k.member("%sState")).Op("*").Add(g.keyedStateType(typeCode(k.n.KeyType), g.stateValueType(k.n))).Comment(fmt.Sprintf("state of %s: one %s per key", k.n.Name, g.stateValueName(k.n)))
}

func (k *keyedGen) init(b *jen.Group) {
	k.cg.g.openKeyedState(b, k.n, k.state(), k.cg.g.stateValueType(k.n))
}

// keyedStateType is the type of the per-key state of a reduce, aggregate
// or process node on the pipeline's backend.
func (g *gen) keyedStateType(key, value jen.Code) *jen.Statement {
	if g.p.StateBackend == "pebble" {
		return jen.Qual(pebblePath, "Keyed").Types(key, value)
	}
	return jen.Qual(statePath, "Memory").Types(key, value)
}

// openKeyedState makes the per-key state st of node n, restored from the
// checkpoint the job resumes from.
func (g *gen) openKeyedState(b *jen.Group, n *ir.Node, st *jen.Statement, value jen.Code) {
	codecVar := jen.Id(g.global("%sCodec", n))
	if g.p.StateBackend == "pebble" {
		b.Add(st).Op("=").Qual(pebblePath, "Open").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)), codecVar)
		return
	}
	b.Add(st).Op("=").Qual(statePath, "NewMemory").Types(typeCode(n.KeyType), value).Call()
	b.Qual(runtimePath, "RestoreMemory").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)), st, codecVar)
}

// snapshotKeyedState adds the per-key state st of node n to snapshot s.
func (g *gen) snapshotKeyedState(b *jen.Group, n *ir.Node, st *jen.Statement) {
	if g.p.StateBackend == "pebble" {
		b.Qual(pebblePath, "Snapshot").Call(jen.Id("s"), jen.Id(g.constName(n)), st)
		return
	}
	b.Qual(runtimePath, "SnapshotMemory").Call(jen.Id("s"), jen.Id(g.constName(n)), st, jen.Id(g.global("%sCodec", n)))
}

func (k *keyedGen) record(b *jen.Group) {
	n := k.n
	st := k.state()
	r := jen.Id("r")
	b.Id("k").Op(":=").Add(fn(n.Key)).Call(k.arg(n.Key))
	if n.Kind == ir.Reduce {
		b.If(jen.List(jen.Id("acc"), jen.Id("added")).Op(":=").Add(st).Dot("GetOrAdd").Call(jen.Id("k")), jen.Id("added")).Block(
			jen.Op("*").Id("acc").Op("=").Id("r"),
		).Else().Block(
			jen.Op("*").Id("acc").Op("=").Add(fn(n.Fn)).Call(jen.Op("*").Id("acc"), r),
			jen.Id("r").Op("=").Op("*").Id("acc"),
		)
		if n.Emit == "update" {
			b.Add(k.emit(r, jen.Id("ts")))
		}
		return
	}
	b.List(jen.Id("acc"), jen.Id("_")).Op(":=").Add(st).Dot("GetOrAdd").Call(jen.Id("k"))
	b.Add(fn(n.Add)).Call(jen.Id("acc"), k.arg(n.Add))
	if n.Emit == "update" {
		b.Add(k.emit(aggregateResult(n, jen.Id("k"), jen.Id("acc"), nil), jen.Id("ts")))
	}
}

func (k *keyedGen) snapshot(b *jen.Group) {
	k.cg.g.snapshotKeyedState(b, k.n, k.state())
}

func (k *keyedGen) end(b *jen.Group) {
	n := k.n
	if n.Emit != "final" {
		return
	}
	var val jen.Code = jen.Op("*").Id("v")
	key := jen.Id("_")
	if n.Kind == ir.Aggregate && n.Result != nil {
		val = aggregateResult(n, jen.Id("k"), jen.Id("v"), nil)
		key = jen.Id("k")
	}
	// Results at the end of input carry the end of time as event time.
	b.Comment(fmt.Sprintf("%s emits one result per key now that its input has ended.", n.Name))
	b.For(jen.List(key, jen.Id("v")).Op(":=").Range().Add(k.state()).Dot("All")).Block(
		k.emit(val, jen.Qual(runtimePath, "MaxTime")),
	)
}

func emitDoc(n *ir.Node) string {
	if n.Emit == "final" {
		return "one result per key when the input ends"
	}
	return "a result after every record"
}

// aggregateResult makes an aggregate's output from key k and accumulator
// acc (and window w, when the result function takes one).
func aggregateResult(n *ir.Node, k, acc, w jen.Code) jen.Code {
	if n.Result == nil {
		return jen.Op("*").Add(acc)
	}
	if n.Result.Shape == "window" {
		return fn(n.Result).Call(k, w, acc)
	}
	return fn(n.Result).Call(k, acc)
}

// windowOp describes the function of a windowed reduce or aggregate.
func windowOp(n *ir.Node) string {
	if n.Kind == ir.Reduce {
		return "reduce " + n.Fn.Name
	}
	op := "aggregate: add " + n.Add.Name
	if n.Result != nil {
		op += ", result " + n.Result.Name
	}
	return op
}

// windowGen is a reduce or aggregate on windows: per key and window an
// accumulator, fired when the watermark (or the wall clock) passes the
// window's end.
type windowGen struct{ base }

func (w *windowGen) state() *jen.Statement { return w.field("State") }
func (w *windowGen) fire() *jen.Statement  { return w.field("Fire") }

// marksLate reports whether the window's updates within the allowed
// lateness go to a result method of their own, which sets
// pipegen.Window.Firing to Late: the result takes the window.
func (w *windowGen) marksLate() bool {
	n := w.n
	return n.Lateness > 0 && !n.Window.Processing && n.Result != nil && n.Result.Shape == "window"
}

// update is what Add calls for a window updated within the lateness.
func (w *windowGen) update() *jen.Statement {
	if w.marksLate() {
		return w.field("Update")
	}
	return w.fire()
}
func (w *windowGen) acc() *ir.Type { return w.cg.g.keyedValue(w.n) }

func (w *windowGen) doc() string {
	n := w.n
	win := n.Window
	what := win.Kind + " " + win.Size.String()
	switch win.Kind {
	case "sliding":
		what += " every " + win.Every.String()
	case "session":
		what = "session gap " + win.Gap.String()
		if win.GapFn != nil {
			what = "session gap per record " + win.GapFn.Name
		}
	}
	clock := "event time"
	if win.Processing {
		clock = "processing time"
	}
	doc := fmt.Sprintf("%s by %s on %s windows (%s)", windowOp(n), n.Key.Name, what, clock)
	if n.Lateness > 0 {
		doc += fmt.Sprintf(", allowed lateness %s", n.Lateness)
	}
	if w.sliced() {
		doc += fmt.Sprintf(", kept in slices of %s", win.Every)
	}
	return doc + ", emitting once per key and window"
}

// sliced reports whether the windows are kept in slices of the slide
// (runtime.NewSlicedWindows; ir.Pipeline.SlicedWindows says when).
func (w *windowGen) sliced() bool {
	ok, _ := w.cg.g.p.SlicedWindows(w.n)
	return ok
}

// pebbleWindows reports whether node n keeps its windows in the pebble
// store of its subtask (pebblestate.Windows, or pebblestate.Sessions for
// sessions, or pebblestate.Triggered with a trigger): tumbling, sliding
// and session windows, on the pebble backend (count windows: pebbleCount).
func (g *gen) pebbleWindows(n *ir.Node) bool {
	return g.p.StateBackend == "pebble" && (n.Kind == ir.Reduce || n.Kind == ir.Aggregate) &&
		n.Window != nil && (n.Window.Kind == "tumbling" || n.Window.Kind == "sliding" || n.Window.Kind == "session")
}

// pebbleType is the pebblestate type that keeps the windows of node n:
// Sessions or Windows.
func pebbleType(n *ir.Node) string {
	if n.Window.Kind == "session" {
		return "Sessions"
	}
	return "Windows"
}

func (w *windowGen) fields(s *jen.Group) {
	n := w.n
	if w.cg.g.pebbleWindows(n) {
		s.Id(w.member("%sState")).Op("*").Qual(pebblePath, pebbleType(n)).Types(typeCode(n.KeyType), typeCode(w.acc())).Comment(fmt.Sprintf("open windows of %s per key, in a Pebble store", n.Name))
	} else {
		s.Id(w.member("%sState")).Op("*").Qual(runtimePath, "WindowState").Types(typeCode(n.KeyType), typeCode(w.acc())).Comment(fmt.Sprintf("open windows of %s per key", n.Name))
	}
	s.Id(w.member("%sFire")).Func().Params(typeCode(n.KeyType), jen.Qual(runtimePath, "Window"), jen.Op("*").Add(typeCode(w.acc()))).Comment(w.member("%sResult") + ", made once")
	if w.marksLate() {
		s.Id(w.member("%sUpdate")).Func().Params(typeCode(n.KeyType), jen.Qual(runtimePath, "Window"), jen.Op("*").Add(typeCode(w.acc()))).Comment(w.member("%sLateResult") + ", made once")
	}
}

// sessionGap returns the method that adds record r (the expression r, its
// address ref) of key k at time ts, from an input at watermark wm, to the
// windows: Add, or AddGap for sessions with a gap per record, whose gap it
// computes first; and its first arguments.
func sessionGap(b *jen.Group, n *ir.Node, r, ref *jen.Statement, ts, wm jen.Code) (method string, args []jen.Code) {
	if n.Window.GapFn == nil {
		return "Add", []jen.Code{jen.Id("k"), ts, wm}
	}
	b.Id("gap").Op(":=").Qual(runtimePath, "SessionGap").Call(fn(n.Window.GapFn).Call(pass(n.Window.GapFn, r, ref)), jen.Lit(fmt.Sprintf("operators.%s: %s", n.Name, n.Window.GapFn.Name)))
	return "AddGap", []jen.Code{jen.Id("k"), ts, jen.Id("gap"), wm}
}

// assigner is the runtime.WindowAssigner of win: its kind, then its sizes.
func assigner(win *ir.Window) jen.Code {
	var kv []jen.Code
	switch win.Kind {
	case "tumbling":
		kv = append(kv, field("Kind", jen.Qual(runtimePath, "Tumbling")), field("Size", millisCode(win.Size)))
	case "sliding":
		kv = append(kv, field("Kind", jen.Qual(runtimePath, "Sliding")), field("Size", millisCode(win.Size)), field("Slide", millisCode(win.Every)))
	case "session":
		if win.GapFn != nil {
			kv = append(kv, field("Kind", jen.Qual(runtimePath, "Session")), field("DynamicGap", jen.True()))
			break
		}
		kv = append(kv, field("Kind", jen.Qual(runtimePath, "Session")), field("Gap", millisCode(win.Gap)))
	}
	return jen.Qual(runtimePath, "WindowAssigner").Custom(multi, kv...)
}

func (w *windowGen) init(b *jen.Group) {
	g, n := w.cg.g, w.n
	var merge jen.Code = jen.Nil()
	switch {
	case n.Window.Kind != "session" && !w.sliced():
	case n.Kind == ir.Reduce:
		merge = jen.Qual(runtimePath, "MergeReduce").Call(fn(n.Fn))
	default:
		merge = fn(n.Merge)
	}
	switch {
	case g.pebbleWindows(n) && n.Window.Kind == "session":
		b.Add(w.state()).Op("=").Qual(pebblePath, "OpenSessions").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)),
			assigner(n.Window), millisCode(n.Lateness), merge, jen.Id(g.global("%sCodec", n)))
	case g.pebbleWindows(n):
		b.Add(w.state()).Op("=").Qual(pebblePath, "OpenWindows").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)),
			assigner(n.Window), millisCode(n.Lateness), jen.Id(g.global("%sCodec", n)))
	default:
		if w.sliced() {
			b.Add(w.state()).Op("=").Qual(runtimePath, "NewSlicedWindows").Types(typeCode(n.KeyType), typeCode(w.acc())).Call(
				assigner(n.Window), merge)
		} else {
			b.Add(w.state()).Op("=").Qual(runtimePath, "NewWindowState").Types(typeCode(n.KeyType), typeCode(w.acc())).Call(
				assigner(n.Window), millisCode(n.Lateness), merge)
		}
		if w.incremental() {
			b.Qual(runtimePath, "RestoreChanges").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)), jen.Lit(""), w.state(),
				jen.Func().Params(jen.Id("sec").Index().Byte(), jen.Id("delta").Bool()).Error().Block(
					jen.Return(jen.Add(w.state()).Dot("RestoreSection").Call(jen.Id("sec"), jen.Id("delta"), jen.Id(g.global("decode%sKey", n)), jen.Id(g.global("decode%sValue", n)))),
				))
		} else {
			b.Qual(runtimePath, "RestoreKeyed").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)), jen.Lit(""),
				jen.Func().Params(jen.Id("sec").Index().Byte()).Error().Block(
					jen.Return(jen.Add(w.state()).Dot("Restore").Call(jen.Id("sec"), jen.Id(g.global("decode%sKey", n)), jen.Id(g.global("decode%sValue", n)))),
				))
		}
	}
	b.Add(w.fire()).Op("=").Id("c").Dot(w.member("%sResult"))
	if w.marksLate() {
		b.Add(w.update()).Op("=").Id("c").Dot(w.member("%sLateResult"))
	}
}

func (w *windowGen) inputWatermark() bool { return !w.n.Window.Processing }
func (w *windowGen) ticks() bool          { return w.n.Window.Processing }

func (w *windowGen) record(b *jen.Group) {
	n := w.n
	ts, wm := jen.Id("ts"), jen.Id("c").Dot("inputWM")
	if n.Window.Processing {
		// Processing time: the record belongs to the windows of now, and
		// no record is late.
		ts, wm = nowMillis(), jen.Qual(runtimePath, "MinTime")
	}
	var add jen.Code
	if n.Kind == ir.Reduce {
		add = jen.Id("acc").Dot("Add").Call(w.in(), fn(n.Fn))
	} else {
		add = fn(n.Add).Call(jen.Id("acc"), w.arg(n.Add))
	}
	b.Id("k").Op(":=").Add(fn(n.Key)).Call(w.arg(n.Key))
	if n.Window.Kind == "tumbling" && !n.Window.Processing && !w.cg.g.pebbleWindows(n) {
		// One window a record: the user's function is called on its
		// accumulator here, not in a closure that Add calls.
		b.If(jen.Id("acc").Op(":=").Add(w.state()).Dot("Acc").Call(jen.Id("k"), ts, wm), jen.Id("acc").Op("!=").Nil()).Block(
			add,
			jen.Add(w.state()).Dot("Added").Call(w.update()),
		).Else().Block(
			jen.Comment("Later than its window's end plus the allowed lateness, as judged by its"),
			jen.Comment("sender's watermark: to the side output."),
			jen.Id("c").Dot(w.member("emit%sLate")).Call(w.cg.args(w.in(), jen.Id("ts"))...),
		)
		return
	}
	addFn := jen.Func().Params(jen.Id("acc").Op("*").Add(typeCode(w.acc()))).Block(add)
	method, args := sessionGap(b, n, w.in(), w.inRef(), ts, wm)
	if n.Window.Processing {
		b.Add(w.state()).Dot(method).Call(append(args, addFn, w.fire())...)
		return
	}
	// A record later than its window's end plus the allowed lateness, as
	// judged by its sender's watermark, goes to the side output.
	b.If(jen.Op("!").Add(w.state()).Dot(method).Call(append(args, addFn, w.update())...)).Block(
		jen.Id("c").Dot(w.member("emit%sLate")).Call(w.cg.args(w.in(), jen.Id("ts"))...),
	)
}

func (w *windowGen) watermark(b *jen.Group) {
	if !w.n.Window.Processing {
		b.Add(w.state()).Dot("Advance").Call(jen.Id("w"), w.fire())
	}
}

func (w *windowGen) tick(b *jen.Group) {
	if w.n.Window.Processing {
		b.Add(w.state()).Dot("Advance").Call(nowMillis(), w.fire())
	}
}

func (w *windowGen) end(b *jen.Group) {
	if w.n.Window.Processing {
		b.Comment("The input has ended: every window fires.")
		b.Add(w.state()).Dot("Advance").Call(jen.Qual(runtimePath, "MaxTime"), w.fire())
	}
}

func (w *windowGen) snapshot(b *jen.Group) {
	g, n := w.cg.g, w.n
	if g.pebbleWindows(n) {
		b.Qual(pebblePath, "Snapshot"+pebbleType(n)).Call(jen.Id("s"), jen.Id(g.constName(n)), w.state())
		return
	}
	if w.incremental() {
		b.Comment("The windows that got records since the last checkpoint, or all of them;")
		b.Comment("captured copy on write and encoded by the checkpoint writer when their")
		b.Comment("accumulators hold no pointers.")
		b.Qual(runtimePath, "SnapshotWindows").Call(jen.Id("s"), jen.Id(g.constName(n)), jen.Lit(""), jen.Id(g.global("hashKey%s", n)), jen.Id(g.global("%sKeySchema", n)), jen.Id(g.global("%sValueSchema", n)), w.state(),
			jen.Id(g.global("encode%sKey", n)), jen.Id(g.global("encode%sValue", n)))
		return
	}
	b.Qual(runtimePath, "SnapshotKeyed").Call(jen.Id("s"), jen.Id(g.constName(n)), jen.Lit(""), jen.Id(g.global("hashKey%s", n)), jen.Id(g.global("%sKeySchema", n)), jen.Id(g.global("%sValueSchema", n)),
		jen.Func().Params(jen.Id("sec").Op("*").Qual(statePath, "Sections"), jen.Id("kg").Func().Params(typeCode(n.KeyType)).Int()).Error().Block(
			jen.Return(jen.Add(w.state()).Dot("Snapshot").Call(jen.Id("sec"), jen.Id("kg"), jen.Id(g.global("encode%sKey", n)), jen.Id(g.global("encode%sValue", n)))),
		))
}

// incremental reports whether the windows' checkpoints (on the memory
// backend) may be deltas: tumbling and sliding windows without a
// trigger; sessions and triggered windows are written whole.
func (w *windowGen) incremental() bool { return w.n.Window.Kind != "session" && w.n.Trigger == nil }

// resultMethod emits xResult, which turns a fired window into the node's
// output record; its event time is the window's last millisecond.
func (w *windowGen) resultMethod() {
	n, f := w.n, w.cg.f
	var out jen.Code
	if n.Kind == ir.Reduce {
		out = jen.Id("acc").Dot("V")
	} else {
		out = aggregateResult(n, jen.Id("k"), jen.Id("acc"), jen.Qual(runtimePath, "UserWindow").Call(jen.Id("w")))
	}
	name := w.member("%sResult")
	f.Comment(fmt.Sprintf("%s emits the result of a window of %q that fired (or, within the", name, n.Name))
	f.Comment("allowed lateness, changed after it fired).")
	f.Func().Params(w.cg.recv).Id(name).Params(jen.Id("k").Add(typeCode(n.KeyType)), jen.Id("w").Qual(runtimePath, "Window"), jen.Id("acc").Op("*").Add(typeCode(w.acc()))).Block(
		w.emit(out, jen.Id("w").Dot("MaxTimestamp").Call()),
	)
	if w.marksLate() {
		late := w.member("%sLateResult")
		f.Comment(fmt.Sprintf("%s emits the result of a window of %q updated within the allowed", late, n.Name))
		f.Comment("lateness, after it fired: its Firing is pipegen.Late.")
		f.Func().Params(w.cg.recv).Id(late).Params(jen.Id("k").Add(typeCode(n.KeyType)), jen.Id("w").Qual(runtimePath, "Window"), jen.Id("acc").Op("*").Add(typeCode(w.acc()))).Block(
			w.emit(aggregateResult(n, jen.Id("k"), jen.Id("acc"), jen.Qual(runtimePath, "UserWindowFiring").Call(jen.Id("w"), jen.Qual("github.com/pipegen/pipegen", "Late"))), jen.Id("w").Dot("MaxTimestamp").Call()),
		)
	}
}

// joinGen is a join of two keyed inputs: a window join (every pair of a
// key's records in a window) or an interval join (pairs whose times are
// within bounds), with buffers of both sides as state.
type joinGen struct{ base }

func (j *joinGen) state() *jen.Statement { return j.field("State") }
func (j *joinGen) left() *ir.Type        { return j.cg.g.p.Nodes[j.n.Inputs[0].From].Out }
func (j *joinGen) right() *ir.Type       { return j.cg.g.p.Nodes[j.n.Inputs[1].From].Out }
func (j *joinGen) interval() bool        { return j.n.Between != nil }
func (j *joinGen) processing() bool      { return j.n.Window != nil && j.n.Window.Processing }

// incremental reports whether the join's windows are checkpointed as
// deltas (WindowJoin.SnapshotDelta): tumbling and sliding windows in
// memory; sessions, whose merges change windows that got no record, and
// interval joins are written whole.
func (j *joinGen) incremental() bool {
	return !j.interval() && !j.cg.g.pebbleJoin(j.n) && j.n.Window.Kind != "session"
}

// bounds are the interval join's inclusive bounds in milliseconds.
func (j *joinGen) bounds() (lo, hi jen.Code) {
	n := j.n
	lo, hi = millisCode(n.Between[0]), millisCode(n.Between[1])
	if n.Exclusive == "lower" || n.Exclusive == "both" {
		lo = jen.Lit(int(n.Between[0].Milliseconds() + 1))
	}
	if n.Exclusive == "upper" || n.Exclusive == "both" {
		hi = jen.Lit(int(n.Between[1].Milliseconds() - 1))
	}
	return lo, hi
}

// pebbleJoin reports whether node n keeps its buffers in the pebble store
// of its subtask (pebblestate.IntervalJoin or WindowJoin): interval joins
// and window joins on tumbling, sliding or session windows, on the pebble
// backend.
func (g *gen) pebbleJoin(n *ir.Node) bool {
	return g.p.StateBackend == "pebble" && n.Kind == ir.Join &&
		(n.Between != nil || n.Window != nil && (n.Window.Kind == "tumbling" || n.Window.Kind == "sliding" || n.Window.Kind == "session"))
}

func (j *joinGen) stateType() *jen.Statement {
	kind := "WindowJoin"
	if j.interval() {
		kind = "IntervalJoin"
	}
	pkg := runtimePath
	if j.cg.g.pebbleJoin(j.n) {
		pkg = pebblePath
	}
	return jen.Qual(pkg, kind).Types(typeCode(j.n.KeyType), typeCode(j.left()), typeCode(j.right()))
}

func (j *joinGen) doc() string {
	n := j.n
	how := ""
	if j.interval() {
		how = fmt.Sprintf("right records between %s and %s of a left record's time", n.Between[0], n.Between[1])
		switch n.Exclusive {
		case "lower", "upper":
			how += fmt.Sprintf(" (%s bound excluded)", n.Exclusive)
		case "both":
			how += " (bounds excluded)"
		}
	} else {
		how = n.Window.Kind + " windows"
	}
	return fmt.Sprintf("join by %s and %s, %s, apply %s", n.Keys[0].Name, n.Keys[1].Name, how, n.Apply.Name)
}

func (j *joinGen) fields(s *jen.Group) {
	doc := "buffered records of both sides, per key"
	if j.cg.g.pebbleJoin(j.n) {
		doc += ", in a Pebble store"
	}
	s.Id(j.member("%sState")).Op("*").Add(j.stateType()).Comment(doc)
	s.Id(j.member("%sPair")).Func().Params(typeCode(j.left()), typeCode(j.right()), jen.Int64()).Comment(j.member("%sResult") + ", made once")
}

func (j *joinGen) init(b *jen.Group) {
	g, n := j.cg.g, j.n
	var lo, hi jen.Code
	if j.interval() {
		lo, hi = j.bounds()
		if n.Exclusive != "" {
			b.Comment(fmt.Sprintf("exclusive: %s; event time is in whole milliseconds, so an excluded bound is the included one 1ms inside.", n.Exclusive))
		}
	}
	// The pebble stores restore themselves (pebblestate.Open).
	codecs := []jen.Code{jen.Id(g.global("%sCodec", n)), jen.Id(g.global("encode%sRight", n)), jen.Id(g.global("decode%sRight", n))}
	switch {
	case g.pebbleJoin(n) && j.interval():
		b.Add(j.state()).Op("=").Qual(pebblePath, "OpenIntervalJoin").Call(append([]jen.Code{jen.Id("c").Dot("task"), jen.Id(g.constName(n)), lo, hi}, codecs...)...)
	case g.pebbleJoin(n):
		b.Add(j.state()).Op("=").Qual(pebblePath, "OpenWindowJoin").Call(append([]jen.Code{jen.Id("c").Dot("task"), jen.Id(g.constName(n)), assigner(n.Window), millisCode(n.Lateness)}, codecs...)...)
	default:
		if j.interval() {
			b.Add(j.state()).Op("=").Qual(runtimePath, "NewIntervalJoin").Types(typeCode(n.KeyType), typeCode(j.left()), typeCode(j.right())).Call(lo, hi)
		} else {
			b.Add(j.state()).Op("=").Qual(runtimePath, "NewWindowJoin").Types(typeCode(n.KeyType), typeCode(j.left()), typeCode(j.right())).Call(
				assigner(n.Window), millisCode(n.Lateness))
		}
		if j.incremental() {
			b.Qual(runtimePath, "RestoreChanges").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)), jen.Lit(""), j.state(),
				jen.Func().Params(jen.Id("sec").Index().Byte(), jen.Id("delta").Bool()).Error().Block(
					jen.Return(jen.Add(j.state()).Dot("RestoreSection").Call(jen.Id("sec"), jen.Id("delta"), jen.Id(g.global("decode%sKey", n)), jen.Id(g.global("decode%sValue", n)), jen.Id(g.global("decode%sRight", n)))),
				))
			break
		}
		b.Qual(runtimePath, "RestoreKeyed").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)), jen.Lit(""),
			jen.Func().Params(jen.Id("sec").Index().Byte()).Error().Block(
				jen.Return(jen.Add(j.state()).Dot("Restore").Call(jen.Id("sec"), jen.Id(g.global("decode%sKey", n)), jen.Id(g.global("decode%sValue", n)), jen.Id(g.global("decode%sRight", n)))),
			))
	}
	b.Add(j.field("Pair")).Op("=").Id("c").Dot(j.member("%sResult"))
}

func (j *joinGen) ticks() bool { return j.processing() }

// methods emits the per-record methods of both sides and the result
// method.
func (j *joinGen) methods() {
	n, f, cg := j.n, j.cg.f, j.cg
	for i, side := range []string{"Left", "Right"} {
		t := j.left()
		if i == 1 {
			t = j.right()
		}
		name := j.member("to%s" + side)
		f.Comment(fmt.Sprintf("%s takes a record of the %s input of join %q: %s.", name, strings.ToLower(side), n.Name, j.doc()))
		f.Func().Params(cg.recv).Id(name).Params(cg.params(t)...).BlockFunc(func(b *jen.Group) {
			ts, wm := jen.Id("ts"), jen.Id("c").Dot("inputWM")
			if j.processing() {
				ts, wm = nowMillis(), jen.Qual(runtimePath, "MinTime")
			}
			args := []jen.Code{fn(n.Keys[i]).Call(pass(n.Keys[i], jen.Id("r"), jen.Op("&").Id("r"))), jen.Id("r"), ts, wm}
			if j.interval() {
				args = append(args, j.field("Pair"))
			}
			if j.processing() {
				b.Comment("A record too late to be paired is dropped, and counted.")
				b.If(jen.Op("!").Add(j.state()).Dot("Add" + side).Call(args...)).Block(cg.count(n, true))
				return
			}
			b.Comment(fmt.Sprintf("A record too late to be paired goes to the side output %s.", joinLateSide[i]))
			b.If(jen.Op("!").Add(j.state()).Dot("Add" + side).Call(args...)).Block(
				jen.Id("c").Dot(cg.member("emit%s"+side+"Late", n)).Call(cg.args(jen.Id("r"), jen.Id("ts"))...))
		})
	}
	result := j.member("%sResult")
	f.Comment(fmt.Sprintf("%s applies %s to a pair of %q.", result, n.Apply.Name, n.Name))
	f.Func().Params(cg.recv).Id(result).Params(jen.Id("l").Add(typeCode(j.left())), jen.Id("r").Add(typeCode(j.right())), jen.Id("ts").Int64()).Block(
		j.emit(fn(n.Apply).Call(pass(n.Apply, jen.Id("l"), jen.Op("&").Id("l")), pass(n.Apply, jen.Id("r"), jen.Op("&").Id("r"))), jen.Id("ts")),
	)
	if !j.interval() {
		pair := j.member("%sWindowPair")
		f.Comment(fmt.Sprintf("%s emits a pair of a window of %q that fired.", pair, n.Name))
		f.Func().Params(cg.recv).Id(pair).Params(jen.Id("l").Add(typeCode(j.left())), jen.Id("r").Add(typeCode(j.right())), jen.Id("w").Qual(runtimePath, "Window")).Block(
			jen.Id("c").Dot(result).Call(jen.Id("l"), jen.Id("r"), jen.Id("w").Dot("MaxTimestamp").Call()),
		)
	}
}

func (j *joinGen) advance(b *jen.Group, to jen.Code) {
	if j.interval() {
		b.Add(j.state()).Dot("Advance").Call(to)
		return
	}
	b.Add(j.state()).Dot("Advance").Call(to, jen.Id("c").Dot(j.member("%sWindowPair")))
}

func (j *joinGen) watermark(b *jen.Group) {
	if !j.processing() {
		j.advance(b, jen.Id("w"))
	}
}

func (j *joinGen) tick(b *jen.Group) {
	if j.processing() {
		j.advance(b, nowMillis())
	}
}

func (j *joinGen) end(b *jen.Group) {
	if j.processing() {
		b.Comment("The input has ended: every window fires.")
		j.advance(b, jen.Qual(runtimePath, "MaxTime"))
	}
}

func (j *joinGen) snapshot(b *jen.Group) {
	g, n := j.cg.g, j.n
	if g.pebbleJoin(n) {
		snap := "SnapshotWindowJoin"
		if j.interval() {
			snap = "SnapshotIntervalJoin"
		}
		b.Qual(pebblePath, snap).Call(jen.Id("s"), jen.Id(g.constName(n)), j.state())
		return
	}
	if j.incremental() {
		b.Comment("The windows whose records changed since the last checkpoint (a record")
		b.Comment("came, the window fired or emitted), or all of them.")
		b.Qual(runtimePath, "SnapshotChanges").Call(jen.Id("s"), jen.Id(g.constName(n)), jen.Lit(""), jen.Id(g.global("hashKey%s", n)), jen.Id(g.global("%sKeySchema", n)), jen.Id(g.global("%sValueSchema", n)), j.state(),
			jen.Func().Params(jen.Id("sec").Op("*").Qual(statePath, "Sections"), jen.Id("kg").Func().Params(typeCode(n.KeyType)).Int(), jen.Id("d").Qual(runtimePath, "Delta")).Params(jen.Uint64(), jen.Error()).Block(
				jen.Return(jen.Add(j.state()).Dot("SnapshotDelta").Call(jen.Id("sec"), jen.Id("kg"), jen.Id(g.global("encode%sKey", n)), jen.Id(g.global("encode%sValue", n)), jen.Id(g.global("encode%sRight", n)), jen.Id("d"))),
			))
		return
	}
	b.Qual(runtimePath, "SnapshotKeyed").Call(jen.Id("s"), jen.Id(g.constName(n)), jen.Lit(""), jen.Id(g.global("hashKey%s", n)), jen.Id(g.global("%sKeySchema", n)), jen.Id(g.global("%sValueSchema", n)),
		jen.Func().Params(jen.Id("sec").Op("*").Qual(statePath, "Sections"), jen.Id("kg").Func().Params(typeCode(n.KeyType)).Int()).Error().Block(
			jen.Return(jen.Add(j.state()).Dot("Snapshot").Call(jen.Id("sec"), jen.Id("kg"), jen.Id(g.global("encode%sKey", n)), jen.Id(g.global("encode%sValue", n)), jen.Id(g.global("encode%sRight", n)))),
		))
}
