package codegen

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/pipegen/pipegen/ir"
)

// Test mode (Options.Test, `pipegen generate -test`): the pipeline whose
// sources and sinks are the test driver's (runtime.DriverSource,
// runtime.DriverSink), as a package of its own, not main (pipeline.go),
// or in package mode as a _test.go file of the user's package
// (TestFile), with a typed Driver over runtime.Driver first in the file: a method to push records into each
// source and to move its watermark, one to read what each sink emitted and
// committed, and the driver's own steps (processing time, checkpoint,
// restore, end). The chains are the ones a program runs; the driver runs
// them one step at a time (see runtime/internal/drive).

// nowMillis is processing time in generated code: the job's clock, which
// a test driver sets.
func nowMillis() *jen.Statement { return jen.Id("c").Dot("task").Dot("NowMillis").Call() }

// testFiles returns pipeline.go of test mode, a package of its own.
func (g *gen) testFiles() ([]File, error) {
	name := g.opts.TestPackage
	if name == "" {
		name = "jobtest"
	}
	g.pkgPath, g.pkgName = "pipegen.test/"+name, name
	g.driver, g.newDriver = "Driver", "New"
	g.collectors()
	pipeline, err := g.pipelineFile("pipeline.go")
	if err != nil {
		return nil, err
	}
	return []File{{Name: "pipeline.go", Content: pipeline}}, nil
}

// packageTestFiles returns the file of package mode with Options.Test:
// TestFile(name), in the user's package, compiled only into its tests.
func (g *gen) packageTestFiles() ([]File, error) {
	g.driver, g.newDriver = DriverType(g.p.Name), DriverFunc(g.p.Name)
	g.collectors()
	g.names.reserve(g.driver)
	g.names.reserve(g.newDriver)
	name := TestFile(g.p.Name)
	src, err := g.pipelineFile(name)
	if err != nil {
		return nil, err
	}
	return []File{{Name: name, Content: src}}, nil
}

