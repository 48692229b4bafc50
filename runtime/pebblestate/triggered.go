package pebblestate

import (
	"github.com/pipegen/pipegen"
	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
	"github.com/pipegen/pipegen/runtime/state"
)

// Triggered are the windows of one subtask of a windowed aggregate with a
// trigger on the pebble backend, with the semantics of
// eventtime.TriggeredWindows (which the memory backend uses): Windows or
// Sessions whose accumulators are eventtime.TriggerAcc, the user's
// accumulator and the count of records since the window last fired, so
// that the trigger's state is in the store with its window. An early
// firing of an interval reads the windows that have not fired in their
// timers' order, which is the order they would close in.
type Triggered[K comparable, A any] struct {
	ws   triggerable[K, eventtime.TriggerAcc[A]]
	trig eventtime.Trigger
	emit func(k K, w eventtime.Window, f pipegen.Firing, acc *A)
	// lastTick is the processing time of the previous Tick, 0 before the
	// first (not in checkpoints, as on memory: the first Tick after a
	// restore only starts the clock).
	lastTick int64

	// Bound once, so that adding a record allocates no closure.
	cur     func(*A)
	addFn   func(*eventtime.TriggerAcc[A])
	eachFn  func(k K, w eventtime.Window, fired bool, a *eventtime.TriggerAcc[A])
	fireFn  func(k K, w eventtime.Window, a *eventtime.TriggerAcc[A])
	earlyFn func(k K, w eventtime.Window, a *eventtime.TriggerAcc[A])
}

// triggerable is what Triggered needs of Windows and Sessions.
type triggerable[K comparable, A any] interface {
	add(k K, ts, gap, inputWatermark int64, add func(acc *A), each func(k K, w eventtime.Window, fired bool, acc *A)) bool
	Advance(wm int64, fire func(k K, w eventtime.Window, acc *A))
	Watermark() int64
	unfired(at int64, yield func(k K, w eventtime.Window, acc *A))
	snapshot(s *checkpoint.Snapshot, node int)
}

func (s *Windows[K, A]) snapshot(sn *checkpoint.Snapshot, node int) { Snapshot(sn, node, s.store) }

func (s *Sessions[K, A]) snapshot(sn *checkpoint.Snapshot, node int) { Snapshot(sn, node, s.store) }

// trigWindows adapts Windows to triggerable: tumbling and sliding windows
// take no gap.
type trigWindows[K comparable, A any] struct{ *Windows[K, A] }

func (w trigWindows[K, A]) add(k K, ts, _, inputWatermark int64, add func(acc *A), each func(k K, w eventtime.Window, fired bool, acc *A)) bool {
	return w.Windows.add(k, ts, inputWatermark, add, nil, each)
}

// trigSessions adapts Sessions to triggerable.
type trigSessions[K comparable, A any] struct{ *Sessions[K, A] }

func (s trigSessions[K, A]) add(k K, ts, gap, inputWatermark int64, add func(acc *A), each func(k K, w eventtime.Window, fired bool, acc *A)) bool {
	return s.Sessions.add(k, ts, gap, inputWatermark, add, nil, each)
}

