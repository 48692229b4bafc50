package codegen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/ir"
)

// processGen is a process operator: the user's function with per-key state,
// timers, an emit function and side outputs.
type processGen struct{ base }

func (p *processGen) state() *jen.Statement  { return p.field("State") }
func (p *processGen) timers() *jen.Statement { return p.field("Timers") }
func (p *processGen) ctx() *jen.Statement    { return p.field("Ctx") }
func (p *processGen) emitFn() *jen.Statement { return p.field("EmitFn") }

func (p *processGen) doc() string {
	d := fmt.Sprintf("process %s by %s, %s", p.n.Fn.Name, p.n.Key.Name, p.n.Fn.Signature)
	switch {
	case p.n.Broadcast != nil:
		b := p.n.Broadcast.Input
		d = fmt.Sprintf("process %s by %s, broadcast %s", p.n.Fns[1-b].Name, p.n.Key.Name, p.n.Fns[b].Name)
	case p.n.Paired():
		d = fmt.Sprintf("process %s by %s and %s by %s", p.n.Fns[0].Name, p.n.Keys[0].Name, p.n.Fns[1].Name, p.n.Keys[1].Name)
	}
	if p.n.OnTimer != nil {
		d += ", timers " + p.n.OnTimer.Name
	}
	if len(p.n.Sides) > 0 {
		var names []string
		for _, s := range p.n.Sides {
			names = append(names, s.Name)
		}
		d += ", side outputs " + strings.Join(names, ", ")
	}
	return d
}

func (p *processGen) fields(s *jen.Group) {
	g, n := p.cg.g, p.n
	s.Id(p.member("%sState")).Op("*").Add(g.keyedStateType(typeCode(n.KeyType), typeCode(n.State))).Comment(fmt.Sprintf("state of %s: one %s per key", n.Name, g.typeString(n.State)))
	if g.p.StateBackend == "pebble" {
		s.Id(p.member("%sTimers")).Op("*").Qual(pebblePath, "Timers").Types(typeCode(n.KeyType)).Comment("in the store of " + n.Name + "'s state")
	} else {
		s.Id(p.member("%sTimers")).Op("*").Qual(runtimePath, "TimerService").Types(typeCode(n.KeyType))
	}
	s.Id(p.member("%sCtx")).Op("*").Qual(runtimePath, "ProcessContext").Types(typeCode(n.KeyType))
	p.mapFieldDecls(s)
	s.Id(p.member("%sEmitFn")).Func().Params(typeCode(n.Out)).Comment("the emit function " + n.Name + " gets, made once")
	if bc := n.Broadcast; bc != nil {
		s.Id(p.member("%sBroadcast")).Map(typeCode(bc.Key)).Add(typeCode(bc.Value)).Comment("the broadcast state, the same on every subtask")
	}
}

