package runtime

import (
	"time"

	"github.com/pipegen/pipegen"
	"github.com/pipegen/pipegen/runtime/internal/eventtime"
)

// Windows with early firings (package eventtime, trigger.go).

type (
	CountWindows[K comparable, T, A any]  = eventtime.CountWindows[K, T, A]
	Trigger                               = eventtime.Trigger
	TriggerAcc[A any]                     = eventtime.TriggerAcc[A]
	TriggeredWindows[K comparable, A any] = eventtime.TriggeredWindows[K, A]
)

// NewTriggeredWindows makes the open windows of a keyed window operator
// with a trigger; emit gets every result with its firing.
func NewTriggeredWindows[K comparable, A any](a WindowAssigner, lateness int64, merge func(dst, src *A), t Trigger, emit func(k K, w Window, f pipegen.Firing, acc *A)) *TriggeredWindows[K, A] {
	return eventtime.NewTriggeredWindows[K](a, lateness, merge, t, emit)
}

// UserWindowFiring is the window a result function sees, with the firing
// the result is.
func UserWindowFiring(w Window, f pipegen.Firing) pipegen.Window {
	u := eventtime.UserWindow(w)
	u.Firing = f
	return u
}

// SessionGap is a session gap function's result in milliseconds, for
// WindowState.AddGap; a gap under 1ms fails the job, naming fn.
func SessionGap(d time.Duration, fn string) int64 {
	if d < time.Millisecond {
		Abortf("%s returned a session gap of %s: a gap must be at least 1ms", fn, d)
	}
	return d.Milliseconds()
}

// NewCountWindows makes the open count windows of a keyed window operator.
func NewCountWindows[K comparable, T, A any](size, every uint64, add func(acc *A, r T), emit func(k K, acc *A, ts int64)) *CountWindows[K, T, A] {
	return eventtime.NewCountWindows[K](size, every, add, emit)
}
