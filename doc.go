// Package pipegen holds the types that user functions of a pipeline receive
// from the runtime, such as Window.
//
// pipegen itself is a compiler: `pipegen build pipeline.yaml` turns a
// pipeline into one Go program. See the README and docs/ for the manual;
// the compiler's command line is documented in cmd/pipegen.
package pipegen

import "time"

// Window is the window a windowed aggregate's result belongs to: the
// records with event times in [Start, End), and which firing of the
// window the result is.
type Window struct {
	Start time.Time
	End   time.Time
	// Firing tells a final result from an early one: OnTime when the
	// window closed, Early for a firing of a trigger before that, Late for
	// an update by a record within the allowed lateness.
	Firing Firing
}

// Firing says which firing of its window a result is. A downstream upsert
// sink keeps, per key and window, the last result it got; Final tells it
// whether more may come.
type Firing uint8

// The firings of a window.
const (
	// OnTime is the firing when the window closes (the watermark, or in
	// processing time the clock, reaches its end): its final result,
	// unless records within the allowed lateness update it.
	OnTime Firing = iota
	// Early is a firing of a trigger before the window closes: more
	// results of the window follow.
	Early
	// Late is a firing for a record within the allowed lateness, after
	// the window closed: it replaces the window's result.
	Late
)

// Final reports whether the result is the window's result as of its
// closing or later (OnTime or Late), not an early one.
func (f Firing) Final() bool { return f != Early }

func (f Firing) String() string {
	switch f {
	case OnTime:
		return "on-time"
	case Early:
		return "early"
	case Late:
		return "late"
	}
	return "firing(" + string(rune('0'+f)) + ")"
}

// Context is what a process operator's functions get besides the key, the
// state and the record: the operator's event-time clock and its timers.
type Context interface {
	// Watermark is the operator's current event-time watermark: no record
	// at or before it is expected any more.
	Watermark() time.Time
	// TimerAt registers an event-time timer for the current key: on-timer
	// runs once the watermark reaches t. Registering the same time twice
	// makes one timer.
	TimerAt(t time.Time)
	// ProcessingTimerAt registers a processing-time timer for the current
	// key: on-timer runs once the wall clock reaches t.
	ProcessingTimerAt(t time.Time)
	// Clear drops the current key's state after this call returns.
	Clear()
}
