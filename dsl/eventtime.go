package dsl

import (
	"fmt"
	"go/types"
	"time"

	"github.com/pipegen/pipegen/ir"
	"github.com/pipegen/pipegen/runtime/catalog"
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

// duration reads a duration option; negative values are allowed only
// where noted.
func (r *resolver) duration(s Str, negative bool) (time.Duration, bool) {
	if !s.Set {
		return 0, false
	}
	if negative {
		d, err := time.ParseDuration(s.V)
		if s.V == "0" {
			d, err = 0, nil
		}
		if err != nil {
			r.errorf(s.Pos, "%q is not a duration: write it as -5s, 500ms, 10s or 1m", s.V)
			return 0, false
		}
		return d, true
	}
	d, err := catalog.ParseDuration(s.V)
	if err != nil {
		r.errorf(s.Pos, "%v", err)
		return 0, false
	}
	return d, true
}

// checkTimestamps checks a source's `timestamps:` section for records of
// type out.
func (r *resolver) checkTimestamps(n *rnode, out types.Type) {
	ts := n.spec.Timestamps
	if ts == nil || out == nil {
		return
	}
	t := &ir.Timestamps{}
	if !ts.Extract.Set {
		r.errorf(ts.Pos, "timestamps needs `extract: Func` (func(%s) time.Time, or func(%s) int64 in Unix milliseconds)", r.u.typeString(out), r.u.typeString(out))
		n.ok = false
		return
	}
	if f := r.u.lookupFunc(ts.Extract, r.diags); f != nil {
		ps, rs := params(f)
		switch {
		case ps != nil && ps.Len() == 1 && rs.Len() == 1 && types.Identical(ps.At(0).Type(), out) && isTime(rs.At(0).Type()):
			t.Extract = r.fn(f, "time")
		case ps != nil && ps.Len() == 1 && rs.Len() == 1 && types.Identical(ps.At(0).Type(), out) && types.Identical(rs.At(0).Type(), types.Typ[types.Int64]):
			t.Extract = r.fn(f, "millis")
		default:
			r.signatureError(ts.Extract, "timestamps extract", f, fmt.Sprintf("func(%s) time.Time", r.u.typeString(out)), fmt.Sprintf("func(%s) int64", r.u.typeString(out)))
			n.ok = false
			return
		}
	} else {
		n.ok = false
		return
	}
	if d, ok := r.duration(ts.MaxOutOfOrderness, false); ok {
		t.MaxOutOfOrderness = d
	}
	if d, ok := r.duration(ts.IdleTimeout, false); ok {
		t.IdleTimeout = d
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
			r.errorf(ns.AllowedLateness.Pos, "allowed-lateness is for windows: add a window, or drop it")
			n.ok = false
		}
		return
	}
	if kind != "reduce" && kind != "aggregate" && kind != "join" {
		r.errorf(w.Pos, "window is for reduce, aggregate and join; a %s has no window", kind)
		n.ok = false
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
		d, ok := r.duration(k.s, false)
		if !ok {
			n.ok = false
			continue
		}
		if d < time.Millisecond {
			r.errorf(k.s.Pos, "a %s window needs a size of at least 1ms (event time counts milliseconds)", k.name)
			n.ok = false
		}
		out.Kind = k.name
		if k.name == "session" {
			out.Gap = d
		} else {
			out.Size = d
		}
	}
	switch {
	case set == 0:
		r.errorf(w.Pos, "window needs one of tumbling: SIZE, sliding: SIZE with every: SLIDE, or session: GAP")
		n.ok = false
		return
	case set > 1:
		r.errorf(w.Pos, "window has more than one of tumbling, sliding and session: choose one")
		n.ok = false
		return
	}
	if w.Every.Set {
		if out.Kind != "sliding" {
			r.errorf(w.Every.Pos, "every is for sliding windows")
			n.ok = false
		} else if d, ok := r.duration(w.Every, false); ok {
			if d < time.Millisecond || d > out.Size {
				r.errorf(w.Every.Pos, "every (the slide) must be at least 1ms and at most the window size %s", out.Size)
				n.ok = false
			}
			out.Every = d
		}
	} else if out.Kind == "sliding" {
		r.errorf(w.Sliding.Pos, "a sliding window needs `every: SLIDE` (how often a window starts)")
		n.ok = false
	}
	switch {
	case w.Time.Set && w.Time.V == "processing":
		out.Processing = true
	case w.Time.Set && w.Time.V == "event":
		if !n.ir.Timed {
			r.errorf(w.Time.Pos, "an event-time window needs records with event time: add `timestamps:` to the source, or use time: processing")
			n.ok = false
		}
	case w.Time.Set:
		r.errorf(w.Time.Pos, "time wants event or processing, got %q", w.Time.V)
		n.ok = false
	default:
		// Event time where the records have it, processing time otherwise.
		out.Processing = !n.ir.Timed
	}
	if ns.AllowedLateness.Set {
		if out.Processing {
			r.errorf(ns.AllowedLateness.Pos, "allowed-lateness is for event-time windows: in processing time no record is late")
			n.ok = false
		} else if d, ok := r.duration(ns.AllowedLateness, false); ok {
			n.ir.Lateness = d
		}
	}
	if ns.Emit.Set && kind != "join" {
		r.errorf(ns.Emit.Pos, "emit is for reduce and aggregate without a window: a window emits once per key and window")
		n.ok = false
	}
	if kind == "join" && ns.Between != nil {
		r.errorf(w.Pos, "a join has a window or an interval (between), not both")
		n.ok = false
	}
	n.ir.Window = out
}

