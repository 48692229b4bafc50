package runtime

import "github.com/pipegen/pipegen/runtime/state"

// Inline bodies for generated code.
//
// Generated code reaches the runtime's internal types through the aliases
// of this package (SourceCtl, Watermarks, Task, Window, Meter), and the
// compiler takes the bodies of their methods, for inlining, only from this
// package's export data, which carries the bodies of the methods that this
// package's own code inlined (golang/go#74783). A method that nothing here
// calls stays a call in every generated program, however small it is:
// SourceCtl.Poll and Watermarks.Observe, which every source calls at every
// record, were calls (Nexmark q7 spent 2% of its samples in them) while
// their packages' own callers inlined them.
//
// Generic types (Inbox, Out, WindowState, the sources and sinks) have
// their bodies exported to be instantiated, but not the bodies of the
// plain functions those call: a generated program compiles its own
// instance of WindowState.Add, and that instance called
// eventtime.floorMultiple and aheadOf at every record of a sliced
// window, Out.HashSlot called keygroup.Of at every record sent by key,
// and the checkpoint writer's WindowCapture.Encode called seqList.at,
// changedAfter and windowHead at every window (Nexmark q5 with
// exactly-once: seqList.at alone 63 of 10,441 samples in a perf run),
// where the runtime's own tests and benchmarks, compiled in the package,
// inline them all. With inlineGenericBodies, which instantiates those
// methods here, this package's export data carries the helpers' bodies.
// Which helpers it carries follows rules of the compiler's that we did
// not take apart (the interval join's subSat came with the others before
// the join was instantiated here): TestGeneratedCodeInlines (golden)
// checks the ones that run per record or per window.
//
// inlineBodies calls the methods that generated code calls per record, per
// window or per watermark (Latest: per record sent to a dead letter), so
// that their bodies are in the export data; it never runs.
// TestGeneratedCodeInlines (golden) fails when one of those a pipeline
// with event time and windows calls is a call again.
func inlineBodies(c *SourceCtl, w *Watermarks, t *Task, m *Meter, win Window) {
	c.Poll()
	c.Draining() // file and Kafka sources, per record
	w.Observe(0)
	w.Latest()
	w.Pending()
	w.Finish()
	t.NowMillis()
	m.Watermark(0)
	win.MaxTimestamp()
}

// The reference keeps inlineBodies, which no code calls, from linters
// that report unused functions.
var _ = inlineBodies

// inlineGenericBodies instantiates the generic methods that generated
// code calls per record or per window and whose bodies call plain
// helpers of their package (above); it never runs. Any instance will do:
// the bodies that matter are the helpers', not the instance's.
func inlineGenericBodies(s *WindowState[int64, int64], sec *state.Sections, o *Out[int64], in *Inbox[int64],
	j *IntervalJoin[int64, int64, int64], f *FileSource[int64]) {
	s.Add(0, 0, 0, nil, nil) // addSliced, addSliding
	s.Acc(0, 0, 0)           // acc: a new window
	if c, _, err := s.Capture(Delta{}); err == nil {
		_ = c.Encode(sec, nil, nil, nil) // the checkpoint writer, per window
	}
	o.HashSlot(0) // the key group of every record sent by key
	in.Next()     // the wait for a batch
	j.AddLeft(0, 0, 0, 0, nil)
	j.AddRight(0, 0, 0, 0, nil)
	f.Next()
}

var _ = inlineGenericBodies
