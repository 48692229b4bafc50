package dsl

import (
	"fmt"
	"go/types"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/ir"
	"github.com/pipegen/pipegen/runtime/settings"
)

// Resolve checks a spec against the user's Go package and builds the IR. It
// reports every problem it can find in one pass; the IR is nil unless the
// list holds no error (it may hold warnings). Every value is checked against the settings table
// (runtime/settings), and a missing one takes the table's default.
func Resolve(spec *Spec) (*ir.Pipeline, *diag.List) {
	syn := spec.syntax
	if syn == nil {
		syn = yamlSyntax{}
	}
	r := &resolver{reporter: reporter{diags: &diag.List{}, syntax: syn}, spec: spec, byName: map[string]*rnode{}}
	p := r.resolve()
	if r.diags.HasErrors() {
		return nil, r.diags
	}
	return p, r.diags
}

type resolver struct {
	reporter
	spec *Spec
	u    *userPackage
	conv typeConverter

	nodes  []*rnode // in declaration order
	byName map[string]*rnode
	order  []*rnode // topological
	// maxParallelism is the pipeline's number of key groups.
	maxParallelism int
}

// rnode is a node being resolved.
type rnode struct {
	spec   *NodeSpec
	decl   int // declaration index
	inputs []rinput
	// in is the type of the input records; joinIn those of each input of
	// a join.
	in     types.Type
	joinIn []types.Type
	// out is the type of the node's records, nil for sinks and when it
	// could not be determined (an error was reported).
	out types.Type
	// ok is false once a problem was reported on the node: its types are
	// not trusted, so that one mistake does not cascade into many.
	ok bool
	ir *ir.Node
	// par is the parallelism the node runs at as far as the compiler
	// knows: its own, its input's for a node that inherits it, 0 for the
	// pipeline's default (which run --parallelism may change).
	par int
	// sides are a process node's side outputs and their types.
	sides map[string]types.Type
}

type rinput struct {
	from *rnode
	side string
	pos  diag.Pos
}

func (r *resolver) resolve() *ir.Pipeline {
	s := r.spec
	r.parse(settings.Lookup("name"), s.Name)
	r.parse(settings.Lookup("package"), s.Package)
	p := &ir.Pipeline{
		Name:           s.Name.V,
		Parallelism:    value[int](r, "parallelism"),
		MaxParallelism: value[int](r, "max-parallelism"),
		StateBackend:   value[string](r, "state.backend"),
		Checkpoint: ir.Checkpoint{
			Mode:     value[string](r, "checkpoint.mode"),
			Interval: value[time.Duration](r, "checkpoint.interval"),
			Timeout:  value[time.Duration](r, "checkpoint.timeout"),
			MinPause: value[time.Duration](r, "checkpoint.min-pause"),
			Retain:   value[int](r, "checkpoint.retain"),
			Dir:      value[string](r, "checkpoint.dir"),
		},
		Restart: ir.Restart{
			Strategy:    value[string](r, "restart.strategy"),
			Attempts:    value[int](r, "restart.attempts"),
			Delay:       value[time.Duration](r, "restart.delay"),
			MaxDelay:    value[time.Duration](r, "restart.max-delay"),
			Multiplier:  value[float64](r, "restart.multiplier"),
			MaxFailures: value[int](r, "restart.max-failures"),
			Interval:    value[time.Duration](r, "restart.interval"),
		},
	}
	if p.MaxParallelism < p.Parallelism {
		at := s.Settings["max-parallelism"].Pos
		if !s.Settings["max-parallelism"].Set {
			at = s.Settings["parallelism"].Pos
		}
		r.report(at, diag.Conflict, "%v %d is less than %v %d: keyed operators need at least one key group per subtask; set %v to %d or more", keyRef("max-parallelism"), p.MaxParallelism, keyRef("parallelism"), p.Parallelism, keyRef("max-parallelism"), p.Parallelism)
	}
	r.maxParallelism = p.MaxParallelism

	r.declare()
	r.link()
	r.sort()
	r.checkDeadLetters()

	pkgPattern := "."
	pkgPos := diag.Pos{File: s.File, Line: 1, Col: 1}
	if s.Package.Set {
		pkgPattern, pkgPos = s.Package.V, s.Package.Pos
	}
	dir := filepath.Dir(s.File)
	r.u = s.pkg
	if r.u == nil {
		r.u = loadPackage(dir, pkgPattern, pkgPos, &r.reporter)
	}
	if r.u == nil {
		return nil
	}
	r.conv = typeConverter{u: r.u}
	p.Package = ir.Package{Path: r.u.pkg.PkgPath, Name: r.u.pkg.Name}
	p.Source = r.u.rel(s.File)
	p.ModuleDir = r.u.moduleDir

	for _, n := range r.order {
		r.nodeName = n.spec.Name.V
		r.check(n)
	}
	r.nodeName = ""
	for i, n := range r.order {
		n.ir.ID = i
		n.ir.Pos = r.u.irPos(n.spec.Pos)
		p.Nodes = append(p.Nodes, n.ir)
	}
	r.inheritParallelism()
	for _, n := range r.order {
		for _, in := range n.inputs {
			e := ir.Edge{From: in.from.ir.ID, Side: in.side, Partition: partition(in.from, n)}
			switch {
			case in.side == deadLetter:
				e.Type = ir.StringType
			case in.from.ir.Side(in.side) != nil:
				e.Type = in.from.ir.Side(in.side).Type
			case in.side == "late" && in.from.in != nil:
				// Late records are the window's input records.
				e.Type = r.conv.convert(in.from.in)
			case (in.side == lateLeft || in.side == lateRight) && len(in.from.joinIn) == 2:
				e.Type = r.conv.convert(in.from.joinIn[boolIndex(in.side == lateRight, 1)])
			case in.from.out != nil:
				e.Type = r.conv.convert(in.from.out)
			}
			if bc := n.ir.Broadcast; bc != nil && len(n.ir.Inputs) == bc.Input {
				e.Partition = ir.Broadcast // every subtask gets every record
			}
			n.ir.Inputs = append(n.ir.Inputs, e)
		}
	}
	if !r.diags.HasErrors() {
		r.warnReordering()
		r.warnNoSink()
		r.warnTransactionTimeouts()
		r.warnMergeUnused(p)
	}
	return p
}

