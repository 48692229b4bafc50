package eventtime

import (
	"time"

	"github.com/pipegen/pipegen"
	"github.com/pipegen/pipegen/runtime/internal/fault"
)

// ProcessContext is the pipegen.Context a process operator's functions get:
// the key being processed, the record's event time, the operator's event
// time, its timers and its side outputs. One per subtask, reused for every
// call.
type ProcessContext[K comparable] struct {
	name    string
	timers  Timers[K]
	key     K
	ts      int64 // event time of the record (or the timer) of the call
	wm      int64
	fired   pipegen.TimeDomain // of the call
	firing  pipegen.TimeDomain // of the timers being run
	cleared bool
	// keyless is set in a call of the broadcast function, which has no
	// key: no timers, no keyed state.
	keyless bool
	// onTimer is set when the operator has an on-timer callback; timed
	// when its records have event time.
	onTimer, timed bool
	// output sends a value to a side output: made by the generated code,
	// nil when the compiler found no calls of Output.
	output func(name string, v any)
	// svc is timers when it is a TimerService. aux is a copy of the aux
	// word of the call's key's state entry while in is set (BeginIn,
	// BeginTimerIn): the timers are then registered with it, found
	// without a lookup, and the caller writes it back to the entry after
	// the call (Aux). A copy, not a pointer to the word: a pointer stored
	// here at every call was a write barrier while the garbage collector
	// marks (1% of q4's CPU).
	svc *TimerService[K]
	aux uint64
	in  bool
}

var _ pipegen.Context = (*ProcessContext[string])(nil)

// NewProcessContext makes the context of a subtask of process operator
// name; onTimer says whether it has an on-timer callback, timed whether its
// records have event time.
func NewProcessContext[K comparable](name string, timers Timers[K], onTimer, timed bool) *ProcessContext[K] {
	svc, _ := timers.(*TimerService[K])
	return &ProcessContext[K]{name: name, timers: timers, svc: svc, wm: MinTime, ts: MinTime, onTimer: onTimer, timed: timed}
}

// SetOutput sets the function that Output calls: the generated switch over
// the operator's side outputs.
func (c *ProcessContext[K]) SetOutput(f func(name string, v any)) { c.output = f }

// Begin prepares the context for a call of the process function about key
// k, for a record of event time ts (MinTime without event time).
func (c *ProcessContext[K]) Begin(k K, ts int64) {
	c.key, c.ts, c.fired = k, ts, pipegen.NoTimer
	c.cleared, c.keyless = false, false
	c.in = false
}

// BeginIn is Begin for a key whose state entry has aux word aux
// (state.Ref), where the operator's TimerService keeps the key's timers
// (TimerService.KeepWith). After the call, the entry's word is to be set
// to Aux.
func (c *ProcessContext[K]) BeginIn(k K, ts int64, aux uint64) {
	c.Begin(k, ts)
	c.aux, c.in = aux, true
}

// Aux is the aux word of the call's key's state entry (BeginIn,
// BeginTimerIn) after the call: the timers it registered may have given
// the key a record of timers.
func (c *ProcessContext[K]) Aux() uint64 { return c.aux }

// BeginBroadcast prepares the context for a call of the broadcast
// function, for a record of event time ts: a call without a key.
func (c *ProcessContext[K]) BeginBroadcast(ts int64) {
	var zero K
	c.key, c.ts, c.fired = zero, ts, pipegen.NoTimer
	c.cleared, c.keyless = false, true
	c.in = false
}

// keyed fails the job when the call has no key: what timers and Clear need.
func (c *ProcessContext[K]) keyed(what string) {
	if c.keyless {
		fault.Abortf("operators.%s: %s in the function of the broadcast input, which runs for no key: timers and state belong to a key; set them in the keyed input's function or in on-timer", c.name, what)
	}
}

// Firing says which timers are about to run: processing-time ones (on a
// tick) or event-time ones (when the watermark moves).
func (c *ProcessContext[K]) Firing(processing bool) {
	c.firing = pipegen.EventTime
	if processing {
		c.firing = pipegen.ProcessingTime
	}
}

