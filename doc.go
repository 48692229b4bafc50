// Package pipegen holds the types that user functions of a pipeline receive
// from the runtime, such as Window.
//
// pipegen itself is a compiler: `pipegen build pipeline.yaml` turns a
// pipeline into one Go program. See the README and docs/ for the manual;
// the compiler's command line is documented in cmd/pipegen.
package pipegen

import "time"

// Window is the window a windowed aggregate's result belongs to: the
// records with event times in [Start, End).
type Window struct {
	Start time.Time
	End   time.Time
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
