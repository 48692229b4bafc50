package codegen

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/ir"
)

// triggerGen is an aggregate on windows with a trigger: the windows of
// windowGen, which also fire early, every result marked with its firing
// (runtime.TriggeredWindows).
type triggerGen struct{ windowGen }

// triggerAccType is runtime.TriggerAcc[A] as an IR type, so that the codec
// generator can write it: a struct of N uint64 (records since the window
// last fired) and Acc A.
func triggerAccType(a *ir.Type) *ir.Type {
	return &ir.Type{Kind: ir.NamedType, PkgPath: runtimePath, PkgName: "runtime", Name: "TriggerAcc", TypeArgs: []*ir.Type{a},
		Underlying: &ir.Type{Kind: ir.StructType, Fields: []ir.Field{
			{Name: "N", Type: ir.Uint64Type, Exported: true},
			{Name: "Acc", Type: a, Exported: true},
		}}}
}

// userAcc is the aggregate's accumulator, inside the TriggerAcc.
func (t *triggerGen) userAcc() *ir.Type { return t.n.Acc }

func (t *triggerGen) doc() string {
	return fmt.Sprintf("%s, and early %s", t.windowGen.doc(), t.n.Trigger.Text())
}

func (t *triggerGen) stateType() *jen.Statement {
	if t.cg.g.pebbleWindows(t.n) {
		return jen.Qual(pebblePath, "Triggered").Types(typeCode(t.n.KeyType), typeCode(t.userAcc()))
	}
	return jen.Qual(runtimePath, "TriggeredWindows").Types(typeCode(t.n.KeyType), typeCode(t.userAcc()))
}

func (t *triggerGen) fields(s *jen.Group) {
	s.Id(t.member("%sState")).Op("*").Add(t.stateType()).Comment(fmt.Sprintf("open windows of %s per key, with their trigger", t.n.Name))
}

func (t *triggerGen) init(b *jen.Group) {
	g, n := t.cg.g, t.n
	var merge jen.Code = jen.Nil()
	if n.Window.Kind == "session" {
		merge = fn(n.Merge)
	}
	tr := n.Trigger
	var kv []jen.Code
	if tr.Count > 0 {
		kv = append(kv, field("Count", jen.Lit(tr.Count)))
	}
	if tr.Every > 0 {
		kv = append(kv, field("Every", millisCode(tr.Every)))
	}
	if tr.Processing {
		kv = append(kv, field("Processing", jen.True()))
	}
	if tr.Discard {
		kv = append(kv, field("Discard", jen.True()))
	}
	trigger := jen.Qual(runtimePath, "Trigger").Custom(multi, kv...)
	if g.pebbleWindows(n) {
		b.Add(t.state()).Op("=").Qual(pebblePath, "OpenTriggered").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)),
			assigner(n.Window), millisCode(n.Lateness), merge, trigger, jen.Id("c").Dot(t.member("%sResult")), jen.Id(g.global("%sCodec", n)))
		return
	}
	b.Add(t.state()).Op("=").Qual(runtimePath, "NewTriggeredWindows").Types(typeCode(n.KeyType), typeCode(t.userAcc())).Call(
		assigner(n.Window), millisCode(n.Lateness), merge, trigger, jen.Id("c").Dot(t.member("%sResult")))
	b.Qual(runtimePath, "RestoreKeyed").Call(jen.Id("c").Dot("task"), jen.Id(g.constName(n)), jen.Lit(""),
		jen.Func().Params(jen.Id("sec").Index().Byte()).Error().Block(
			jen.Return(jen.Add(t.state()).Dot("Restore").Call(jen.Id("sec"), jen.Id(g.global("decode%sKey", n)), jen.Id(g.global("decode%sValue", n)))),
		))
}

func (t *triggerGen) snapshot(b *jen.Group) {
	if g, n := t.cg.g, t.n; g.pebbleWindows(n) {
		b.Qual(pebblePath, "SnapshotTriggered").Call(jen.Id("s"), jen.Id(g.constName(n)), t.state())
		return
	}
	t.windowGen.snapshot(b)
}

// processingTrigger reports whether the trigger's interval is processing
// time on an event-time window: the chain ticks for it.
func (t *triggerGen) processingTrigger() bool {
	return t.n.Trigger.Every > 0 && t.n.Trigger.Processing
}

func (t *triggerGen) ticks() bool { return t.n.Window.Processing || t.processingTrigger() }

func (t *triggerGen) record(b *jen.Group) {
	n := t.n
	ts, wm := jen.Id("ts"), jen.Id("c").Dot("inputWM")
	if n.Window.Processing {
		ts, wm = nowMillis(), jen.Qual(runtimePath, "MinTime")
	}
	b.Id("k").Op(":=").Add(fn(n.Key)).Call(t.arg(n.Key))
	addFn := jen.Func().Params(jen.Id("acc").Op("*").Add(typeCode(t.userAcc()))).Block(fn(n.Add).Call(jen.Id("acc"), t.arg(n.Add)))
	method, args := sessionGap(b, n, t.in(), t.inRef(), ts, wm)
	if n.Window.Processing {
		b.Add(t.state()).Dot(method).Call(append(args, addFn)...)
		return
	}
	b.Comment("A record later than its window's end plus the allowed lateness, as")
	b.Comment("judged by its sender's watermark, goes to the side output.")
	b.If(jen.Op("!").Add(t.state()).Dot(method).Call(append(args, addFn)...)).Block(
		jen.Id("c").Dot(t.member("emit%sLate")).Call(t.cg.args(t.in(), jen.Id("ts"))...),
	)
}

func (t *triggerGen) watermark(b *jen.Group) {
	if !t.n.Window.Processing {
		b.Add(t.state()).Dot("Advance").Call(jen.Id("w"))
	}
}

func (t *triggerGen) tick(b *jen.Group) {
	if t.ticks() {
		b.Add(t.state()).Dot("Tick").Call(nowMillis())
	}
	if t.n.Window.Processing {
		b.Add(t.state()).Dot("Advance").Call(nowMillis())
	}
}

func (t *triggerGen) end(b *jen.Group) {
	if t.n.Window.Processing {
		b.Comment("The input has ended: every window fires.")
		b.Add(t.state()).Dot("Advance").Call(jen.Qual(runtimePath, "MaxTime"))
	}
}

// resultMethod emits xResult, which turns a firing of a window into the
// node's output record, the window's Firing set; its event time is the
// window's last millisecond, early firings included.
func (t *triggerGen) resultMethod() {
	n, f := t.n, t.cg.f
	name := t.member("%sResult")
	f.Comment(fmt.Sprintf("%s emits the result of a firing of a window of %q: early (its", name, n.Name))
	f.Comment("trigger), on time (it closed) or late (a record within the allowed lateness).")
	f.Func().Params(t.cg.recv).Id(name).Params(jen.Id("k").Add(typeCode(n.KeyType)), jen.Id("w").Qual(runtimePath, "Window"), jen.Id("f").Qual("github.com/pipegen/pipegen", "Firing"), jen.Id("acc").Op("*").Add(typeCode(t.userAcc()))).Block(
		t.emit(fn(n.Result).Call(jen.Id("k"), jen.Qual(runtimePath, "UserWindowFiring").Call(jen.Id("w"), jen.Id("f")), jen.Id("acc")), jen.Id("w").Dot("MaxTimestamp").Call()),
	)
}