// driverCode emits the typed Driver, first in the file.
func (g *gen) driverCode(f *jen.File) {
	p := g.p
	f.Comment(fmt.Sprintf("%s runs the pipeline %s inside a Go test, one step at a time: push", g.driver, p.Name))
	f.Comment("records into its sources, move their watermarks and processing time, take a")
	f.Comment("checkpoint and restore the job from it as after a crash, and read what its")
	f.Comment("sinks emitted and committed. Nothing runs while no method of the driver")
	f.Comment("does: every method returns once all it caused has happened, down to the sinks.")
	f.Comment("Call its methods from the test's goroutine.")
	f.Type().Id(g.driver).Struct(
		jen.Id("d").Op("*").Qual(runtimePath, "Driver"),
		jen.Id("t").Qual("testing", "TB"),
	)
	f.Comment(fmt.Sprintf("%s builds the job for test t on an in-memory file system, at parallelism 1", g.newDriver))
	f.Comment("unless opts say otherwise; the test's end ends it.")
	f.Func().Id(g.newDriver).Params(jen.Id("t").Qual("testing", "TB"), jen.Id("opts").Op("...").Qual(runtimePath, "DriverOptions")).Op("*").Id(g.driver).Block(
		jen.Id("t").Dot("Helper").Call(),
		jen.Var().Id("o").Qual(runtimePath, "DriverOptions"),
		jen.If(jen.Len(jen.Id("opts")).Op(">").Lit(0)).Block(jen.Id("o").Op("=").Id("opts").Index(jen.Lit(0))),
		jen.Return(jen.Op("&").Id(g.driver).Values(jen.Dict{
			jen.Id("d"): jen.Qual(runtimePath, "NewDriver").Call(jen.Id("t"), jen.Id(g.own("config")), jen.Id(g.own("build")), jen.Id("o")),
			jen.Id("t"): jen.Id("t"),
		})),
	)
	recv := jen.Id("d").Op("*").Id(g.driver)
	helper := jen.Id("d").Dot("t").Dot("Helper").Call()
	timed := false
	for _, n := range p.Nodes {
		if n.Kind != ir.Source {
			continue
		}
		x := exported(n.Name)
		node := jen.Id(g.constName(n))
		ts := n.Timestamps
		timed = timed || ts != nil
		push := "Push" + x
		switch {
		case ts != nil && ts.Extract == nil:
			f.Comment(fmt.Sprintf("%s hands records to source %q, each with event time at.", push, n.Name))
			f.Func().Params(recv).Id(push).Params(jen.Id("at").Qual("time", "Time"), jen.Id("recs").Op("...").Add(typeCode(n.Out))).Block(
				helper,
				jen.For(jen.List(jen.Id("_"), jen.Id("r")).Op(":=").Range().Id("recs")).Block(
					jen.Id("d").Dot("d").Dot("Push").Call(node, jen.Id("r"), jen.Qual(runtimePath, "TimeMillis").Call(jen.Id("at"))),
				),
			)
		default:
			what := ""
			if ts != nil {
				what = fmt.Sprintf(", each with the event time %s gives it", ts.Extract.Name)
			}
			f.Comment(fmt.Sprintf("%s hands records to source %q%s.", push, n.Name, what))
			f.Func().Params(recv).Id(push).Params(jen.Id("recs").Op("...").Add(typeCode(n.Out))).Block(
				helper,
				jen.For(jen.List(jen.Id("_"), jen.Id("r")).Op(":=").Range().Id("recs")).Block(
					jen.Id("d").Dot("d").Dot("Push").Call(node, jen.Id("r"), jen.Lit(0)),
				),
			)
		}
		if ts != nil {
			wm := "Watermark" + x
			f.Comment(fmt.Sprintf("%s moves the watermark of source %q to at: no record at or", wm, n.Name))
			f.Comment("before it is expected from it any more. The driver's sources send no")
			f.Comment("watermark of their own.")
			f.Func().Params(recv).Id(wm).Params(jen.Id("at").Qual("time", "Time")).Block(
				helper,
				jen.Id("d").Dot("d").Dot("Watermark").Call(node, jen.Qual(runtimePath, "TimeMillis").Call(jen.Id("at"))),
			)
		}
	}
	if timed {
		f.Comment("AdvanceWatermark moves the watermark of every source with event time to at.")
		f.Func().Params(recv).Id("AdvanceWatermark").Params(jen.Id("at").Qual("time", "Time")).Block(
			helper,
			jen.Id("d").Dot("d").Dot("WatermarkAll").Call(jen.Qual(runtimePath, "TimeMillis").Call(jen.Id("at"))),
		)
	}
	f.Comment("AdvanceProcessingTime moves the job's clock on by dt: processing-time timers")
	f.Comment("and windows that are due fire.")
	f.Func().Params(recv).Id("AdvanceProcessingTime").Params(jen.Id("dt").Qual("time", "Duration")).Block(
		helper, jen.Id("d").Dot("d").Dot("Advance").Call(jen.Id("dt")))
	f.Comment("Now is the job's processing time.")
	f.Func().Params(recv).Id("Now").Params().Qual("time", "Time").Block(jen.Return(jen.Id("d").Dot("d").Dot("Now").Call()))
	f.Comment("Checkpoint takes a checkpoint and returns once it is complete and the sinks'")
	f.Comment("output up to it is committed; it returns the checkpoint's id.")
	f.Func().Params(recv).Id("Checkpoint").Params().Int64().Block(helper, jen.Return(jen.Id("d").Dot("d").Dot("Checkpoint").Call()))
	f.Comment("Restore ends the job as a crash would and builds it again from the newest")
	f.Comment("completed checkpoint: what the sinks emitted after it is dropped, and what was")
	f.Comment("pushed after it (records, watermarks, processing time) is replayed.")
	f.Func().Params(recv).Id("Restore").Params().Block(helper, jen.Id("d").Dot("d").Dot("Restore").Call())
	f.Comment("Rescale is Restore onto parallelism p: every node gets p subtasks, and the")
	f.Comment("keyed state goes to them by key group.")
	f.Func().Params(recv).Id("Rescale").Params(jen.Id("p").Int()).Block(helper, jen.Id("d").Dot("d").Dot("Rescale").Call(jen.Id("p")))
	f.Comment("End ends every source's input: every window fires, and the final checkpoint")
	f.Comment("commits the rest of the output. The driver takes no command after it.")
	f.Func().Params(recv).Id("End").Params().Block(helper, jen.Id("d").Dot("d").Dot("End").Call())
	for _, n := range p.Nodes {
		if n.Kind != ir.Sink {
			continue
		}
		x := exported(n.Name)
		node := jen.Id(g.constName(n))
		t := typeCode(n.In())
		f.Comment(fmt.Sprintf("Emitted%s is every record sink %q has written so far, committed or not", x, n.Name))
		f.Comment("(a restore drops what no checkpoint committed).")
		f.Func().Params(recv).Id("Emitted" + x).Params().Index().Add(t).Block(
			jen.Return(jen.Qual(runtimePath, "DriverEmitted").Types(t).Call(jen.Id("d").Dot("d"), node)))
		f.Comment(fmt.Sprintf("Committed%s is what completed checkpoints committed of sink %q: what an", x, n.Name))
		f.Comment("exactly-once sink has made visible.")
		f.Func().Params(recv).Id("Committed" + x).Params().Index().Add(t).Block(
			jen.Return(jen.Qual(runtimePath, "DriverCommitted").Types(t).Call(jen.Id("d").Dot("d"), node)))
	}
	for _, c := range g.collectList {
		t := typeCode(c.t)
		what := fmt.Sprintf("the side output %s of %q", c.side, c.n.Name)
		if c.n.Side(c.side) == nil {
			what = fmt.Sprintf("the records too late for %q (%s)", c.n.Name, c.side)
		}
		f.Comment(fmt.Sprintf("Emitted%s is every record of %s, which no node reads:", c.name, what))
		f.Comment("the driver collects them as it does a sink's, committed or not.")
		f.Func().Params(recv).Id("Emitted" + c.name).Params().Index().Add(t).Block(
			jen.Return(jen.Qual(runtimePath, "DriverEmitted").Types(t).Call(jen.Id("d").Dot("d"), jen.Id(c.konst))))
		f.Comment(fmt.Sprintf("Committed%s is what completed checkpoints committed of them.", c.name))
		f.Func().Params(recv).Id("Committed" + c.name).Params().Index().Add(t).Block(
			jen.Return(jen.Qual(runtimePath, "DriverCommitted").Types(t).Call(jen.Id("d").Dot("d"), jen.Id(c.konst))))
	}
	if len(g.collectList) > 0 {
		f.Comment("The driver's numbers of the outputs that no node reads, after the nodes'.")
		f.Const().DefsFunc(func(b *jen.Group) {
			for _, c := range g.collectList {
				b.Id(c.konst).Op("=").Lit(c.key).Comment(fmt.Sprintf("%s.%s", c.n.Name, c.side))
			}
		})
	}
}