// BeginTimer prepares the context for a call of on-timer about key k, for
// a timer at time at of the domain Firing set.
func (c *ProcessContext[K]) BeginTimer(k K, at int64) {
	c.key, c.ts, c.fired = k, at, c.firing
	c.cleared, c.keyless = false, false
	c.in = false
}

// BeginTimerIn is BeginTimer for a key whose state entry has aux word
// aux, as BeginIn.
func (c *ProcessContext[K]) BeginTimerIn(k K, at int64, aux uint64) {
	c.BeginTimer(k, at)
	c.aux, c.in = aux, true
}

// register and remove set and delete a timer of the call's key.
func (c *ProcessContext[K]) register(at int64, processing bool) {
	if c.in && c.svc != nil {
		c.svc.RegisterIn(c.key, &c.aux, at, processing)
		return
	}
	c.timers.Register(c.key, at, processing)
}

func (c *ProcessContext[K]) remove(at int64, processing bool) {
	if c.in && c.svc != nil {
		c.svc.DeleteIn(c.key, &c.aux, at, processing)
		return
	}
	c.timers.Delete(c.key, at, processing)
}

// EventTime is the event time of what the current call emits: its
// record's, or its timer's.
func (c *ProcessContext[K]) EventTime() int64 { return c.ts }

// Cleared reports whether the call asked to drop its key's state.
func (c *ProcessContext[K]) Cleared() bool { return c.cleared }

// SetWatermark moves the operator's event time.
func (c *ProcessContext[K]) SetWatermark(w int64) { c.wm = w }

// Timestamp is the event time of the call's record, or its timer's time;
// the zero time when there is none.
func (c *ProcessContext[K]) Timestamp() time.Time {
	if c.ts == MinTime {
		return time.Time{}
	}
	return MillisTime(c.ts)
}

// Watermark is the operator's event-time watermark (the zero time before
// the first one).
func (c *ProcessContext[K]) Watermark() time.Time {
	if c.wm == MinTime {
		return time.Time{}
	}
	return MillisTime(c.wm)
}

// Fired is the kind of timer the call is for: NoTimer in the process
// function.
func (c *ProcessContext[K]) Fired() pipegen.TimeDomain { return c.fired }

// TimerAt registers an event-time timer for the current key.
func (c *ProcessContext[K]) TimerAt(t time.Time) {
	c.keyed("TimerAt")
	switch {
	case !c.onTimer:
		fault.Abortf("operators.%s: TimerAt without an on-timer callback: the timer could never run; add `on-timer:` to the operator", c.name)
	case !c.timed:
		fault.Abortf("operators.%s: TimerAt on records without event time: the watermark never reaches it; add `timestamps:` to the source, or use ProcessingTimerAt", c.name)
	}
	c.register(t.UnixMilli(), false)
}

// ProcessingTimerAt registers a processing-time timer for the current key.
// Processing-time timers still due when the input ends do not run.
func (c *ProcessContext[K]) ProcessingTimerAt(t time.Time) {
	c.keyed("ProcessingTimerAt")
	if !c.onTimer {
		fault.Abortf("operators.%s: ProcessingTimerAt without an on-timer callback: the timer could never run; add `on-timer:` to the operator", c.name)
	}
	c.register(t.UnixMilli(), true)
}

// DeleteTimer deletes the current key's event-time timer at t.
func (c *ProcessContext[K]) DeleteTimer(t time.Time) {
	c.keyed("DeleteTimer")
	c.remove(t.UnixMilli(), false)
}

// DeleteProcessingTimer deletes the current key's processing-time timer
// at t.
func (c *ProcessContext[K]) DeleteProcessingTimer(t time.Time) {
	c.keyed("DeleteProcessingTimer")
	c.remove(t.UnixMilli(), true)
}

// Output sends v to side output name.
func (c *ProcessContext[K]) Output(name string, v any) {
	if c.output == nil {
		fault.Abortf("operators.%s: Output(%q, ...): the compiler found no call of Output in the operator's functions, so it has no side outputs; call ctx.Output with a constant name in them, or in a function of their package that they call", c.name, name)
	}
	c.output(name, v)
}

// Clear drops the current key's state once the call returns.
func (c *ProcessContext[K]) Clear() {
	c.keyed("Clear")
	c.cleared = true
}
