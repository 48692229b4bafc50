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
// state and the record: the record's event time, the operator's event-time
// clock, its timers and its side outputs. It is valid only during the call
// it is passed to.
type Context interface {
	// Timestamp is the event time of the record being processed; in
	// on-timer, the time of the timer that fired. The zero time for a
	// record without event time (no timestamps upstream).
	Timestamp() time.Time
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
	// DeleteTimer deletes the current key's event-time timer at t, if it
	// has one.
	DeleteTimer(t time.Time)
	// DeleteProcessingTimer deletes the current key's processing-time
	// timer at t, if it has one.
	DeleteProcessingTimer(t time.Time)
	// Fired tells on-timer which kind of timer fired: EventTime or
	// ProcessingTime; NoTimer in the process function.
	Fired() TimeDomain
	// Output sends v to the operator's side output name, which other nodes
	// read as `input: NODE.name`. The compiler finds the calls in the
	// operator's functions (and the functions of their package they
	// call): name must be a constant, and every call with one name must
	// pass one type, which is what the side output carries.
	Output(name string, v any)
	// Clear drops the current key's state after this call returns.
	Clear()
}

// TimeDomain is a kind of timer.
type TimeDomain int

// The time domains of Context.Fired.
const (
	// NoTimer: the call is not a timer's (the process function).
	NoTimer TimeDomain = iota
	// EventTime: an event-time timer fired (TimerAt), the watermark
	// reached it.
	EventTime
	// ProcessingTime: a processing-time timer fired (ProcessingTimerAt),
	// the wall clock reached it.
	ProcessingTime
)

// String names the domain.
func (d TimeDomain) String() string {
	switch d {
	case EventTime:
		return "event time"
	case ProcessingTime:
		return "processing time"
	}
	return "no timer"
}