// warnMergeUnused warns of an aggregate.merge on event-time sliding
// windows that cannot be kept in slices (ir.Pipeline.SlicedWindows): the
// windows are kept whole, and merge is never called.
func (r *resolver) warnMergeUnused(p *ir.Pipeline) {
	defer func() { r.nodeName = "" }()
	for _, n := range r.order {
		if !n.ok || n.ir == nil {
			continue
		}
		if _, why := p.SlicedWindows(n.ir); why != "" {
			r.nodeName = n.spec.Name.V
			r.warn(n.spec.Merge.Pos, diag.Misplaced, "%v is never called: the sliding windows of %q are kept whole, since %s, and only windows kept in slices of the slide merge them (docs/eventtime.md, Sliding windows in slices); remove it, or lift what keeps the slices off",
				keyRef("aggregate.merge"), n.spec.Name.V, why)
		}
	}
}

// value is the pipeline-wide setting at path as written, or its default
// when it is missing or wrong (and reported).
func value[T any](r *resolver, path string) T {
	s := settings.Lookup(path)
	if v, ok := r.parse(s, r.spec.Settings[path]); ok {
		return v.(T)
	}
	return s.DefaultValue().(T)
}

// declare checks names, uids, parallelism and connectors, and indexes the
// nodes by name.
func (r *resolver) declare() {
	uids := map[string]*rnode{}
	for i, ns := range r.spec.Nodes() {
		n := &rnode{spec: ns, decl: i, ok: true}
		r.nodes = append(r.nodes, n)
		n.ir = &ir.Node{Name: ns.Name.V, Kind: ir.Kind(ns.Kind.V)}
		if !ns.Name.Set {
			n.ok = false
			continue
		}
		r.nodeName = ns.Name.V
		scope := ns.Section.scope()
		r.parse(settings.Node(scope, "", "name"), ns.Name)
		if prev, dup := r.byName[ns.Name.V]; dup {
			r.report(ns.Name.Pos, diag.Duplicate, "duplicate name %q: %s %q is declared at %s too; every node needs its own name", ns.Name.V, prev.spec.Section.Singular(), ns.Name.V, prev.spec.Name.Pos)
			n.ok = false
			continue
		}
		r.byName[ns.Name.V] = n
		uid := Str{V: ns.Name.V, Pos: ns.Name.Pos}
		if ns.UID.Set {
			uid = ns.UID
			r.parse(settings.Node(scope, "", "uid"), uid)
		}
		if prev, dup := uids[uid.V]; dup {
			r.report(uid.Pos, diag.Duplicate, "uid %q of %q is taken by %q: a uid names one node's state, so every node needs its own", uid.V, ns.Name.V, prev.spec.Name.V)
		}
		uids[uid.V] = n
		n.ir.UID = uid.V
		if v, ok := r.parse(settings.Node(scope, "", "parallelism"), ns.Parallelism); ok {
			n.ir.Parallelism = v.(int)
			if n.ir.Kind.Stateful() && n.ir.Parallelism > r.maxParallelism {
				r.report(ns.Parallelism.Pos, diag.Conflict, "%v %d of keyed operator %q exceeds %v %d: it needs at least one key group per subtask", keyRef("parallelism"), n.ir.Parallelism, ns.Name.V, keyRef("max-parallelism"), r.maxParallelism)
			}
		}
	}
	r.nodeName = ""
	if len(r.spec.Sources) == 0 {
		r.report(r.spec.Pos, diag.Missing, "pipeline %q has no sources: add %v", r.spec.Name.V, addNode(settings.Source))
	}
	if len(r.spec.Sinks) == 0 {
		r.report(r.spec.Pos, diag.Missing, "pipeline %q has no sinks, so it would compute nothing anyone sees: add %v", r.spec.Name.V, addNode(settings.Sink))
	}
}

// link resolves every input name and checks the number of inputs.
func (r *resolver) link() {
	defer func() { r.nodeName = "" }()
	for _, n := range r.nodes {
		ns := n.spec
		r.nodeName = ns.Name.V
		for _, in := range ns.Inputs {
			if !in.Set {
				n.ok = false // a value of the wrong shape, reported by the front end
				continue
			}
			name, side, _ := strings.Cut(in.V, ".")
			from, ok := r.byName[name]
			if !ok {
				r.report(in.Pos, diag.Graph, "unknown input %q%s", in.V, suggest(name, slices.Sorted(mapsKeys(r.byName))))
				n.ok = false
				continue
			}
			if from.spec.Section == Sinks {
				r.report(in.Pos, diag.Graph, "input %q is a sink, which has no output", in.V)
				n.ok = false
				continue
			}
			if side != "" && side != "late" && side != deadLetter && side != lateLeft && side != lateRight && from.spec.Kind.V != "process" {
				r.report(in.Pos, diag.Graph, "unknown side output %q of %s: the side outputs are %s.late (records too late for its window), %s.late-left and %s.late-right (records too late for a join) and %s.dead-letter (malformed records of a file or Kafka source with %v)", side, name, name, name, name, name, ex("on-error", deadLetter))
				n.ok = false
				continue
			}
			// A join may read one stream on both sides: a self-join.
			if ns.Kind.V != "join" && slices.ContainsFunc(n.inputs, func(i rinput) bool { return i.from == from && i.side == side }) {
				r.report(in.Pos, diag.Duplicate, "input %q is listed twice", in.V)
				n.ok = false
				continue
			}
			n.inputs = append(n.inputs, rinput{from: from, side: side, pos: in.Pos})
		}
		if ns.Section == Sources || !ns.Name.Set || slices.ContainsFunc(ns.Inputs, func(in Str) bool { return !in.Set }) {
			continue
		}
		want := 1
		switch ns.Kind.V {
		case "union":
			want = -2
		case "join":
			want = 2
		case "process":
			if len(ns.Inputs) == 2 {
				want = 2 // a function per input
			}
		}
		got := len(ns.Inputs)
		switch {
		case got == 0:
			r.report(ns.Name.Pos, diag.Missing, "%s %q has no input: add %v", ns.Section.Singular(), ns.Name.V, ex("input", "NAME"))
			n.ok = false
		case ns.Kind.V == "process" && got > 2:
			r.report(ns.Inputs[2].Pos, diag.Graph, "process %q has %d inputs but a process takes one, or two with a function each: merge streams with a union first", ns.Name.V, got)
			n.ok = false
		case want == 1 && got > 1:
			r.report(ns.Inputs[1].Pos, diag.Graph, "%s %q has %d inputs but %s takes one: merge streams with a union first", ns.Section.Singular(), ns.Name.V, got, article(ns.Kind.V))
			n.ok = false
		case want == 2 && got != 2:
			r.report(ns.Name.Pos, diag.Graph, "join %q takes exactly two inputs, got %d", ns.Name.V, got)
			n.ok = false
		case want == -2 && got < 2:
			r.report(ns.Name.Pos, diag.Graph, "union %q merges two or more inputs, got %d: list them in %v", ns.Name.V, got, ex("inputs", "a", "b"))
			n.ok = false
		}
	}
}

