// Command generics instantiates every generic type of pebblestate, as a
// generated program on the pebble backend does: TestNoPebbleGenerics
// compiles it and looks at what its package compiled.
package main

import (
	"github.com/pipegen/pipegen/runtime/pebblestate"
)

var (
	keyed     *pebblestate.Keyed[string, int]
	count     *pebblestate.CountWindows[string, int, int]
	interval  *pebblestate.IntervalJoin[string, int, int]
	mapState  *pebblestate.Map[string, string, int]
	sessions  *pebblestate.Sessions[string, int]
	timers    *pebblestate.Timers[string]
	triggered *pebblestate.Triggered[string, int]
	window    *pebblestate.WindowJoin[string, int, int]
	windows   *pebblestate.Windows[string, int]
)

func main() {
	keyed.Put("a", nil)
	timers.AdvanceProcessing(0, func(string, int64) {})
	mapState.Put("a", 1)
	pebblestate.Snapshot(nil, 0, keyed)
	pebblestate.SnapshotCountWindows(nil, 0, count)
	pebblestate.SnapshotIntervalJoin(nil, 0, interval)
	pebblestate.SnapshotSessions(nil, 0, sessions)
	pebblestate.SnapshotTriggered(nil, 0, triggered)
	pebblestate.SnapshotWindowJoin(nil, 0, window)
	pebblestate.SnapshotWindows(nil, 0, windows)
}
