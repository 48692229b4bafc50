package dsl

import (
	"fmt"
	"go/types"
	"slices"
	"time"

	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/ir"
	"github.com/pipegen/pipegen/runtime/settings"
)

// Type checking of event time: a source's timestamps, windows, allowed
// lateness, process operators with timers, and joins.

var timeTime types.Type // time.Time, once a package that imports time is loaded

// isTime reports whether t is time.Time.
func isTime(t types.Type) bool {
	named, ok := types.Unalias(t).(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == "time" && named.Obj().Name() == "Time"
}

// isPipegenType reports whether t is the named type of package pipegen.
func isPipegenType(t types.Type, name string) bool {
	named, ok := types.Unalias(t).(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == pipegenPath && named.Obj().Name() == name
}

// duration reads the duration of the node key at path, reporting a value
// the key does not take.
func (r *resolver) duration(path string, s Str) (time.Duration, bool) {
	v, ok := r.parse(settings.Node(settings.AnyNode, "", path), s)
	if !ok {
		return 0, false
	}
	return v.(time.Duration), true
}

// checkTimestamps checks a source's `timestamps:` section for records of
// type out.
func (r *resolver) checkTimestamps(n *rnode, out types.Type) {
	ts := n.spec.Timestamps
	if ts == nil || out == nil {
		return
	}
	t := &ir.Timestamps{}
	switch {
	case ts.Extract.Set:
		f := r.u.lookupFunc(ts.Extract, &r.reporter)
		if f == nil {
			n.ok = false
			return
		}
		ps, rs := params(f)
		var ok, ref bool
		if ps != nil && ps.Len() == 1 && rs.Len() == 1 {
			ok, ref = recordParam(ps.At(0).Type(), out)
		}
		switch {
		case ok && isTime(rs.At(0).Type()):
			t.Extract = r.fnRef(f, "time", ref)
		case ok && types.Identical(rs.At(0).Type(), types.Typ[types.Int64]):
			t.Extract = r.fnRef(f, "millis", ref)
		default:
			r.recordSignatureError(ts.Extract, "timestamps extract", f, out, fmt.Sprintf("func(%s) time.Time", r.u.typeString(out)), fmt.Sprintf("func(%s) int64", r.u.typeString(out)))
			n.ok = false
			return
		}
	case n.spec.Connector.V != "kafka":
		r.report(ts.Pos, diag.Missing, "timestamps needs %v (func(%s) time.Time, or func(%s) int64 in Unix milliseconds)", exIn("timestamps.extract", "Func"), r.u.typeString(out), r.u.typeString(out))
		n.ok = false
		return
	}
	// Without extract, a Kafka source's records have their Kafka
	// timestamps as event time (Extract stays nil).
	if d, ok := r.duration("timestamps.max-out-of-orderness", ts.MaxOutOfOrderness); ok {
		t.MaxOutOfOrderness = d
	}
	if d, ok := r.duration("timestamps.idle-timeout", ts.IdleTimeout); ok {
		t.IdleTimeout = d
	}
	d, driftOK := r.duration("timestamps.max-drift", ts.MaxDrift)
	if driftOK && d > 0 {
		if n.spec.Connector.V == "generator" {
			r.report(ts.MaxDrift.Pos, diag.Misplaced, "%v is for file and Kafka sources: a generator's subtasks keep pace by themselves (docs/runtime.md, Generator source); drop it", keyRef("timestamps.max-drift"))
			n.ok = false
		} else {
			t.MaxDrift = d
		}
	}
	if g := ts.AlignGroup; g.Set && g.V != "" {
		switch {
		case n.spec.Connector.V == "generator":
			r.report(g.Pos, diag.Misplaced, "%v is for file and Kafka sources: a generator's subtasks keep pace by themselves (docs/runtime.md, Generator source); drop it", keyRef("timestamps.align-group"))
			n.ok = false
		case t.MaxDrift > 0:
			t.AlignGroup = g.V
		case driftOK || !ts.MaxDrift.Set:
			// (A max-drift that is wrong has its own error.)
			r.report(g.Pos, diag.Missing, "%v needs %v greater than 0: how far this source's watermark may run ahead of the slowest subtask of its group's sources", keyRef("timestamps.align-group"), keyRef("timestamps.max-drift"))
			n.ok = false
		}
	}
	n.ir.Timestamps = t
}

// checkWindow checks the window of a reduce, aggregate or join, and its
// allowed lateness.
func (r *resolver) checkWindow(n *rnode) {
	ns := n.spec
	w := ns.Window
	kind := ns.Kind.V
	if w == nil {
		if ns.AllowedLateness.Set {
			r.report(ns.AllowedLateness.Pos, diag.Misplaced, "%v is for windows: add a window, or drop it", keyRef("allowed-lateness"))
			n.ok = false
		}
		return
	}
	if !slices.Contains(settings.KindsOf("window"), kind) {
		r.notFor(n, w.Pos, "window", "has no window")
		return
	}
	out := &ir.Window{}
	set := 0
	for _, k := range []struct {
		name string
		s    Str
	}{{"tumbling", w.Tumbling}, {"sliding", w.Sliding}, {"session", w.Session}} {
		if !k.s.Set {
			continue
		}
		set++
		d, ok := r.duration("window."+k.name, k.s)
		if !ok {
			n.ok = false
			continue
		}
		out.Kind = k.name
		if k.name == "session" {
			out.Gap = d
		} else {
			out.Size = d
		}
	}
	if w.Count.Set {
		set++
		out.Kind = "count"
		r.checkCountWindow(n, out)
	} else if w.CountEvery.Set {
		r.report(w.CountEvery.Pos, diag.Misplaced, "%v is for count windows: add %v", keyRef("window.count-every"), exIn("window.count", "N"))
		n.ok = false
	}
	if w.SessionGap.Set {
		set++
		out.Kind = "session"
		if !slices.Contains(settings.KindsOf("window.session-gap"), kind) {
			r.notFor(n, w.SessionGap.Pos, "window.session-gap", "")
		} else if f := r.checkSessionGap(n, w.SessionGap); f != nil {
			out.GapFn = f
		} else {
			n.ok = false
		}
	}
	switch {
	case set == 0:
		r.report(w.Pos, diag.Missing, "window needs one of %v, %v with %v, %v, %v, or %v", exIn("window.tumbling", "SIZE"), exIn("window.sliding", "SIZE"), exIn("window.every", "SLIDE"), exIn("window.session", "GAP"), exIn("window.session-gap", "GapFunc"), exIn("window.count", "N"))
		n.ok = false
		return
	case set > 1:
		r.report(w.Pos, diag.Conflict, "window has more than one of %v, %v, %v, %v and %v: choose one", keyRef("window.tumbling"), keyRef("window.sliding"), keyRef("window.session"), keyRef("window.session-gap"), keyRef("window.count"))
		n.ok = false
		return
	}
	if w.Every.Set {
		if out.Kind != "sliding" {
			r.report(w.Every.Pos, diag.Misplaced, "%v is for sliding windows", keyRef("window.every"))
			n.ok = false
		} else if d, ok := r.duration("window.every", w.Every); !ok {
			n.ok = false
		} else if d > out.Size && out.Size > 0 {
			r.report(w.Every.Pos, diag.BadValue, "%v (the slide) must be at most the window's size %s, got %q", keyRef("window.every"), out.Size, w.Every.V)
			n.ok = false
		} else {
			out.Every = d
		}
	} else if out.Kind == "sliding" {
		r.report(w.Sliding.Pos, diag.Missing, "a sliding window needs %v (how often a window starts)", exIn("window.every", "SLIDE"))
		n.ok = false
	}
	if out.Kind == "count" {
		// Count windows have no time: no lateness, nothing is late.
		if ns.AllowedLateness.Set {
			r.report(ns.AllowedLateness.Pos, diag.Misplaced, "%v is for windows of time: a count window takes every record", keyRef("allowed-lateness"))
			n.ok = false
		}
		if w.Time.Set {
			r.report(w.Time.Pos, diag.Misplaced, "%v is for windows of time: a count window counts records", keyRef("window.time"))
			n.ok = false
		}
		if ns.Emit.Set {
			r.report(ns.Emit.Pos, diag.Conflict, "%v is for reduce and aggregate without a window: a window emits once per key and window", keyRef("emit"))
			n.ok = false
		}
		n.ir.Window = out
		return
	}
	timeKind, timeOK := r.parse(settings.Node(settings.Operator, kind, "window.time"), w.Time)
	switch {
	case timeOK && timeKind == "processing":
		out.Processing = true
	case timeOK && timeKind == "event":
		if !n.ir.Timed {
			r.report(w.Time.Pos, diag.Conflict, "an event-time window needs records with event time: add %v to the source, or use %v", ex("timestamps.extract", "Func"), exIn("window.time", "processing"))
			n.ok = false
		}
	case w.Time.Set:
		n.ok = false // reported by parse
	default:
		// Event time where the records have it, processing time otherwise.
		out.Processing = !n.ir.Timed
	}
	if ns.AllowedLateness.Set {
		if out.Processing {
			r.report(ns.AllowedLateness.Pos, diag.Misplaced, "%v is for event-time windows: in processing time no record is late", keyRef("allowed-lateness"))
			n.ok = false
		} else if d, ok := r.duration("allowed-lateness", ns.AllowedLateness); ok {
			n.ir.Lateness = d
		} else {
			n.ok = false
		}
	}
	if ns.Emit.Set && kind != "join" {
		r.report(ns.Emit.Pos, diag.Conflict, "%v is for reduce and aggregate without a window: a window emits once per key and window", keyRef("emit"))
		n.ok = false
	}
	if kind == "join" && ns.Between != nil {
		r.report(w.Pos, diag.Conflict, "a join has a window or an interval (%v), not both", keyRef("join.between"))
		n.ok = false
	}
	n.ir.Window = out
}

// checkProcess checks a process operator with one input: the function,
// its per-key state and its timer callback.
func (r *resolver) checkProcess(n *rnode, in, key types.Type) types.Type {
	ns := n.spec
	if ns.Broadcast.Set {
		r.report(ns.Broadcast.Pos, diag.Misplaced, "%v is for a process with two inputs: it names the one every subtask receives", keyRef("broadcast"))
		n.ok = false
		return nil
	}
	if len(ns.Fns) > 1 {
		r.report(ns.Fns[1].Pos, diag.BadValue, "process %q has one input but %d functions: a list of functions is for a process with two inputs, one per input", ns.Name.V, len(ns.Fns))
		n.ok = false
		return nil
	}
	return r.checkProcessFns(n, []types.Type{in}, key, []Str{ns.Fn})
}

// checkProcessPair checks a process operator with two inputs: a key
// function and a process function per input, with the same key, state and
// emit types.
func (r *resolver) checkProcessPair(n *rnode) types.Type {
	ns := n.spec
	a, b := n.joinIn[0], n.joinIn[1]
	aS, bS := r.u.typeString(a), r.u.typeString(b)
	if len(ns.Keys) != 2 {
		at := ns.Kind.Pos
		if len(ns.Keys) > 0 {
			at = ns.Keys[0].Pos
		}
		r.report(at, diag.Missing, "a process with two inputs needs a key function per input: %v (func(%s) K and func(%s) K)", ex("key", "KeyA", "KeyB"), aS, bS)
		n.ok = false
		return nil
	}
	if len(ns.Fns) != 2 {
		r.report(ns.Kind.Pos, diag.Missing, "a process with two inputs needs a function per input: %v (func(key K, state *S, in %s, ctx pipegen.Context, emit func(Out)) and the same with in %s)", ex("process", "OnA", "OnB"), aS, bS)
		n.ok = false
		return nil
	}
	ka := r.checkKey(n, ns.Keys[0], a)
	keys := []*ir.Func{n.ir.Key}
	kb := r.checkKey(n, ns.Keys[1], b)
	keys = append(keys, n.ir.Key)
	if ka == nil || kb == nil {
		n.ok = false
		return nil
	}
	if !types.Identical(ka, kb) {
		r.report(ns.Keys[1].Pos, diag.Type, "the process's keys differ: %s returns %s and %s returns %s; both must return the same type, which the inputs share state and timers by", ns.Keys[0].V, r.u.typeString(ka), ns.Keys[1].V, r.u.typeString(kb))
		n.ok = false
		return nil
	}
	n.ir.Key, n.ir.Keys = keys[0], keys
	return r.checkProcessFns(n, n.joinIn, ka, ns.Fns)
}

// checkProcessFns checks the process functions names, one per input of
// type ins[i], all keyed by key with the same state and emit types, and
// the timer callback.
func (r *resolver) checkProcessFns(n *rnode, ins []types.Type, key types.Type, names []Str) types.Type {
	ns := n.spec
	if key == nil {
		n.ok = false
		return nil
	}
	keyS := r.u.typeString(key)
	var fns []*types.Func
	var refs []bool
	var st *types.Pointer
	var emit *types.Signature
	for i, name := range names {
		f := r.u.lookupFunc(name, &r.reporter)
		if f == nil {
			n.ok = false
			return nil
		}
		expected := fmt.Sprintf("func(key %s, state *S, in %s, ctx pipegen.Context, emit func(Out))", keyS, r.u.typeString(ins[i]))
		if st != nil {
			expected = fmt.Sprintf("func(key %s, state %s, in %s, ctx pipegen.Context, emit %s) (the state and emit types of %s)", keyS, r.u.typeString(st), r.u.typeString(ins[i]), r.u.typeString(fns[0].Type().(*types.Signature).Params().At(4).Type()), names[0].V)
		}
		ps, rs := params(f)
		var inOK, ref bool
		if ps != nil && ps.Len() == 5 {
			inOK, ref = recordParam(ps.At(2).Type(), ins[i])
		}
		if !inOK || rs.Len() != 0 || !types.Identical(ps.At(0).Type(), key) || !isPipegenType(ps.At(3).Type(), "Context") {
			r.recordSignatureError(name, "process", f, ins[i], expected)
			n.ok = false
			return nil
		}
		fst, ok := ps.At(1).Type().(*types.Pointer)
		femit, ok2 := ps.At(4).Type().Underlying().(*types.Signature)
		if !ok || !ok2 || femit.Params().Len() != 1 || femit.Results().Len() != 0 ||
			st != nil && (!types.Identical(fst, st) || !types.Identical(femit, emit)) {
			r.recordSignatureError(name, "process", f, ins[i], expected)
			n.ok = false
			return nil
		}
		if st == nil {
			st, emit = fst, femit
		}
		fns = append(fns, f)
		refs = append(refs, ref)
	}
	out := emit.Params().At(0).Type()
	n.ir.Fn = r.fnRef(fns[0], "", refs[0])
	if len(fns) > 1 {
		for i, f := range fns {
			n.ir.Fns = append(n.ir.Fns, r.fnRef(f, "", refs[i]))
		}
	}
	n.ir.State = r.conv.convert(st.Elem())
	r.checkProcessState(n, names[0], st.Elem())
	if ns.OnTimer.Set {
		t := r.u.lookupFunc(ns.OnTimer, &r.reporter)
		if t == nil {
			n.ok = false
			return nil
		}
		tp, tr := params(t)
		if tp == nil || tp.Len() != 5 || tr.Len() != 0 || !types.Identical(tp.At(0).Type(), key) || !types.Identical(tp.At(1).Type(), st) ||
			!isTime(tp.At(2).Type()) || !isPipegenType(tp.At(3).Type(), "Context") || !types.Identical(tp.At(4).Type().Underlying(), emit) {
			r.signatureError(ns.OnTimer, "on-timer", t, fmt.Sprintf("func(key %s, state %s, at time.Time, ctx pipegen.Context, emit func(%s))", keyS, r.u.typeString(st), r.u.typeString(out)))
			n.ok = false
			return nil
		}
		n.ir.OnTimer = r.fn(t, "")
		fns = append(fns, t)
	}
	r.findSideOutputs(n, fns...)
	return out
}

// checkJoin checks a join of two keyed inputs: a key function each with
// the same key type, the apply function, and a window or an interval.
func (r *resolver) checkJoin(n *rnode) types.Type {
	ns := n.spec
	if len(n.joinIn) != 2 {
		return nil
	}
	left, right := n.joinIn[0], n.joinIn[1]
	if len(ns.Keys) != 2 {
		at := ns.Kind.Pos
		if len(ns.Keys) > 0 {
			at = ns.Keys[0].Pos
		}
		r.report(at, diag.Missing, "join needs a key function per input: %v (func(%s) K and func(%s) K)", ex("key", "LeftKey", "RightKey"), r.u.typeString(left), r.u.typeString(right))
		n.ok = false
		return nil
	}
	kl := r.checkKey(n, ns.Keys[0], left)
	n.ir.Keys = []*ir.Func{n.ir.Key}
	kr := r.checkKey(n, ns.Keys[1], right)
	n.ir.Keys = append(n.ir.Keys, n.ir.Key)
	if kl == nil || kr == nil {
		n.ok = false
		return nil
	}
	if !types.Identical(kl, kr) {
		r.report(ns.Keys[1].Pos, diag.Type, "the join's keys differ: %s returns %s and %s returns %s; both must return the same type", ns.Keys[0].V, r.u.typeString(kl), ns.Keys[1].V, r.u.typeString(kr))
		n.ok = false
		return nil
	}
	n.ir.Key = n.ir.Keys[0]
	if !ns.Apply.Set {
		return nil // reported by the front end
	}
	f := r.u.lookupFunc(ns.Apply, &r.reporter)
	if f == nil {
		n.ok = false
		return nil
	}
	ps, rs := params(f)
	var okL, refL, okR, refR bool
	if ps != nil && ps.Len() == 2 && rs.Len() == 1 {
		okL, refL = recordParam(ps.At(0).Type(), left)
		okR, refR = recordParam(ps.At(1).Type(), right)
	}
	if !okL || !okR || refL != refR {
		lS, rS := r.u.typeString(left), r.u.typeString(right)
		r.signatureError(ns.Apply, "join apply", f, fmt.Sprintf("func(%s, %s) Out or func(*%s, *%s) Out", lS, rS, lS, rS))
		n.ok = false
		return nil
	}
	n.ir.Apply = r.fnRef(f, "", refL)
	r.checkState(n, ns.Apply, left)
	r.checkState(n, ns.Apply, right)
	if ns.Exclusive.Set && ns.Between == nil {
		r.report(ns.Exclusive.Pos, diag.Misplaced, "%v is for interval joins (%v): a window join pairs the records of a window", keyRef("join.exclusive"), exIn("join.between", "-5s", "5s"))
		n.ok = false
	}
	switch {
	case ns.Between != nil:
		if len(ns.Between) != 2 {
			r.report(ns.Kind.Pos, diag.BadValue, "%v wants two bounds, LOWER and UPPER, such as %v", keyRef("join.between"), exIn("join.between", "-5s", "5s"))
			n.ok = false
			return nil
		}
		lo, ok1 := r.duration("join.between", ns.Between[0])
		hi, ok2 := r.duration("join.between", ns.Between[1])
		if !ok1 || !ok2 {
			n.ok = false
			return nil
		}
		if lo > hi {
			r.report(ns.Between[0].Pos, diag.BadValue, "%v has its lower bound %s above its upper bound %s", keyRef("join.between"), lo, hi)
			n.ok = false
			return nil
		}
		if !n.ir.Timed {
			r.report(ns.Kind.Pos, diag.Conflict, "an interval join pairs records by event time: its inputs need timestamps (add %v to their sources)", ex("timestamps.extract", "Func"))
			n.ok = false
			return nil
		}
		n.ir.Between = []time.Duration{lo, hi}
		if !r.checkExclusive(n, lo, hi) {
			return nil
		}
	case ns.Window == nil:
		r.report(ns.Kind.Pos, diag.Missing, "join needs a window (%v) or an interval (%v)", ex("window.tumbling", "10s"), exIn("join.between", "-5s", "5s"))
		n.ok = false
		return nil
	}
	return rs.At(0).Type()
}

// checkExclusive checks join.exclusive against the bounds lo and hi: event
// time is in whole milliseconds, so an excluded bound is the included one
// a millisecond inside, and the bounds must keep at least one.
func (r *resolver) checkExclusive(n *rnode, lo, hi time.Duration) bool {
	ns := n.spec
	if !ns.Exclusive.Set {
		return true
	}
	v, ok := r.parse(settings.Node(settings.AnyNode, "join", "join.exclusive"), ns.Exclusive)
	if !ok {
		n.ok = false
		return false
	}
	ex := v.(string)
	if ex == "none" {
		return true
	}
	n.ir.Exclusive = ex
	lo, hi = lo.Truncate(time.Millisecond), hi.Truncate(time.Millisecond)
	if ex == "lower" || ex == "both" {
		lo += time.Millisecond
	}
	if ex == "upper" || ex == "both" {
		hi -= time.Millisecond
	}
	if lo > hi {
		r.report(ns.Exclusive.Pos, diag.BadValue, "%v leaves no time between the bounds %s and %s: event time is in whole milliseconds", exIn("join.exclusive", ex), n.ir.Between[0], n.ir.Between[1])
		n.ok = false
		return false
	}
	return true
}