// deadLetter is the side output of a file or Kafka source's malformed records.
const deadLetter = "dead-letter"

// lateLeft and lateRight are the side outputs of a join's records too late
// to be paired, of its left and its right input.
const (
	lateLeft  = "late-left"
	lateRight = "late-right"
)

// sendsDeadLetters reports whether a node is a file or Kafka source whose
// malformed records go to its side output dead-letter.
func sendsDeadLetters(ns *NodeSpec) bool {
	opt, ok := ns.Option("on-error")
	return ns.Section == Sources && (ns.Connector.V == "file" || ns.Connector.V == "kafka") && ok && opt.Value.V == deadLetter
}

// checkDeadLetters reports a source that sends its malformed records to
// its side output dead-letter, which nothing reads: they would vanish.
func (r *resolver) checkDeadLetters() {
	for _, n := range r.nodes {
		if !sendsDeadLetters(n.spec) {
			continue
		}
		read := false
		for _, m := range r.nodes {
			read = read || slices.ContainsFunc(m.inputs, func(in rinput) bool { return in.from == n && in.side == deadLetter })
		}
		if !read {
			opt, _ := n.spec.Option("on-error")
			r.nodeName = n.spec.Name.V
			r.report(opt.Value.Pos, diag.Graph, "%v sends the malformed records of %q to %s.dead-letter, which nothing reads: add a sink with %v", ex("on-error", deadLetter), n.spec.Name.V, n.spec.Name.V, ex("input", n.spec.Name.V+".dead-letter"))
		}
	}
	r.nodeName = ""
}