// OpenTriggered opens the windows with trigger t of subtask t of the
// windowed node, empty or restored from the checkpoint the job resumes
// from (of either backend), with assigner a and allowed lateness in
// milliseconds; merge merges two sessions' accumulators (sessions only),
// emit is called for every result (acc is valid only during the call,
// which must not call the windows), c writes the node's keys and
// TriggerAccs. It panics on an invalid assigner or trigger: the compiler
// checks them.
func OpenTriggered[K comparable, A any](task *checkpoint.Task, node int, a eventtime.WindowAssigner, lateness int64, merge func(dst, src *A), t eventtime.Trigger, emit func(k K, w eventtime.Window, f pipegen.Firing, acc *A), c *state.Codec[K, eventtime.TriggerAcc[A]]) *Triggered[K, A] {
	if err := t.Validate(); err != nil {
		panic(err)
	}
	tw := &Triggered[K, A]{trig: t, emit: emit}
	if a.Kind == eventtime.Session {
		m := func(dst, src *eventtime.TriggerAcc[A]) {
			dst.N += src.N
			merge(&dst.Acc, &src.Acc)
		}
		tw.ws = trigSessions[K, eventtime.TriggerAcc[A]]{OpenSessions(task, node, a, lateness, m, c)}
	} else {
		tw.ws = trigWindows[K, eventtime.TriggerAcc[A]]{OpenWindows(task, node, a, lateness, c)}
	}
	tw.addFn = func(a *eventtime.TriggerAcc[A]) {
		a.N++
		tw.cur(&a.Acc)
	}
	tw.eachFn = tw.each
	tw.fireFn = func(k K, w eventtime.Window, a *eventtime.TriggerAcc[A]) { tw.fire(k, w, pipegen.OnTime, a) }
	tw.earlyFn = func(k K, w eventtime.Window, a *eventtime.TriggerAcc[A]) {
		if a.N > 0 {
			tw.fire(k, w, pipegen.Early, a)
		}
	}
	return tw
}

// SnapshotTriggered adds the windows w of node to the subtask's snapshot
// s: a checkpoint of their store (Snapshot).
func SnapshotTriggered[K comparable, A any](s *checkpoint.Snapshot, node int, w *Triggered[K, A]) {
	w.ws.snapshot(s, node)
}

// Watermark is the largest watermark Advance has seen.
func (t *Triggered[K, A]) Watermark() int64 { return t.ws.Watermark() }

// Add adds a record of key k at time ts, as TriggeredWindows.Add does: a
// window that had closed and takes the record within the allowed lateness
// emits at once (pipegen.Late); one that reaches the trigger's count
// emits early. It returns false when the record is late for all its
// windows.
func (t *Triggered[K, A]) Add(k K, ts, inputWatermark int64, add func(acc *A)) bool {
	return t.AddGap(k, ts, 0, inputWatermark, add)
}

// AddGap is Add for sessions whose gap comes with each record.
func (t *Triggered[K, A]) AddGap(k K, ts, gap, inputWatermark int64, add func(acc *A)) bool {
	t.cur = add
	ok := t.ws.add(k, ts, gap, inputWatermark, t.addFn, t.eachFn)
	t.cur = nil
	return ok
}

func (t *Triggered[K, A]) each(k K, w eventtime.Window, fired bool, a *eventtime.TriggerAcc[A]) {
	eventtime.TriggerOnRecord(&t.trig, k, w, fired, a, t.emit)
}

func (t *Triggered[K, A]) fire(k K, w eventtime.Window, f pipegen.Firing, a *eventtime.TriggerAcc[A]) {
	eventtime.FireTrigger(&t.trig, k, w, f, a, t.emit)
}

// Advance moves the watermark to wm, as TriggeredWindows.Advance does:
// first the early firings of an event-time interval that wm reaches, then
// the windows wm closes fire on time.
func (t *Triggered[K, A]) Advance(wm int64) {
	if t.trig.EarlyAtWatermark(t.ws.Watermark(), wm) {
		t.ws.unfired(wm, t.earlyFn)
	}
	t.ws.Advance(wm, t.fireFn)
}

// Tick is a look at the clock, now in Unix milliseconds, as
// TriggeredWindows.Tick: the windows that do not close at now fire early
// when now reached a multiple of a processing-time interval since the
// previous Tick. The first Tick only starts the clock.
func (t *Triggered[K, A]) Tick(now int64) {
	if !t.trig.Processing || t.trig.Every <= 0 {
		return
	}
	if t.trig.EarlyAtTick(t.lastTick, now) {
		t.ws.unfired(now, t.earlyFn)
	}
	t.lastTick = max(t.lastTick, now)
}