func (p *processGen) init(b *jen.Group) {
	g, n := p.cg.g, p.n
	g.openKeyedState(b, n, p.state(), typeCode(n.State))
	p.mapInit(b)
	if g.p.StateBackend == "pebble" {
		b.Add(p.timers()).Op("=").Qual(pebblePath, "OpenTimers").Call(p.state())
	} else {
		b.Add(p.timers()).Op("=").Qual(runtimePath, "NewTimerService").Types(typeCode(n.KeyType)).Call()
		b.Qual(runtimePath, "RestoreChanges").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)), jen.Lit("timers"), p.timers(),
			jen.Func().Params(jen.Id("sec").Index().Byte(), jen.Id("delta").Bool()).Error().Block(
				jen.Return(jen.Add(p.timers()).Dot("RestoreSection").Call(jen.Id("sec"), jen.Id("delta"), jen.Id(g.global("decode%sKey", n)))),
			))
		if p.keptTimers() {
			b.Add(p.timers()).Dot("KeepWith").Call(p.state())
		}
	}
	if bc := n.Broadcast; bc != nil {
		b.Add(p.field("Broadcast")).Op("=").Map(typeCode(bc.Key)).Add(typeCode(bc.Value)).Values()
		b.Qual(runtimePath, "RestoreBroadcast").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)), jen.Lit("broadcast"),
			jen.Func().Params(jen.Id("sec").Index().Byte()).Error().Block(
				jen.Id("r").Op(":=").Qual(codecPath, "NewReader").Call(jen.Id("sec")),
				jen.For(jen.Id("r").Dot("More").Call()).Block(
					jen.Id("e").Op(":=").Id("r").Dot("Nested").Call(),
					jen.Id("k").Op(":=").Id(g.global("decode%sBroadcastKey", n)).Call(jen.Id("e")),
					jen.Add(p.field("Broadcast")).Index(jen.Op("*").Id("k")).Op("=").Op("*").Id(g.global("decode%sBroadcastValue", n)).Call(jen.Id("e")),
				),
				jen.Return(jen.Id("r").Dot("Err").Call()),
			))
	}
	b.Add(p.ctx()).Op("=").Qual(runtimePath, "NewProcessContext").Call(jen.Lit(n.Name), p.timers(), jen.Lit(n.OnTimer != nil), jen.Lit(p.cg.timed))
	if len(n.Sides) > 0 {
		b.Add(p.ctx()).Dot("SetOutput").Call(jen.Id("c").Dot(p.member("%sOutput")))
	}
	if p.cg.timed {
		in := jen.Id("in")
		if n.Paired() {
			in = jen.Id("c").Dot("in")
		}
		b.Add(p.ctx()).Dot("SetWatermark").Call(in.Dot("Watermark").Call())
		b.Add(p.emitFn()).Op("=").Func().Params(jen.Id("r").Add(typeCode(n.Out))).Block(
			jen.Id("c").Dot(p.member("emit%s")).Call(jen.Id("r"), p.ctx().Dot("EventTime").Call()),
		)
	} else {
		b.Add(p.emitFn()).Op("=").Id("c").Dot(p.member("emit%s"))
	}
}

func (p *processGen) ticks() bool { return p.n.OnTimer != nil }

// keptTimers reports whether the operator's timers are kept with its
// state's entries (TimerService.KeepWith): on the memory backend, when it
// has timers.
func (p *processGen) keptTimers() bool {
	return p.n.OnTimer != nil && p.cg.g.p.StateBackend != "pebble"
}

// call runs fn (the process function or the timer callback) for key k with
// its state, after the context's method begin (Begin or BeginTimer) has
// been given k and the time, then drops the state if the function cleared
// it.
func (p *processGen) call(b *jen.Group, f *ir.Func, arg jen.Code, begin string, ts jen.Code) {
	// One lookup of k, the value made k's when it has none. On the
	// memory backend with k's entry (state.Ref), kept in a variable here
	// rather than by the state or the context (a pointer stored in either
	// at every record is a write barrier while the collector marks): its
	// word where k's timers are kept goes to the context, which hands it
	// back after the call, and a call that cleared k's state deletes it
	// without a lookup.
	memory := p.cg.g.p.StateBackend != "pebble"
	if memory {
		b.List(jen.Id("st"), jen.Id("ref")).Op(":=").Add(p.state()).Dot("GetOrAddRef").Call(jen.Id("k"))
	} else {
		b.List(jen.Id("st"), jen.Id("_")).Op(":=").Add(p.state()).Dot("GetOrAdd").Call(jen.Id("k"))
	}
	p.mapBind(b)
	if p.keptTimers() {
		b.Add(p.ctx()).Dot(begin+"In").Call(jen.Id("k"), ts, jen.Id("ref").Dot("Aux").Call())
	} else {
		b.Add(p.ctx()).Dot(begin).Call(jen.Id("k"), ts)
	}
	args := []jen.Code{jen.Id("k"), jen.Id("st"), arg}
	if p.n.Broadcast != nil {
		args = append(args, p.field("Broadcast")) // to read
	}
	b.Add(fn(f)).Call(append(args, p.ctx(), p.emitFn())...)
	if p.keptTimers() {
		b.Id("ref").Dot("SetAux").Call(p.ctx().Dot("Aux").Call())
	}
	del := jen.Add(p.state()).Dot("Delete").Call(jen.Id("k"))
	if memory {
		del = jen.Add(p.state()).Dot("DeleteRef").Call(jen.Id("ref"))
	}
	b.If(p.ctx().Dot("Cleared").Call()).Block(append([]jen.Code{del}, p.mapClear()...)...)
}

func (p *processGen) record(b *jen.Group) { p.input(b, p.n.Key, p.n.Fn, p.in(), p.inRef()) }