// collector keeps, for the test driver, an output of a node that no node
// reads: a side output, or the records too late for a window or a join.
// Under the driver its records go to a driver sink of their own, which the
// Driver reads as it reads a sink's.
type collector struct {
	n    *ir.Node
	side string
	t    *ir.Type
	// key is the collector's number in the driver (after the nodes'),
	// named by the constant konst; name is its name in the Driver's
	// methods (EmittedNAME).
	key   int
	konst string
	name  string
}

// collectors finds the outputs that no node reads, in the order of the
// nodes, for the test driver; g.collect holds them by node and side.
func (g *gen) collectors() {
	g.collect = map[string]*collector{}
	sinks := map[string]bool{}
	for _, n := range g.p.Nodes {
		if n.Kind == ir.Sink {
			sinks[exported(n.Name)] = true
		}
	}
	for _, n := range g.p.Nodes {
		var sides []string
		if n.Window != nil && !n.Window.Processing && n.Window.Kind != "count" && (n.Kind == ir.Aggregate || n.Kind == ir.Reduce) {
			sides = append(sides, "late")
		}
		if n.Kind == ir.Join && n.Timed && (n.Window == nil || !n.Window.Processing) {
			sides = append(sides, joinLateSide[:]...)
		}
		for _, s := range n.Sides {
			sides = append(sides, s.Name)
		}
		for _, side := range sides {
			if len(consumersOf(g.p, n, side)) > 0 {
				continue
			}
			name := exported(n.Name) + exported(side)
			if sinks[name] {
				name += "Side"
			}
			c := &collector{n: n, side: side, t: sideType(n, side), key: len(g.p.Nodes) + len(g.collectList), name: name}
			c.konst = g.names.name(nameKey{pattern: "collect%s." + side, of: n.Name}, derive("collect%s"+exported(side), g.id(n)))
			g.collect[n.Name+"."+side] = c
			g.collectList = append(g.collectList, c)
		}
	}
}

// sideType is the type of the records of output side of node n ("" its
// main output).
func sideType(n *ir.Node, side string) *ir.Type {
	switch {
	case side == "":
		return n.Out
	case n.Side(side) != nil:
		return n.Side(side).Type
	case side == "late":
		return n.In()
	case side == joinLateSide[0]:
		return n.Inputs[0].Type
	case side == joinLateSide[1]:
		return n.Inputs[1].Type
	}
	return ir.StringType
}

// chainCollectors are the collectors of the nodes of chain cg.
func (cg *chainGen) chainCollectors() []*collector {
	var cs []*collector
	for _, c := range cg.g.collectList {
		if cg.g.chainOf[c.n.ID] == cg.c {
			cs = append(cs, c)
		}
	}
	return cs
}

// collectField is the chain's field that holds collector c.
func (cg *chainGen) collectField(c *collector) string {
	return cg.members.name(nameKey{pattern: "%sOut." + c.side, of: c.n.Name}, derive("%s"+exported(c.side)+"Out", cg.g.id(c.n)))
}