// checkProcess checks a process operator: the function, its per-key state
// and its timer callback.
func (r *resolver) checkProcess(n *rnode, in, key types.Type) types.Type {
	ns := n.spec
	f := r.u.lookupFunc(ns.Fn, r.diags)
	if f == nil || key == nil {
		n.ok = false
		return nil
	}
	keyS, inS := r.u.typeString(key), r.u.typeString(in)
	expected := fmt.Sprintf("func(key %s, state *S, in %s, ctx pipegen.Context, emit func(Out))", keyS, inS)
	ps, rs := params(f)
	if ps == nil || ps.Len() != 5 || rs.Len() != 0 || !types.Identical(ps.At(0).Type(), key) || !types.Identical(ps.At(2).Type(), in) || !isPipegenType(ps.At(3).Type(), "Context") {
		r.signatureError(ns.Fn, "process", f, expected)
		n.ok = false
		return nil
	}
	st, ok := ps.At(1).Type().(*types.Pointer)
	emit, ok2 := ps.At(4).Type().Underlying().(*types.Signature)
	if !ok || !ok2 || emit.Params().Len() != 1 || emit.Results().Len() != 0 {
		r.signatureError(ns.Fn, "process", f, expected)
		n.ok = false
		return nil
	}
	out := emit.Params().At(0).Type()
	n.ir.Fn = r.fn(f, "")
	n.ir.State = r.conv.convert(st.Elem())
	r.checkState(n, ns.Fn, st.Elem())
	if ns.OnTimer.Set {
		t := r.u.lookupFunc(ns.OnTimer, r.diags)
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
	}
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
		r.errorf(at, "join needs a key function per input: key: [LeftKey, RightKey] (func(%s) K and func(%s) K)", r.u.typeString(left), r.u.typeString(right))
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
		r.errorf(ns.Keys[1].Pos, "the join's keys differ: %s returns %s and %s returns %s; both must return the same type", ns.Keys[0].V, r.u.typeString(kl), ns.Keys[1].V, r.u.typeString(kr))
		n.ok = false
		return nil
	}
	n.ir.Key = n.ir.Keys[0]
	if !ns.Apply.Set {
		return nil // reported by the front end
	}
	f := r.u.lookupFunc(ns.Apply, r.diags)
	if f == nil {
		n.ok = false
		return nil
	}
	ps, rs := params(f)
	if ps == nil || ps.Len() != 2 || rs.Len() != 1 || !types.Identical(ps.At(0).Type(), left) || !types.Identical(ps.At(1).Type(), right) {
		r.signatureError(ns.Apply, "join apply", f, fmt.Sprintf("func(%s, %s) Out", r.u.typeString(left), r.u.typeString(right)))
		n.ok = false
		return nil
	}
	n.ir.Apply = r.fn(f, "")
	r.checkState(n, ns.Apply, left)
	r.checkState(n, ns.Apply, right)
	switch {
	case ns.Between != nil:
		if len(ns.Between) != 2 {
			r.errorf(ns.Kind.Pos, "between wants two bounds, [LOWER, UPPER] such as [-5s, 5s]")
			n.ok = false
			return nil
		}
		lo, ok1 := r.duration(ns.Between[0], true)
		hi, ok2 := r.duration(ns.Between[1], true)
		if !ok1 || !ok2 {
			n.ok = false
			return nil
		}
		if lo > hi {
			r.errorf(ns.Between[0].Pos, "between's lower bound %s is above its upper bound %s", lo, hi)
			n.ok = false
			return nil
		}
		if !n.ir.Timed {
			r.errorf(ns.Kind.Pos, "an interval join pairs records by event time: its inputs need timestamps (add `timestamps:` to their sources)")
			n.ok = false
			return nil
		}
		n.ir.Between = []time.Duration{lo, hi}
	case ns.Window == nil:
		r.errorf(ns.Kind.Pos, "join needs a window (window: {tumbling: 10s}) or an interval (between: [-5s, 5s])")
		n.ok = false
		return nil
	}
	return rs.At(0).Type()
}