// input runs the process function f for the record val (r or *r), whose
// address is ref, keyed by key; each function gets the record or its
// address as it takes it (ir.Func.Ref).
func (p *processGen) input(b *jen.Group, key, f *ir.Func, val, ref *jen.Statement) {
	b.Id("k").Op(":=").Add(fn(key)).Call(pass(key, val, ref))
	var ts jen.Code = jen.Qual(runtimePath, "MinTime")
	if p.cg.timed {
		ts = jen.Id("ts")
	}
	p.call(b, f, pass(f, val, ref), "Begin", ts)
}

// inputMethods emits toXLeft and toXRight, the per-record methods of a
// process with two inputs: each runs the function of its input.
func (p *processGen) inputMethods() {
	n, cg := p.n, p.cg
	for i, side := range []string{"Left", "Right"} {
		name := p.member("to%s" + side)
		if bc := n.Broadcast; bc != nil && bc.Input == i {
			cg.f.Comment(fmt.Sprintf("%s takes a record of the broadcast input %s of process %q, on every subtask: %s, %s.", name, cg.g.p.Nodes[n.Inputs[i].From].Name, n.Name, n.Fns[i].Name, n.Fns[i].Signature))
			cg.f.Func().Params(cg.recv).Id(name).Params(cg.params(n.Inputs[i].Type)...).BlockFunc(func(b *jen.Group) {
				var ts jen.Code = jen.Qual(runtimePath, "MinTime")
				if cg.timed {
					ts = jen.Id("ts")
				}
				b.Add(p.ctx()).Dot("BeginBroadcast").Call(ts)
				b.Add(fn(n.Fns[i])).Call(p.field("Broadcast"), jen.Id("r"), p.ctx(), p.emitFn())
			})
			continue
		}
		key := n.Key
		if len(n.Keys) == 2 {
			key = n.Keys[i]
		}
		cg.f.Comment(fmt.Sprintf("%s takes a record of input %s of process %q: %s by %s, %s.", name, cg.g.p.Nodes[n.Inputs[i].From].Name, n.Name, n.Fns[i].Name, key.Name, n.Fns[i].Signature))
		cg.f.Func().Params(cg.recv).Id(name).Params(cg.params(n.Inputs[i].Type)...).BlockFunc(func(b *jen.Group) {
			p.input(b, key, n.Fns[i], jen.Id("r"), jen.Op("&").Id("r"))
		})
	}
}

func (p *processGen) watermark(b *jen.Group) {
	b.Add(p.ctx()).Dot("SetWatermark").Call(jen.Id("w"))
	if p.n.OnTimer != nil {
		b.Add(p.ctx()).Dot("Firing").Call(jen.False())
		b.Add(p.timers()).Dot("AdvanceEvent").Call(jen.Id("w"), jen.Id("c").Dot(p.member("%sTimer")))
	}
}

func (p *processGen) tick(b *jen.Group) {
	if p.n.OnTimer != nil {
		b.Add(p.ctx()).Dot("Firing").Call(jen.True())
		b.Add(p.timers()).Dot("AdvanceProcessing").Call(nowMillis(), jen.Id("c").Dot(p.member("%sTimer")))
	}
}

func (p *processGen) snapshot(b *jen.Group) {
	g, n := p.cg.g, p.n
	g.snapshotKeyedState(b, n, p.state())
	p.mapSnapshot(b)
	if g.p.StateBackend == "pebble" {
		b.Comment("The timers are in the store of " + n.Name + "'s state: its snapshot holds them.")
	} else {
		p.snapshotTimers(b)
	}
	if bc := n.Broadcast; bc != nil {
		b.Comment("The broadcast state is the same on every subtask: subtask 0 writes it.")
		b.Qual(runtimePath, "SnapshotBroadcast").Call(jen.Id("s"), jen.Id(g.constName(n)), jen.Lit("broadcast"), jen.Lit(schema(bc.Key)), jen.Id(g.global("%sBroadcastSchema", n)),
			jen.Func().Params(jen.Id("w").Op("*").Qual(codecPath, "Writer")).Error().Block(
				jen.For(jen.List(jen.Id("k"), jen.Id("v")).Op(":=").Range().Add(p.field("Broadcast"))).Block(
					jen.Id("m").Op(":=").Id("w").Dot("Begin").Call(),
					jen.Id(g.global("encode%sBroadcastKey", n)).Call(jen.Id("w"), jen.Op("&").Id("k")),
					jen.Id(g.global("encode%sBroadcastValue", n)).Call(jen.Id("w"), jen.Op("&").Id("v")),
					jen.Id("w").Dot("End").Call(jen.Id("m")),
				),
				jen.Return(jen.Nil()),
			))
	}
}

