package eventtime

import (
	"fmt"

	"github.com/pipegen/pipegen"
	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/state"
)

// TriggerAcc is what a window with a trigger keeps per key and window: the
// user's accumulator and the number of records added to it since the
// window last fired.
type TriggerAcc[A any] struct {
	N   uint64
	Acc A
}

// Trigger says when a window fires before it closes (early firings, as
// Flink's CountTrigger and ContinuousEventTimeTrigger or
// ContinuousProcessingTimeTrigger do) and what a firing leaves in it.
type Trigger struct {
	// Count fires a key's window early once Count records were added
	// since it last fired; 0 for never.
	Count uint64
	// Every fires early, at every multiple of Every milliseconds of event
	// time (the watermark reaches it) or of processing time (the clock
	// does, with Processing), each window that got records since it last
	// fired; 0 for never.
	Every      int64
	Processing bool
	// Discard empties a window's accumulator after each firing (Flink's
	// PurgingTrigger): every result holds the records since the previous
	// one, and a firing without new records emits nothing. Otherwise
	// (accumulate) each result holds every record of the window so far.
	Discard bool
}

// Validate reports a trigger that never fires early.
func (t Trigger) Validate() error {
	if t.Count == 0 && t.Every <= 0 {
		return fmt.Errorf("a trigger needs a count or an interval")
	}
	return nil
}

// TriggeredWindows is the state of one subtask of a windowed aggregate with
// a trigger: a WindowState whose windows also fire early, and emit
// every result with its firing (pipegen.Early, OnTime or Late).
//
// Early firings of a window happen only before it closes. A count firing
// happens as the record that makes the count arrives, after it is added.
// An interval firing of event time happens when the watermark (Advance)
// reaches or passes a multiple of Every, before the windows that this
// watermark closes fire on time; the windows it closes do not fire early
// too. Windows fire early in the order they would close: ascending end,
// then creation. An interval firing of processing time happens at the
// first Tick at or after a multiple of Every, before Advance.
//
// In accumulate mode every firing emits the window's accumulator; the
// on-time firing always emits, so that every window ends with a final
// result. In discard mode each firing emits what was added since the
// previous one and then empties the accumulator; a firing without new
// records emits nothing.
type TriggeredWindows[K comparable, A any] struct {
	ws   *WindowState[K, TriggerAcc[A]]
	trig Trigger
	emit func(k K, w Window, f pipegen.Firing, acc *A)
	// lastTick is the processing time of the previous Tick, 0 before the
	// first.
	lastTick int64
	open     []openWindow[K, TriggerAcc[A]]

	// Bound once, so that adding a record allocates no closure.
	cur    func(*A)
	addFn  func(*TriggerAcc[A])
	eachFn func(k K, w Window, fired bool, a *TriggerAcc[A])
	fireFn func(k K, w Window, a *TriggerAcc[A])
}

// NewTriggeredWindows returns empty windows with trigger t, which call emit
// for every result (acc is valid only during the call, which must not call
// the windows). merge merges two sessions' accumulators (sessions only).
// It panics on an invalid assigner or trigger: the compiler checks them.
func NewTriggeredWindows[K comparable, A any](a WindowAssigner, lateness int64, merge func(dst, src *A), t Trigger, emit func(k K, w Window, f pipegen.Firing, acc *A)) *TriggeredWindows[K, A] {
	if err := t.Validate(); err != nil {
		panic(err)
	}
	var m func(dst, src *TriggerAcc[A])
	if merge != nil {
		m = func(dst, src *TriggerAcc[A]) {
			dst.N += src.N
			merge(&dst.Acc, &src.Acc)
		}
	}
	tw := &TriggeredWindows[K, A]{ws: NewWindowState[K](a, lateness, m), trig: t, emit: emit}
	tw.addFn = func(a *TriggerAcc[A]) {
		a.N++
		tw.cur(&a.Acc)
	}
	tw.eachFn = tw.each
	tw.fireFn = tw.onTime
	return tw
}

// Len is the number of open windows, counted per key.
func (t *TriggeredWindows[K, A]) Len() int { return t.ws.Len() }

// Watermark is the largest watermark Advance has seen.
func (t *TriggeredWindows[K, A]) Watermark() int64 { return t.ws.Watermark() }

// Add adds a record of key k at time ts, like WindowState.Add: add folds
// it into each window's accumulator. A window that had closed and takes
// the record within the allowed lateness emits at once (pipegen.Late); one
// that reaches the trigger's count emits early. It returns false when the
// record is late for all its windows.
func (t *TriggeredWindows[K, A]) Add(k K, ts, inputWatermark int64, add func(acc *A)) bool {
	t.cur = add
	ok := t.ws.add(k, ts, inputWatermark, t.addFn, nil, nil, t.eachFn)
	t.cur = nil
	return ok
}

// AddGap is Add for sessions whose gap comes with each record (see
// WindowState.AddGap).
func (t *TriggeredWindows[K, A]) AddGap(k K, ts, gap, inputWatermark int64, add func(acc *A)) bool {
	t.cur = add
	ok := t.ws.addGap(k, ts, gap, inputWatermark, t.addFn, nil, t.eachFn)
	t.cur = nil
	return ok
}