// boolIndex returns k when b, else 0: the input that is (or is not) timed
// in a mismatch message.
func boolIndex(b bool, k int) int {
	if b {
		return k
	}
	return 0
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// sort orders the nodes topologically, keeping the declaration order where
// the graph allows, and reports cycles.
func (r *resolver) sort() {
	defer func() { r.nodeName = "" }()
	const (
		unvisited = iota
		visiting
		done
	)
	state := map[*rnode]int{}
	var visit func(n *rnode, path []*rnode)
	visit = func(n *rnode, path []*rnode) {
		switch state[n] {
		case done:
			return
		case visiting:
			i := slices.Index(path, n)
			var names []string
			// path runs from consumer to producer; show the data's way.
			names = append(names, n.spec.Name.V)
			for _, m := range slices.Backward(path[i:]) {
				names = append(names, m.spec.Name.V)
			}
			r.nodeName = n.spec.Name.V
			r.report(n.spec.Name.Pos, diag.Graph, "cycle: %s; a pipeline is a graph without loops", strings.Join(names, " -> "))
			for _, m := range path[i:] {
				m.ok = false
			}
			return
		}
		state[n] = visiting
		for _, in := range n.inputs {
			visit(in.from, append(path, n))
		}
		state[n] = done
		r.order = append(r.order, n)
	}
	for _, n := range r.nodes {
		visit(n, nil)
	}
}

// check type-checks one node; its inputs are checked already.
func (r *resolver) check(n *rnode) {
	ns := n.spec
	var in types.Type
	for k, i := range n.inputs {
		out := i.from.out
		// A source whose timestamps section has a mistake still counts
		// as timed, so that the mistake is reported once.
		timed := i.from.ir.Timed || i.from.spec.Timestamps != nil
		if i.side == deadLetter {
			if !sendsDeadLetters(i.from.spec) {
				if i.from.ok {
					r.report(i.pos, diag.Graph, "%s has no side output dead-letter: a file or Kafka source sends its malformed records there with %v", i.from.spec.Name.V, ex("on-error", deadLetter))
				}
				n.ok = false
				return
			}
			// A dead letter keeps the event time the source has reached,
			// so that it is never late.
			out = types.Typ[types.String]
		} else if i.side != "" && i.from.spec.Kind.V == "process" {
			t, ok := r.sideInputType(i)
			if !ok {
				n.ok = false
				return
			}
			out = t
		} else if i.side == "late" {
			if i.from.ir.Window == nil || i.from.ir.Window.Processing || i.from.ir.Window.Kind == "count" || (i.from.ir.Kind != ir.Aggregate && i.from.ir.Kind != ir.Reduce) {
				if i.from.ok && i.from.out != nil {
					r.report(i.pos, diag.Graph, "%s has no side output late: only event-time windows of reduce and aggregate send late records there", i.from.spec.Name.V)
				}
				n.ok = false
				return
			}
			out = i.from.in
			timed = true
		} else if i.side == lateLeft || i.side == lateRight {
			f := i.from.ir
			if f.Kind != ir.Join || !f.Timed || (f.Window != nil && f.Window.Processing) || len(i.from.joinIn) != 2 {
				if i.from.ok && i.from.out != nil {
					r.report(i.pos, diag.Graph, "%s has no side output %s: only joins on event time send late records there", i.from.spec.Name.V, i.side)
				}
				n.ok = false
				return
			}
			out = i.from.joinIn[boolIndex(i.side == lateRight, 1)]
			timed = true
		}
		if out == nil {
			// The input's type is unknown, for a reason reported already.
			return
		}
		if k == 0 {
			n.ir.Timed = timed
		} else if timed != n.ir.Timed {
			r.report(i.pos, diag.Type, "input %q carries event time and %q does not: merge inputs that both come from sources with timestamps, or both without", n.inputs[boolIndex(timed, k)].from.spec.Name.V, n.inputs[boolIndex(!timed, k)].from.spec.Name.V)
			n.ok = false
			return
		}
		if ns.Kind.V == "join" || ns.Kind.V == "process" && len(n.inputs) == 2 {
			n.joinIn = append(n.joinIn, out)
			if in == nil {
				in = out
			}
			continue
		}
		if in == nil {
			in = out
		} else if !types.Identical(in, out) && n.ok {
			r.report(i.pos, diag.Type, "input %q carries %s but %q carries %s: the inputs of a %s must carry the same type", i.from.spec.Name.V, r.u.typeString(i.from.out), n.inputs[0].from.spec.Name.V, r.u.typeString(in), ns.Kind.V)
			n.ok = false
			return
		}
	}
	n.in = in
	if !n.ok && ns.Section != Sources {
		return
	}
	switch ns.Section {
	case Sources:
		n.out = r.checkSource(n)
		r.checkTimestamps(n, n.out)
	case Sinks:
		r.checkSink(n, in)
	default:
		n.out = r.checkOperator(n, in)
		r.checkTrigger(n)
	}
	if n.out != nil {
		n.ir.Out = r.conv.convert(n.out)
	}
}

func (r *resolver) fn(f *types.Func, shape string) *ir.Func {
	return &ir.Func{
		PkgPath:   f.Pkg().Path(),
		Name:      f.Name(),
		Shape:     shape,
		Signature: r.u.typeString(f.Type()),
		Pos:       r.u.irPos(r.u.position(f.Pos())),
	}
}

// fnRef is fn for a function that takes its input record by pointer
// when ref (ir.Func.Ref).
func (r *resolver) fnRef(f *types.Func, shape string, ref bool) *ir.Func {
	x := r.fn(f, shape)
	x.Ref = ref
	return x
}

// recordParam reports whether t, the type of a function's parameter for
// an input record of type in, takes it: as in (by value) or as *in (by
// pointer, ref), which spares the copy of a large record at every call
// (docs/dsl.md, Records by pointer).
func recordParam(t, in types.Type) (ok, ref bool) {
	if types.Identical(t, in) {
		return true, false
	}
	if p, isPtr := t.(*types.Pointer); isPtr && types.Identical(p.Elem(), in) {
		return true, true
	}
	return false, false
}

// recordSignatureError is signatureError for a function that may take its
// input record of type in by value or by pointer: the expected forms are
// written with in, and the message says *in is accepted too.
func (r *resolver) recordSignatureError(name Str, role string, f *types.Func, in types.Type, expected ...string) {
	inS := r.u.typeString(in)
	r.signatureError(name, role, f, strings.Join(expected, " or ")+fmt.Sprintf(" (or *%s for %s: the record by pointer)", inS, inS))
}

// signatureError reports a function whose signature does not fit, showing
// what was expected and what was found.
func (r *resolver) signatureError(name Str, role string, f *types.Func, expected ...string) {
	r.report(name.Pos, diag.Function, "%s %s has the wrong signature: expected %s, got %s (declared at %s)",
		role, name.V, strings.Join(expected, " or "), r.u.typeString(f.Type()), r.u.position(f.Pos()))
}

func params(f *types.Func) (*types.Tuple, *types.Tuple) {
	sig := f.Type().(*types.Signature)
	if sig.Variadic() {
		return nil, nil
	}
	return sig.Params(), sig.Results()
}

var errorType = types.Universe.Lookup("error").Type()

func (r *resolver) checkSource(n *rnode) types.Type {
	ns := n.spec
	conn := settings.LookupConnector(settings.Source, ns.Connector.V)
	if !ns.Connector.Set || conn == nil {
		return nil // reported by connector
	}
	n.ir.Connector = conn.Name
	opts := r.options(n, conn)
	switch conn.Name {
	case "kafka":
		return r.checkKafkaSource(n, conn, opts)
	case "file":
		format := opts["format"]
		n.ir.Format = format.V
		r.checkFormatOptions(n, conn, format.V)
		typ, hasType := opts["type"]
		if format.V == "lines" {
			if hasType && typ.Set {
				r.report(typ.Pos, diag.Misplaced, "%v is for the jsonl and csv formats; format lines gives strings", keyRef("type"))
			}
			return types.Typ[types.String]
		}
		return r.decodedType(n, format.V, typ, hasType)
	case "generator":
		gen, ok := opts["generate"]
		if !ok {
			return nil
		}
		f := r.u.lookupFunc(gen.Value(), &r.reporter)
		if f == nil {
			n.ok = false
			return nil
		}
		ps, rs := params(f)
		seqFirst := ps != nil && ps.Len() >= 1 && types.Identical(ps.At(0).Type(), types.Typ[types.Uint64])
		if seqFirst && ps.Len() == 1 && rs.Len() == 2 && types.Identical(rs.At(1).Type(), types.Typ[types.Bool]) {
			n.ir.Fn = r.fn(f, "")
			return rs.At(0).Type()
		}
		// The form that writes the record into the chain's variable: the
		// value form's result is stored and then copied, a copy that
		// stalls on store forwarding (docs/dsl.md, Records by pointer).
		if seqFirst && ps.Len() == 2 && rs.Len() == 1 && types.Identical(rs.At(0).Type(), types.Typ[types.Bool]) {
			if ptr, ok := ps.At(1).Type().(*types.Pointer); ok {
				n.ir.Fn = r.fn(f, "into")
				return ptr.Elem()
			}
		}
		r.signatureError(gen.Value(), "generator", f, "func(seq uint64) (T, bool)", "func(seq uint64, into *T) bool")
		n.ok = false
	}
	return nil
}

// decodedType is the record type of a source that decodes jsonl or csv
// into its option type (typ, if hasType).
func (r *resolver) decodedType(n *rnode, format string, typ optionValue, hasType bool) types.Type {
	if !hasType || !typ.Set {
		r.report(n.spec.Name.Pos, diag.Missing, "source %q reads %s: name the record type with %v", n.spec.Name.V, format, ex("type", "TypeName"))
		n.ok = false
		return nil
	}
	t := r.u.lookupType(typ.Value(), &r.reporter)
	if t == nil {
		n.ok = false
		return nil
	}
	if format == "csv" {
		if p := csvProblem(t, r.u); p != "" {
			r.report(typ.Pos, diag.Type, "type %s cannot be read from csv: %s", typ.V, p)
			n.ok = false
			return nil
		}
	}
	return t
}

// checkFormatOptions reports options set for a format they do not apply
// to, such as a csv header on a lines source.
func (r *resolver) checkFormatOptions(n *rnode, conn *settings.Connector, format string) {
	for _, o := range n.spec.Options {
		if opt := conn.Option(o.Name.V); opt != nil {
			if err := opt.CheckFormat(format); err != nil {
				r.report(o.Name.Pos, diag.Misplaced, "%v", err)
				n.ok = false
			}
		}
	}
}

// notFor reports a key that an operator of n's kind does not take: "KEY is
// for KINDS; a KIND WHY".
func (r *resolver) notFor(n *rnode, at diag.Pos, path, why string) {
	msg := "%v is for %s"
	args := []any{keyRef(path), settings.KindsText(path)}
	if why != "" {
		msg += "; %s %s"
		args = append(args, article(n.spec.Kind.V), why)
	}
	r.report(at, diag.Misplaced, msg, args...)
	n.ok = false
}

// optionValue is an option as written, or its default.
type optionValue struct {
	V   string
	Pos diag.Pos
	Set bool // written in the pipeline
}

func (o optionValue) Value() Str { return Str{V: o.V, Pos: o.Pos, Set: o.Set} }

// options checks a connector's options and returns them with defaults.
func (r *resolver) options(n *rnode, conn *settings.Connector) map[string]optionValue {
	ns := n.spec
	out := map[string]optionValue{}
	for _, o := range conn.Options {
		if o.Default != "" {
			out[o.Path] = optionValue{V: o.Default, Pos: ns.Connector.Pos}
		}
	}
	for _, o := range ns.Options {
		opt := conn.Option(o.Name.V)
		if opt == nil {
			continue // reported by the front end
		}
		if !o.Value.Set {
			// A value of the wrong shape, reported by the front end; the
			// option is there all the same.
			out[o.Name.V] = optionValue{Pos: o.Value.Pos}
			n.ok = false
			continue
		}
		if _, ok := r.parse(opt, o.Value); !ok {
			n.ok = false
			continue
		}
		out[o.Name.V] = optionValue{V: o.Value.V, Pos: o.Value.Pos, Set: true}
		if !opt.Static {
			n.ir.Options = append(n.ir.Options, ir.Option{Name: o.Name.V, Value: o.Value.V})
		}
	}
	slices.SortFunc(n.ir.Options, func(a, b ir.Option) int { return strings.Compare(a.Name, b.Name) })
	for _, o := range conn.Options {
		if _, ok := out[o.Path]; !ok && o.Required {
			r.report(ns.Name.Pos, diag.Missing, "%s %q needs %v (%s)", conn.Scope, ns.Name.V, ex(o.Path), o.Help)
			n.ok = false
		}
	}
	return out
}

func (r *resolver) checkSink(n *rnode, in types.Type) {
	ns := n.spec
	conn := settings.LookupConnector(settings.Sink, ns.Connector.V)
	if !ns.Connector.Set || conn == nil {
		return // reported by connector
	}
	n.ir.Connector = conn.Name
	opts := r.options(n, conn)
	if in == nil {
		return
	}
	isString := types.Identical(in, types.Typ[types.String])
	stringer := hasStringMethod(in)
	format, set := opts["format"]
	if !set {
		switch {
		case isString, stringer && conn.Name == "stdout":
			format.V = "lines"
		case conn.Name == "kafka" && isBytes(in):
			format.V = "raw"
		default:
			format.V = "jsonl"
		}
	}
	n.ir.Format = format.V
	r.checkFormatOptions(n, conn, format.V)
	if conn.Name == "kafka" {
		r.checkKafkaSink(n, in, opts)
	}
	switch format.V {
	case "raw":
		if !isBytes(in) {
			r.report(format.Pos, diag.Type, "format raw writes []byte records, and %s is not one: use %v or %v", r.u.typeString(in), ex("format", "jsonl"), ex("format", "lines"))
			n.ok = false
		}
	case "lines":
		if !isString && !stringer {
			r.report(format.Pos, diag.Type, "format lines writes strings, and %s is neither a string nor has a String() string method: use %v, or add a String method", r.u.typeString(in), ex("format", "jsonl"))
			n.ok = false
		}
	case "csv":
		if p := csvWriteProblem(in, r.u); p != "" {
			r.report(format.Pos, diag.Type, "sink %q cannot write %s as csv: %s", ns.Name.V, r.u.typeString(in), p)
			n.ok = false
		}
	case "jsonl":
		if p := jsonProblem(in, r.u, map[types.Type]bool{}); p != "" {
			r.report(ns.Name.Pos, diag.Type, "sink %q cannot write %s as JSON: %s", ns.Name.V, r.u.typeString(in), p)
			n.ok = false
		}
	}
}

func (r *resolver) checkOperator(n *rnode, in types.Type) types.Type {
	ns := n.spec
	kind := ns.Kind.V
	if in == nil {
		return nil
	}
	stateful := slices.Contains(settings.KindsOf("key"), kind)
	if len(ns.Keys) > 0 && !stateful {
		r.notFor(n, ns.Keys[0].Pos, "key", "keeps no state per key")
	} else if len(ns.Keys) > 1 && kind != "join" && !(kind == "process" && len(n.joinIn) == 2) {
		r.report(ns.Keys[1].Pos, diag.BadValue, "%s %q has %d key functions but takes one: a list of keys is for join, one per input", kind, ns.Name.V, len(ns.Keys))
		n.ok = false
	}
	emit := settings.Node(settings.Operator, kind, "emit")
	if ns.Emit.Set && !emit.For(kind) {
		r.notFor(n, ns.Emit.Pos, "emit", "")
	} else if v, ok := r.parse(emit, ns.Emit); ok {
		n.ir.Emit = v.(string)
	} else if ns.Emit.Set {
		n.ok = false
	}
	if ns.OnTimer.Set && !slices.Contains(settings.KindsOf("on-timer"), kind) {
		r.notFor(n, ns.OnTimer.Pos, "on-timer", "has no timers")
	}
	r.checkStateTTL(n)
	r.checkWindow(n)
	if kind == "join" {
		return r.checkJoin(n)
	}
	if kind == "process" && len(n.joinIn) == 2 && ns.Broadcast.Set {
		return r.checkProcessBroadcast(n)
	}
	if kind == "process" && len(n.joinIn) == 2 {
		return r.checkProcessPair(n)
	}
	var key types.Type
	if stateful {
		if len(ns.Keys) == 0 {
			r.report(ns.Kind.Pos, diag.Missing, "%s %q keeps state per key and needs one: add %v (func(%s) K)", kind, ns.Name.V, ex("key", "KeyFunc"), r.u.typeString(in))
			n.ok = false
		} else {
			key = r.checkKey(n, ns.Keys[0], in)
		}
		switch {
		case !emit.For(kind):
			n.ir.Emit = ""
		case ns.Window != nil:
			n.ir.Emit = "window"
		case n.ir.Emit == "":
			n.ir.Emit = emit.Default
		}
	}
	if kind == "process" {
		return r.checkProcess(n, in, key)
	}
	inS := r.u.typeString(in)
	switch kind {
	case "map":
		f := r.u.lookupFunc(ns.Fn, &r.reporter)
		if f == nil {
			return nil
		}
		ps, rs := params(f)
		if ps != nil && ps.Len() == 1 {
			if ok, ref := recordParam(ps.At(0).Type(), in); ok {
				if rs.Len() == 1 {
					n.ir.Fn = r.fnRef(f, "value", ref)
					return rs.At(0).Type()
				}
				if rs.Len() == 2 && types.Identical(rs.At(1).Type(), errorType) {
					n.ir.Fn = r.fnRef(f, "error", ref)
					return rs.At(0).Type()
				}
			}
		}
		r.recordSignatureError(ns.Fn, "map", f, in, fmt.Sprintf("func(%s) Out", inS), fmt.Sprintf("func(%s) (Out, error)", inS))
	case "filter":
		f := r.u.lookupFunc(ns.Fn, &r.reporter)
		if f == nil {
			return nil
		}
		ps, rs := params(f)
		if ps != nil && ps.Len() == 1 && rs.Len() == 1 && types.Identical(rs.At(0).Type(), types.Typ[types.Bool]) {
			if ok, ref := recordParam(ps.At(0).Type(), in); ok {
				n.ir.Fn = r.fnRef(f, "", ref)
				return in
			}
		}
		r.recordSignatureError(ns.Fn, "filter", f, in, fmt.Sprintf("func(%s) bool", inS))
	case "flatmap":
		f := r.u.lookupFunc(ns.Fn, &r.reporter)
		if f == nil {
			return nil
		}
		ps, rs := params(f)
		var ref bool
		ok := ps != nil && ps.Len() >= 1
		if ok {
			ok, ref = recordParam(ps.At(0).Type(), in)
		}
		if ok && ps.Len() == 2 && rs.Len() == 0 {
			if emit, ok := ps.At(1).Type().Underlying().(*types.Signature); ok && emit.Params().Len() == 1 && emit.Results().Len() == 0 && !emit.Variadic() {
				n.ir.Fn = r.fnRef(f, "emit", ref)
				return emit.Params().At(0).Type()
			}
		}
		if ok && ps.Len() == 1 && rs.Len() == 1 {
			if sl, ok := rs.At(0).Type().(*types.Slice); ok {
				n.ir.Fn = r.fnRef(f, "slice", ref)
				return sl.Elem()
			}
		}
		r.recordSignatureError(ns.Fn, "flatmap", f, in, fmt.Sprintf("func(%s, func(Out))", inS), fmt.Sprintf("func(%s) []Out", inS))
	case "reduce":
		f := r.u.lookupFunc(ns.Fn, &r.reporter)
		if f == nil {
			return nil
		}
		ps, rs := params(f)
		if ps != nil && ps.Len() == 2 && rs.Len() == 1 && types.Identical(ps.At(0).Type(), in) && types.Identical(ps.At(1).Type(), in) && types.Identical(rs.At(0).Type(), in) {
			n.ir.Fn = r.fn(f, "")
			r.checkState(n, ns.Fn, in)
			return in
		}
		r.signatureError(ns.Fn, "reduce", f, fmt.Sprintf("func(acc, in %s) %s (by value: the result becomes the key's state)", inS, inS))
	case "aggregate":
		return r.checkAggregate(n, in, key)
	case "union":
		return in
	}
	n.ok = false
	return nil
}

func (r *resolver) checkKey(n *rnode, name Str, in types.Type) types.Type {
	f := r.u.lookupFunc(name, &r.reporter)
	if f == nil {
		n.ok = false
		return nil
	}
	ps, rs := params(f)
	var ok, ref bool
	if ps != nil && ps.Len() == 1 && rs.Len() == 1 {
		ok, ref = recordParam(ps.At(0).Type(), in)
	}
	if !ok {
		r.recordSignatureError(name, "key", f, in, fmt.Sprintf("func(%s) K", r.u.typeString(in)))
		n.ok = false
		return nil
	}
	k := rs.At(0).Type()
	if p := keyProblem(k, r.u); p != "" {
		r.report(name.Pos, diag.Type, "key %s returns %s, which cannot be a key: %s", name.V, r.u.typeString(k), p)
		n.ok = false
		return nil
	}
	n.ir.Key = r.fnRef(f, "", ref)
	n.ir.KeyType = r.conv.convert(k)
	return k
}

func (r *resolver) checkAggregate(n *rnode, in, key types.Type) types.Type {
	ns := n.spec
	if !ns.Add.Set {
		return nil // reported by the front end
	}
	add := r.u.lookupFunc(ns.Add, &r.reporter)
	if add == nil {
		n.ok = false
		return nil
	}
	inS := r.u.typeString(in)
	ps, rs := params(add)
	var acc types.Type
	var ref bool
	if ps != nil && ps.Len() == 2 && rs.Len() == 0 {
		ok, isRef := recordParam(ps.At(1).Type(), in)
		if ptr, isPtr := ps.At(0).Type().(*types.Pointer); ok && isPtr {
			acc, ref = ptr.Elem(), isRef
		}
	}
	if acc == nil {
		r.recordSignatureError(ns.Add, "aggregate add", add, in, fmt.Sprintf("func(acc *A, in %s)", inS))
		n.ok = false
		return nil
	}
	n.ir.Add = r.fnRef(add, "", ref)
	n.ir.Acc = r.conv.convert(acc)
	r.checkState(n, ns.Add, acc)
	r.checkMerge(n, acc)
	if !ns.Result.Set {
		// Without a result function the accumulator itself is emitted.
		return acc
	}
	res := r.u.lookupFunc(ns.Result, &r.reporter)
	if res == nil || key == nil {
		n.ok = false
		return nil
	}
	accPtr := types.NewPointer(acc)
	ps, rs = params(res)
	if ps != nil && ps.Len() == 2 && rs.Len() == 1 && types.Identical(ps.At(0).Type(), key) && types.Identical(ps.At(1).Type(), accPtr) {
		n.ir.Result = r.fn(res, "")
		return rs.At(0).Type()
	}
	if ps != nil && ps.Len() == 3 && rs.Len() == 1 && types.Identical(ps.At(0).Type(), key) && isWindowType(ps.At(1).Type()) && types.Identical(ps.At(2).Type(), accPtr) {
		if ns.Window == nil {
			r.report(ns.Result.Pos, diag.Function, "result %s takes a window, but %q has no window: drop the window parameter", ns.Result.V, ns.Name.V)
			n.ok = false
			return nil
		}
		n.ir.Result = r.fn(res, "window")
		return rs.At(0).Type()
	}
	want := []string{fmt.Sprintf("func(key %s, acc %s) Out", r.u.typeString(key), r.u.typeString(accPtr))}
	if ns.Window != nil {
		want = append(want, fmt.Sprintf("func(key %s, w pipegen.Window, acc %s) Out", r.u.typeString(key), r.u.typeString(accPtr)))
	}
	r.signatureError(ns.Result, "aggregate result", res, want...)
	n.ok = false
	return nil
}

// checkMerge checks an aggregate's merge function, which session windows
// need to join two sessions' accumulators.
func (r *resolver) checkMerge(n *rnode, acc types.Type) {
	ns := n.spec
	session := n.ir.Window != nil && n.ir.Window.Kind == "session"
	if !ns.Merge.Set {
		if session {
			r.report(ns.Kind.Pos, diag.Missing, "an aggregate on session windows needs %v (func(dst, src *%s)): sessions that grow together merge their accumulators", exIn("aggregate.merge", "MergeFunc"), r.u.typeString(acc))
			n.ok = false
		}
		return
	}
	// On event-time tumbling windows merge is optional: with it, the
	// senders of a hash edge into the aggregate at parallelism > 1 send
	// partial accumulators instead of records (codegen's combined edges).
	// On event-time sliding windows it lets the windows be kept in
	// slices of the slide (runtime.NewSlicedWindows).
	w := n.ir.Window
	optional := w != nil && (w.Kind == "tumbling" || w.Kind == "sliding") && !w.Processing
	if !session && !optional {
		r.report(ns.Merge.Pos, diag.Misplaced, "%v is for aggregates on session windows and event-time tumbling and sliding windows", keyRef("aggregate.merge"))
		n.ok = false
		return
	}
	f := r.u.lookupFunc(ns.Merge, &r.reporter)
	if f == nil {
		n.ok = false
		return
	}
	ptr := types.NewPointer(acc)
	ps, rs := params(f)
	if ps == nil || ps.Len() != 2 || rs.Len() != 0 || !types.Identical(ps.At(0).Type(), ptr) || !types.Identical(ps.At(1).Type(), ptr) {
		r.signatureError(ns.Merge, "aggregate merge", f, fmt.Sprintf("func(dst, src %s)", r.u.typeString(ptr)))
		n.ok = false
		return
	}
	n.ir.Merge = r.fn(f, "")
}

func isWindowType(t types.Type) bool {
	named, ok := t.(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == pipegenPath && named.Obj().Name() == "Window"
}

// checkState makes sure a state type can be checkpointed.
func (r *resolver) checkState(n *rnode, at Str, t types.Type) {
	if p := stateProblem(t, r.u, map[types.Type]bool{}); p != "" {
		r.report(at.Pos, diag.Type, "state of %q has type %s, which cannot be checkpointed: %s", n.spec.Name.V, r.u.typeString(t), p)
		n.ok = false
	}
}

// checkProcessState is checkState of a process's state struct, whose
// fields of type pipegen.MapState[K, V] keep a map per key: K must be a
// string or integer type (its entries are kept in its order), V a type
// state can hold. MapState anywhere else is refused (stateProblem).
func (r *resolver) checkProcessState(n *rnode, at Str, t types.Type) {
	seen := map[types.Type]bool{}
	if st, ok := t.Underlying().(*types.Struct); ok {
		for i := range st.NumFields() {
			f := st.Field(i)
			named, ok := types.Unalias(f.Type()).(*types.Named)
			if !ok || !isPipegenType(named, "MapState") {
				continue
			}
			seen[f.Type()] = true
			k, v := named.TypeArgs().At(0), named.TypeArgs().At(1)
			p := ""
			// An unexported one is reported by stateProblem.
			if b, ok := k.Underlying().(*types.Basic); !ok || b.Info()&(types.IsString|types.IsInteger) == 0 || b.Kind() == types.Uintptr {
				p = fmt.Sprintf("the key of a pipegen.MapState must be a string or integer type, which has an order that its entries are kept in; got %s", r.u.typeString(k))
			} else {
				p = stateProblem(v, r.u, map[types.Type]bool{})
			}
			if p != "" {
				r.report(at.Pos, diag.Type, "state of %q has type %s, whose field %s (%s) cannot be map state: %s", n.spec.Name.V, r.u.typeString(t), f.Name(), r.u.position(f.Pos()), p)
				n.ok = false
			}
		}
	}
	if p := stateProblem(t, r.u, seen); p != "" {
		r.report(at.Pos, diag.Type, "state of %q has type %s, which cannot be checkpointed: %s", n.spec.Name.V, r.u.typeString(t), p)
		n.ok = false
	}
}

// stateProblem explains why t cannot be stored in state, or returns "":
// the supported types are those the generated serializers handle.
func stateProblem(t types.Type, u *userPackage, seen map[types.Type]bool) string {
	if seen[t] {
		return ""
	}
	seen[t] = true
	if named, ok := types.Unalias(t).(*types.Named); ok && isTimeType(named) {
		return ""
	}
	if isPipegenType(t, "MapState") {
		return "pipegen.MapState is for the fields of a process's state struct only"
	}
	switch tt := t.Underlying().(type) {
	case *types.Basic:
		if tt.Info()&(types.IsBoolean|types.IsInteger|types.IsFloat|types.IsString) != 0 && tt.Kind() != types.Uintptr {
			return ""
		}
		return fmt.Sprintf("%s is not supported in state", u.typeString(t))
	case *types.Pointer:
		return stateProblem(tt.Elem(), u, seen)
	case *types.Slice:
		return stateProblem(tt.Elem(), u, seen)
	case *types.Array:
		return stateProblem(tt.Elem(), u, seen)
	case *types.Map:
		if p := stateProblem(tt.Key(), u, seen); p != "" {
			return p
		}
		return stateProblem(tt.Elem(), u, seen)
	case *types.Struct:
		if ts := u.timeStruct(); ts != nil && types.Identical(tt, ts) {
			return fmt.Sprintf("%s is defined on time.Time, whose fields are hidden: use time.Time itself", u.typeString(t))
		}
		for i := range tt.NumFields() {
			f := tt.Field(i)
			if f.Name() == "_" {
				continue
			}
			if !f.Exported() {
				return fmt.Sprintf("field %s (%s) is unexported, so the generated serializer cannot reach it: export it", f.Name(), u.position(f.Pos()))
			}
			if p := stateProblem(f.Type(), u, seen); p != "" {
				return fmt.Sprintf("field %s (%s): %s", f.Name(), u.position(f.Pos()), p)
			}
		}
		return ""
	}
	return fmt.Sprintf("%s (a func, chan or interface) cannot be serialized", u.typeString(t))
}

// timeStruct is time.Time's underlying struct, when the user's package
// imports time.
func (u *userPackage) timeStruct() types.Type {
	for _, imp := range u.pkg.Types.Imports() {
		if imp.Path() == "time" {
			if obj := imp.Scope().Lookup("Time"); obj != nil {
				return obj.Type().Underlying()
			}
		}
	}
	return nil
}

// csvProblem explains why t cannot be decoded from csv, or returns "".
func csvProblem(t types.Type, u *userPackage) string {
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return "csv records decode into a struct"
	}
	for i := range st.NumFields() {
		f := st.Field(i)
		if !f.Exported() || reflect.StructTag(st.Tag(i)).Get("csv") == "-" {
			continue
		}
		ft := f.Type()
		if named, ok := types.Unalias(ft).(*types.Named); ok && isTimeType(named) {
			continue
		}
		b, ok := ft.Underlying().(*types.Basic)
		if !ok || b.Info()&(types.IsBoolean|types.IsInteger|types.IsFloat|types.IsString) == 0 {
			return fmt.Sprintf("field %s has type %s; csv fields are strings, numbers, bools, time.Time and time.Duration", f.Name(), u.typeString(ft))
		}
	}
	return ""
}

// csvWriteProblem explains why a csv sink cannot write records of type
// t, or returns "": what the runtime's encoder would refuse when the job
// starts (runtime/internal/connector/format csvColumns), and two columns
// of one name, which a csv source could not tell apart.
func csvWriteProblem(t types.Type, u *userPackage) string {
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return "csv records are structs whose fields are the columns; use format jsonl, or a struct"
	}
	seen := map[string]string{}
	for i := range st.NumFields() {
		f := st.Field(i)
		tag := reflect.StructTag(st.Tag(i)).Get("csv")
		if !f.Exported() || tag == "-" {
			continue
		}
		ft := f.Type()
		named, isNamed := types.Unalias(ft).(*types.Named)
		if !isNamed || !isTimeType(named) {
			b, ok := ft.Underlying().(*types.Basic)
			if !ok || b.Info()&(types.IsBoolean|types.IsInteger|types.IsFloat|types.IsString) == 0 {
				return fmt.Sprintf("field %s has type %s; csv fields are strings, numbers, bools, time.Time and time.Duration (tag it `csv:\"-\"` to leave it out)", f.Name(), u.typeString(ft))
			}
		}
		name, _, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name()
		}
		key := strings.ToLower(name)
		if other, dup := seen[key]; dup {
			return fmt.Sprintf("fields %s and %s both have the column name %q (a csv header matches names case-insensitively); rename one with a `csv:\"name\"` tag", other, f.Name(), name)
		}
		seen[key] = f.Name()
	}
	if len(seen) == 0 {
		return "it has no exported field to write as a column"
	}
	return ""
}

// checkStateTTL reads state-ttl: for the state of a reduce, aggregate or
// process without a window (a window's state ends with the window).
func (r *resolver) checkStateTTL(n *rnode) {
	ns := n.spec
	if !ns.StateTTL.Set {
		return
	}
	kind := ns.Kind.V
	switch {
	case !slices.Contains(settings.KindsOf("state-ttl"), kind):
		r.notFor(n, ns.StateTTL.Pos, "state-ttl", "keeps no state per key")
	case ns.Window != nil:
		r.report(ns.StateTTL.Pos, diag.Misplaced, "%v is for state without a window: a window's state goes when the window fires (and its allowed lateness is over)", keyRef("state-ttl"))
		n.ok = false
	default:
		if d, ok := r.duration("state-ttl", ns.StateTTL); ok {
			n.ir.StateTTL = d
		} else {
			n.ok = false
		}
	}
}
