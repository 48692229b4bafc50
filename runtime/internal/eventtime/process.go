package eventtime

import (
	"time"

	"github.com/pipegen/pipegen"
	"github.com/pipegen/pipegen/runtime/internal/fault"
)

// ProcessContext is the pipegen.Context a process operator's functions get:
// the key being processed, the operator's event time and its timers. One
// per subtask, reused for every call.
type ProcessContext[K comparable] struct {
	name    string
	timers  *TimerService[K]
	key     K
	wm      int64
	cleared bool
	// onTimer is set when the operator has an on-timer callback; timed
	// when its records have event time.
	onTimer, timed bool
}

var _ pipegen.Context = (*ProcessContext[string])(nil)

// NewProcessContext makes the context of a subtask of process operator
// name; onTimer says whether it has an on-timer callback, timed whether its
// records have event time.
func NewProcessContext[K comparable](name string, timers *TimerService[K], onTimer, timed bool) *ProcessContext[K] {
	return &ProcessContext[K]{name: name, timers: timers, wm: MinTime, onTimer: onTimer, timed: timed}
}

// Begin prepares the context for a call about key k.
func (c *ProcessContext[K]) Begin(k K) {
	c.key = k
	c.cleared = false
}

// Cleared reports whether the call asked to drop its key's state.
func (c *ProcessContext[K]) Cleared() bool { return c.cleared }

// SetWatermark moves the operator's event time.
func (c *ProcessContext[K]) SetWatermark(w int64) { c.wm = w }

// Watermark is the operator's event-time watermark (the zero time before
// the first one).
func (c *ProcessContext[K]) Watermark() time.Time {
	if c.wm == MinTime {
		return time.Time{}
	}
	return MillisTime(c.wm)
}

// TimerAt registers an event-time timer for the current key.
func (c *ProcessContext[K]) TimerAt(t time.Time) {
	switch {
	case !c.onTimer:
		fault.Abortf("operators.%s: TimerAt without an on-timer callback: the timer could never run; add `on-timer:` to the operator", c.name)
	case !c.timed:
		fault.Abortf("operators.%s: TimerAt on records without event time: the watermark never reaches it; add `timestamps:` to the source, or use ProcessingTimerAt", c.name)
	}
	c.timers.Register(c.key, t.UnixMilli(), false)
}

// ProcessingTimerAt registers a processing-time timer for the current key.
// Processing-time timers still due when the input ends do not run.
func (c *ProcessContext[K]) ProcessingTimerAt(t time.Time) {
	if !c.onTimer {
		fault.Abortf("operators.%s: ProcessingTimerAt without an on-timer callback: the timer could never run; add `on-timer:` to the operator", c.name)
	}
	c.timers.Register(c.key, t.UnixMilli(), true)
}

// Clear drops the current key's state once the call returns.
func (c *ProcessContext[K]) Clear() { c.cleared = true }
