package dsl

import (
	"fmt"
	"go/types"
	"slices"

	"github.com/pipegen/pipegen/diag"
	"github.com/pipegen/pipegen/ir"
)

// checkProcessBroadcast checks a process operator with a broadcast input
// (Flink's KeyedBroadcastProcessFunction): the other input is keyed by
// the one key function; the keyed input's function reads the broadcast
// state, the broadcast input's function writes it:
//
//	keyed:     func(key K, state *S, in A, bc map[BK]BV, ctx pipegen.Context, emit func(Out))
//	broadcast: func(bc map[BK]BV, in B, ctx pipegen.Context, emit func(Out))
//	on-timer:  func(key K, state *S, at time.Time, bc map[BK]BV, ctx pipegen.Context, emit func(Out))
func (r *resolver) checkProcessBroadcast(n *rnode) types.Type {
	ns := n.spec
	b := slices.IndexFunc(ns.Inputs, func(in Str) bool { return in.V == ns.Broadcast.V })
	if b < 0 {
		r.report(ns.Broadcast.Pos, diag.Graph, "%v names %q, which is not an input of %q: name one of its inputs, %s and %s", keyRef("broadcast"), ns.Broadcast.V, ns.Name.V, ns.Inputs[0].V, ns.Inputs[1].V)
		n.ok = false
		return nil
	}
	a := 1 - b
	keyedIn, bcIn := n.joinIn[a], n.joinIn[b]
	if len(ns.Keys) != 1 {
		at := ns.Kind.Pos
		if len(ns.Keys) > 1 {
			at = ns.Keys[1].Pos
		}
		r.report(at, diag.BadValue, "a process with a broadcast input takes one key function, for its keyed input %s: %v (func(%s) K)", ns.Inputs[a].V, ex("key", "KeyFunc"), r.u.typeString(keyedIn))
		n.ok = false
		return nil
	}
	if len(ns.Fns) != 2 {
		r.report(ns.Kind.Pos, diag.Missing, "a process with two inputs needs a function per input: %v, in the order of %v", ex("process", "OnA", "OnB"), keyRef("inputs"))
		n.ok = false
		return nil
	}
	key := r.checkKey(n, ns.Keys[0], keyedIn)
	if key == nil {
		n.ok = false
		return nil
	}
	keyS := r.u.typeString(key)

	// The broadcast function: func(bc map[BK]BV, in B, ctx, emit).
	bf := r.u.lookupFunc(ns.Fns[b], &r.reporter)
	kf := r.u.lookupFunc(ns.Fns[a], &r.reporter)
	if bf == nil || kf == nil {
		n.ok = false
		return nil
	}
	bcExpected := fmt.Sprintf("func(bc map[BK]BV, in %s, ctx pipegen.Context, emit func(Out))", r.u.typeString(bcIn))
	bp, br := params(bf)
	var bcMap *types.Map
	var emit *types.Signature
	if bp != nil && bp.Len() == 4 && br.Len() == 0 {
		bcMap, _ = bp.At(0).Type().Underlying().(*types.Map)
		emit, _ = bp.At(3).Type().Underlying().(*types.Signature)
	}
	if bcMap == nil || emit == nil || !types.Identical(bp.At(1).Type(), bcIn) || !isPipegenType(bp.At(2).Type(), "Context") || emit.Params().Len() != 1 || emit.Results().Len() != 0 {
		r.signatureError(ns.Fns[b], "process (broadcast input "+ns.Inputs[b].V+")", bf, bcExpected)
		n.ok = false
		return nil
	}
	bcType := bp.At(0).Type()
	out := emit.Params().At(0).Type()

	// The keyed function: func(key K, state *S, in A, bc map[BK]BV, ctx, emit).
	kExpected := fmt.Sprintf("func(key %s, state *S, in %s, bc %s, ctx pipegen.Context, emit func(%s)) (the broadcast state and emit types of %s)", keyS, r.u.typeString(keyedIn), r.u.typeString(bcType), r.u.typeString(out), ns.Fns[b].V)
	kp, kr := params(kf)
	var st *types.Pointer
	if kp != nil && kp.Len() == 6 && kr.Len() == 0 {
		st, _ = kp.At(1).Type().(*types.Pointer)
	}
	if st == nil || !types.Identical(kp.At(0).Type(), key) || !types.Identical(kp.At(2).Type(), keyedIn) || !types.Identical(kp.At(3).Type(), bcType) ||
		!isPipegenType(kp.At(4).Type(), "Context") || !types.Identical(kp.At(5).Type().Underlying(), emit) {
		r.signatureError(ns.Fns[a], "process (keyed input "+ns.Inputs[a].V+")", kf, kExpected)
		n.ok = false
		return nil
	}
	r.checkProcessState(n, ns.Fns[a], st.Elem())
	r.checkState(n, ns.Fns[b], bcType)
	n.ir.Fn = r.fn(kf, "")
	n.ir.Fns = []*ir.Func{nil, nil}
	n.ir.Fns[a], n.ir.Fns[b] = n.ir.Fn, r.fn(bf, "")
	n.ir.State = r.conv.convert(st.Elem())
	n.ir.Broadcast = &ir.BroadcastState{Input: b, Key: r.conv.convert(bcMap.Key()), Value: r.conv.convert(bcMap.Elem())}
	fns := []*types.Func{kf, bf}
	if ns.OnTimer.Set {
		t := r.u.lookupFunc(ns.OnTimer, &r.reporter)
		if t == nil {
			n.ok = false
			return nil
		}
		tp, tr := params(t)
		if tp == nil || tp.Len() != 6 || tr.Len() != 0 || !types.Identical(tp.At(0).Type(), key) || !types.Identical(tp.At(1).Type(), st) ||
			!isTime(tp.At(2).Type()) || !types.Identical(tp.At(3).Type(), bcType) || !isPipegenType(tp.At(4).Type(), "Context") || !types.Identical(tp.At(5).Type().Underlying(), emit) {
			r.signatureError(ns.OnTimer, "on-timer", t, fmt.Sprintf("func(key %s, state %s, at time.Time, bc %s, ctx pipegen.Context, emit func(%s)) (the broadcast state as the keyed function reads it)", keyS, r.u.typeString(st), r.u.typeString(bcType), r.u.typeString(out)))
			n.ok = false
			return nil
		}
		n.ir.OnTimer = r.fn(t, "")
		fns = append(fns, t)
	}
	r.findSideOutputs(n, fns...)
	return out
}
