package runtime

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
// inline them all. A type instantiated in this package (genericBodies)
// has all its methods compiled here, with their helpers inlined, and
// this package's export data then carries the helpers' bodies: an
// instance of the type is enough, no call is needed (go1.26; the
// interval join's subSat stayed a call until its type was listed).
// TestGeneratedCodeInlines (golden) checks the helpers that run per
// record or per window.
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

// genericBodies are instances of the generic types whose methods, in
// generated code, call plain helpers per record or per window (above).
// An instance here has all its methods compiled with this package, and
// their helpers inlined, which puts the helpers' bodies into this
// package's export data; nothing reads the values.
var genericBodies = []any{
	(*WindowState[int64, int64])(nil), // sliced and sliding windows; Capture's WindowCapture.Encode
	(*IntervalJoin[int64, int64, int64])(nil),
	(*Out[int64])(nil),   // the key group of every record sent by key
	(*Inbox[int64])(nil), // the wait for a batch
}

var _ = genericBodies
