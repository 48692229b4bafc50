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

// checkTrigger checks the trigger of a windowed aggregate: a count, an
// interval, or both; the time of the interval; the mode; and a result
// function that sees the window, whose Firing tells an early result from
// a final one.
func (r *resolver) checkTrigger(n *rnode) {
	ns := n.spec
	t := ns.Trigger
	if w := n.ir.Window; w != nil && w.Kind == "count" && n.ok {
		if n.ir.Result != nil && n.ir.Result.Shape == "window" {
			r.report(ns.Result.Pos, diag.Function, "result %s takes a window, but count windows have no time: use a func(key K, acc *A) Out", ns.Result.V)
			n.ok = false
		}
		if t != nil {
			r.report(t.Pos, diag.Misplaced, "%v is for windows of time: a count window fires as its last record arrives", keyRef("trigger"))
			n.ok = false
		}
		if w.CountEvery < w.Count && n.in != nil {
			// A sliding count window keeps its last records.
			r.checkState(n, ns.Window.CountEvery, n.in)
		}
		return
	}
	if t == nil {
		return
	}
	kind := ns.Kind.V
	if !slices.Contains(settings.KindsOf("trigger"), kind) {
		r.notFor(n, t.Pos, "trigger", "has no trigger: an aggregate's result function sees which firing a result is")
		return
	}
	if ns.Window == nil {
		r.report(t.Pos, diag.Misplaced, "%v is for windows: add a window, or drop it", keyRef("trigger"))
		n.ok = false
		return
	}
	if !n.ok || n.ir.Window == nil {
		return // the window or the aggregate has a mistake, reported already
	}
	setting := func(path string) *settings.Setting { return settings.Node(settings.Operator, kind, path) }
	out := &ir.Trigger{Processing: n.ir.Window.Processing}
	if v, ok := r.parse(setting("trigger.count"), t.Count); ok {
		out.Count = v.(int)
	} else if t.Count.Set {
		n.ok = false
	}
	if v, ok := r.parse(setting("trigger.every"), t.Every); ok {
		out.Every = v.(time.Duration)
	} else if t.Every.Set {
		n.ok = false
	}
	if !t.Count.Set && !t.Every.Set {
		r.report(t.Pos, diag.Missing, "trigger needs %v (records) or %v (time), or both", exIn("trigger.count", "N"), exIn("trigger.every", "INTERVAL"))
		n.ok = false
	}
	if v, ok := r.parse(setting("trigger.time"), t.Time); ok {
		switch {
		case !t.Every.Set:
			r.report(t.Time.Pos, diag.Misplaced, "%v is the time of %v: add it, or drop this", keyRef("trigger.time"), keyRef("trigger.every"))
			n.ok = false
		case v == "event" && n.ir.Window.Processing:
			r.report(t.Time.Pos, diag.Conflict, "%v on a processing-time window: it has no watermark to fire by; use %v", exIn("trigger.time", "event"), exIn("trigger.time", "processing"))
			n.ok = false
		default:
			out.Processing = v == "processing"
		}
	} else if t.Time.Set {
		n.ok = false
	}
	if v, ok := r.parse(setting("trigger.mode"), t.Mode); ok {
		out.Discard = v == "discard"
	} else if t.Mode.Set {
		n.ok = false
	}
	if n.ir.Result == nil || n.ir.Result.Shape != "window" {
		r.report(t.Pos, diag.Missing, "a window with a trigger emits early results before its final one: give the aggregate %v, a func(key K, w pipegen.Window, acc *A) Out, whose w.Firing tells them apart", exIn("aggregate.result", "ResultFunc"))
		n.ok = false
	}
	if n.ok {
		n.ir.Trigger = out
	}
}

// checkSessionGap checks a session gap function: func(In) time.Duration.
func (r *resolver) checkSessionGap(n *rnode, name Str) *ir.Func {
	f := r.u.lookupFunc(name, &r.reporter)
	if f == nil || n.in == nil {
		return nil
	}
	ps, rs := params(f)
	var ok, ref bool
	if ps != nil && ps.Len() == 1 && rs.Len() == 1 && isDuration(rs.At(0).Type()) {
		ok, ref = recordParam(ps.At(0).Type(), n.in)
	}
	if !ok {
		r.recordSignatureError(name, "session-gap", f, n.in, fmt.Sprintf("func(%s) time.Duration", r.u.typeString(n.in)))
		return nil
	}
	return r.fnRef(f, "", ref)
}

// isDuration reports whether t is time.Duration.
func isDuration(t types.Type) bool {
	named, ok := t.(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == "time" && named.Obj().Name() == "Duration"
}

// checkCountWindow checks the sizes of count windows into w.
func (r *resolver) checkCountWindow(n *rnode, w *ir.Window) {
	ns, kind := n.spec, n.spec.Kind.V
	ws := ns.Window
	v, ok := r.parse(settings.Node(settings.Operator, kind, "window.count"), ws.Count)
	if !ok {
		n.ok = false
		return
	}
	w.Count, w.CountEvery = v.(int), v.(int)
	if !ws.CountEvery.Set {
		return
	}
	v, ok = r.parse(settings.Node(settings.Operator, kind, "window.count-every"), ws.CountEvery)
	switch {
	case !ok:
		n.ok = false
	case v.(int) > w.Count:
		r.report(ws.CountEvery.Pos, diag.BadValue, "%v (how many records apart windows fire) must be at most %v, %d, got %d", keyRef("window.count-every"), keyRef("window.count"), w.Count, v.(int))
		n.ok = false
	default:
		w.CountEvery = v.(int)
	}
}
