package state

// Delta says what a snapshot of keyed state that lists its changes
// writes: every entry (Full), or the changes after epoch Since, on top of
// the checkpoint that ended it. The lists of changes of epochs up to Keep
// are dropped: no later delta builds on them. The event-time engines'
// timers and windows take it (eventtime.TimerService.SnapshotDelta,
// WindowState.SnapshotDelta); Memory.Capture takes the same three.
type Delta struct {
	Full        bool
	Since, Keep uint64
	// Canonical asks for the form that savepoints hold, whatever the
	// state keeps in memory: sliding windows kept in slices write their
	// windows whole (eventtime.WindowState). It comes with Full.
	Canonical bool
}
