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
// their packages' own callers inlined them. Generic types (Inbox, Out,
// WindowState, the sources and sinks) are not concerned: their bodies are
// exported to be instantiated.
//
// inlineBodies calls the methods that generated code calls per record, per
// window or per watermark (Latest: per record sent to a dead letter), so
// that their bodies are in the export data; it never runs.
// TestGeneratedCodeInlines (golden) fails when one of those a pipeline
// with event time and windows calls is a call again.
func inlineBodies(c *SourceCtl, w *Watermarks, t *Task, m *Meter, win Window) {
	c.Poll()
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