func (t *TriggeredWindows[K, A]) each(k K, w Window, fired bool, a *TriggerAcc[A]) {
	TriggerOnRecord(&t.trig, k, w, fired, a, t.emit)
}

func (t *TriggeredWindows[K, A]) fire(k K, w Window, f pipegen.Firing, a *TriggerAcc[A]) {
	FireTrigger(&t.trig, k, w, f, a, t.emit)
}

// TriggerOnRecord fires window w of key k, which just got a record, if
// trigger tr says so: late when it fired already, early when its records
// since the last firing reach tr's count (FireTrigger). Both backends'
// triggered windows call it for each window a record lands in.
func TriggerOnRecord[K comparable, A any](tr *Trigger, k K, w Window, fired bool, a *TriggerAcc[A], emit func(k K, w Window, f pipegen.Firing, acc *A)) {
	switch {
	case fired:
		FireTrigger(tr, k, w, pipegen.Late, a, emit)
	case tr.Count > 0 && a.N >= tr.Count:
		FireTrigger(tr, k, w, pipegen.Early, a, emit)
	}
}

// FireTrigger emits window w's result with firing f, unless in discard
// mode nothing was added since the previous firing, and starts counting
// again: what a firing does to a window with trigger tr, on both
// backends.
func FireTrigger[K comparable, A any](tr *Trigger, k K, w Window, f pipegen.Firing, a *TriggerAcc[A], emit func(k K, w Window, f pipegen.Firing, acc *A)) {
	if tr.Discard {
		if a.N == 0 {
			return
		}
		emit(k, w, f, &a.Acc)
		var zero A
		a.Acc = zero
	} else {
		emit(k, w, f, &a.Acc)
	}
	a.N = 0
}

// onTime fires a window that closes. In accumulate mode it always emits:
// the on-time result is the final one, even when it repeats the last
// early one.
func (t *TriggeredWindows[K, A]) onTime(k K, w Window, a *TriggerAcc[A]) {
	t.fire(k, w, pipegen.OnTime, a)
}

// Advance moves the combined watermark to wm: first, when wm reaches a
// multiple of an event-time interval that the previous watermark had not,
// the windows that got records since they last fired and that wm does not
// close fire early; then the windows wm closes fire on time (see
// WindowState.Advance).
func (t *TriggeredWindows[K, A]) Advance(wm int64) {
	if t.trig.EarlyAtWatermark(t.ws.Watermark(), wm) {
		t.early(wm)
	}
	t.ws.Advance(wm, t.fireFn)
}

// Tick is a look at the clock, now in Unix milliseconds: when it has
// reached a multiple of a processing-time interval since the previous
// Tick, the windows that got records since they last fired and that do
// not close at now fire early. The first Tick only starts the clock.
func (t *TriggeredWindows[K, A]) Tick(now int64) {
	if !t.trig.Processing || t.trig.Every <= 0 {
		return
	}
	if t.trig.EarlyAtTick(t.lastTick, now) {
		t.early(now)
	}
	t.lastTick = max(t.lastTick, now)
}

// EarlyAtWatermark reports whether the watermark's move from prev to wm
// reaches a multiple of an event-time interval that prev had not (or is
// the first watermark): the windows wm does not close then fire early.
// Both backends' triggered windows ask it.
func (t Trigger) EarlyAtWatermark(prev, wm int64) bool {
	e := t.Every
	return e > 0 && !t.Processing && wm > prev && (prev == MinTime || floorDiv(wm, e) > floorDiv(prev, e))
}

// EarlyAtTick reports whether a look at the clock at now, after one at
// last (0: none yet, and the first look only starts the clock), reaches
// a multiple of a processing-time interval.
func (t Trigger) EarlyAtTick(last, now int64) bool {
	e := t.Every
	return e > 0 && t.Processing && last != 0 && floorDiv(now, e) > floorDiv(last, e)
}

// early fires early every open window with records since its last firing
// that does not close at time at.
func (t *TriggeredWindows[K, A]) early(at int64) {
	t.open = t.ws.openWindows(t.open)
	for _, o := range t.open {
		if o.acc.N > 0 && o.w.MaxTimestamp() > at {
			t.fire(o.k, o.w, pipegen.Early, o.acc)
		}
	}
	clear(t.open)
	t.open = t.open[:0]
}

// Snapshot writes every open window, as WindowState.Snapshot does, each
// accumulator with its count of records since the last firing (encA
// writes a TriggerAcc).
func (t *TriggeredWindows[K, A]) Snapshot(sec *state.Sections, keyGroup func(K) int, encK func(*codec.Writer, K), encA func(*codec.Writer, *TriggerAcc[A])) error {
	return t.ws.Snapshot(sec, keyGroup, encK, encA)
}

// Restore adds the windows of one key group's section, as
// WindowState.Restore does.
func (t *TriggeredWindows[K, A]) Restore(section []byte, decK func(*codec.Reader) K, decA func(*codec.Reader) *TriggerAcc[A]) error {
	return t.ws.Restore(section, decK, decA)
}

// floorDiv is a / b rounded down, for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
