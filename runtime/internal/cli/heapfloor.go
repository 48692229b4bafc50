package cli

import (
	"os"
	"runtime"
	"runtime/debug"
)

// floorSize is the heap that keepHeapFloor sets aside: the collector's
// goal is then at least twice this (at GOGC's default of 100). 16 MiB
// saved a little more on long runs and cost 6% of a run of 0.4 s (the
// first touch of each page of a larger heap is a fault).
const floorSize = 8 << 20

// floor is the memory set aside; it is never read or written.
var floor []byte

// keepHeapFloor keeps the collector from running over and over on a small
// heap. A job whose state is small but whose records allocate (strings
// decoded from JSON lines, Kafka records) has a live heap of a megabyte
// or two, so Go's heap goal is its minimum of 4 MiB and a collection runs
// every few milliseconds: Nexmark q0 read from JSON lines ran 308
// collections in 1.6 s at parallelism 2, and on two busy cores each took
// its share of a core from the job. A slice of floorSize bytes that
// nothing points into costs the collector nothing to mark, and its pages,
// fresh from the system at start, are never touched, so they take no
// memory: it only counts in the heap the goal is reckoned from (the goal
// becomes about 2*(live + floorSize)). Someone who set GOGC or GOMEMLIMIT
// chose their own trade of memory against collections; they get it.
//
// Set aside at once, the floor would exceed Go's first heap goal (4 MiB)
// and start a collection of a heap that holds nothing else: 3.5 ms of
// CPU, a sixth of a generated program's start. So the collector's
// percentage is startGOGC until the first collection, whose heap minimum
// (4 MiB times startGOGC/100) is above the floor: a job that allocates
// little never collects, and one that does collects first at 11-16 MiB,
// after which the percentage is Go's again (restoreGOGC) and the goal
// about twice the live heap with the floor.
func keepHeapFloor() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	gogc := debug.SetGCPercent(startGOGC)
	floor = make([]byte, floorSize)
	// A cleanup of an object that nothing keeps runs after the first
	// collection. The object holds a pointer so that it is not a tiny
	// allocation, which shares its block with others that may live on.
	runtime.AddCleanup(&firstCollection{}, restoreGOGC, gogc)
}

// startGOGC is the collector's percentage until the first collection.
const startGOGC = 400

type firstCollection struct{ _ *byte }

// restoreGOGC sets the collector's percentage back to gogc, unless
// someone set another one meanwhile.
func restoreGOGC(gogc int) {
	if old := debug.SetGCPercent(gogc); old != startGOGC {
		debug.SetGCPercent(old)
	}
}