// snapshotTimers adds the timers of the memory backend to snapshot s:
// those changed since the last checkpoint, or all of them.
func (p *processGen) snapshotTimers(b *jen.Group) {
	g, n := p.cg.g, p.n
	b.Qual(runtimePath, "SnapshotChanges").Call(jen.Id("s"), jen.Id(g.constName(n)), jen.Lit("timers"), jen.Id(g.global("hashKey%s", n)), jen.Id(g.global("%sKeySchema", n)), jen.Lit("timers"), p.timers(),
		jen.Func().Params(jen.Id("sec").Op("*").Qual(statePath, "Sections"), jen.Id("kg").Func().Params(typeCode(n.KeyType)).Int(), jen.Id("d").Qual(runtimePath, "Delta")).Params(jen.Uint64(), jen.Error()).Block(
			jen.Return(jen.Add(p.timers()).Dot("SnapshotDelta").Call(jen.Id("sec"), jen.Id("kg"), jen.Id(g.global("encode%sKey", n)), jen.Id("d"))),
		))
}

// methods emits xTimer, which runs the on-timer callback for a due timer
// (what it emits has the timer's time as event time), and xOutput, which takes what the functions pass to
// ctx.Output.
func (p *processGen) methods() {
	n, f := p.n, p.cg.f
	if n.Paired() {
		p.inputMethods()
	}
	if n.OnTimer != nil {
		name := p.member("%sTimer")
		f.Comment(fmt.Sprintf("%s runs %s for a timer of %q that is due.", name, n.OnTimer.Name, n.Name))
		f.Func().Params(p.cg.recv).Id(name).Params(jen.Id("k").Add(typeCode(n.KeyType)), jen.Id("at").Int64()).BlockFunc(func(b *jen.Group) {
			p.call(b, n.OnTimer, jen.Qual(runtimePath, "MillisTime").Call(jen.Id("at")), "BeginTimer", jen.Id("at"))
		})
	}
	if len(n.Sides) == 0 {
		return
	}
	name := p.member("%sOutput")
	f.Comment(fmt.Sprintf("%s passes a value that %q sends with ctx.Output to its side output: the", name, n.Name))
	f.Comment("compiler found the names and the types in the calls; a call it could not see")
	f.Comment("(the context passed to a function of another package) is checked here.")
	f.Func().Params(p.cg.recv).Id(name).Params(jen.Id("name").String(), jen.Id("v").Any()).BlockFunc(func(b *jen.Group) {
		b.Switch(jen.Id("name")).BlockFunc(func(sw *jen.Group) {
			for _, s := range n.Sides {
				sw.Case(jen.Lit(s.Name)).Block(
					jen.List(jen.Id("r"), jen.Id("ok")).Op(":=").Id("v").Assert(typeCode(s.Type)),
					jen.If(jen.Op("!").Id("ok")).Block(
						jen.Qual(runtimePath, "Abortf").Call(jen.Lit(fmt.Sprintf("operators.%s: Output(%q, ...) got a %%T, but side output %s.%s carries %s", n.Name, s.Name, n.Name, s.Name, p.cg.g.typeString(s.Type))), jen.Id("v")),
					),
					jen.Id("c").Dot(p.cg.sideEmit(n, s.Name)).Call(p.cg.args(jen.Id("r"), p.ctx().Dot("EventTime").Call())...),
				)
			}
			var names []string
			for _, s := range n.Sides {
				names = append(names, s.Name)
			}
			sw.Default().Block(
				jen.Qual(runtimePath, "Abortf").Call(jen.Lit(fmt.Sprintf("operators.%s: Output(%%q, ...): %s has no such side output (it has %s)", n.Name, n.Name, strings.Join(names, ", "))), jen.Id("name")),
			)
		})
	})
}

// sideEmit is the method that passes node n's side output side on:
// emitWatchAlerts for side alerts of watch.
func (cg *chainGen) sideEmit(n *ir.Node, side string) string {
	return cg.member("emit%s"+upperFirst(lowerCamel(side)), n)
}
