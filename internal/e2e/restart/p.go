// Package restart is the end-to-end test of restarts after a panic in user
// code: a reduce that panics once (or always, or hundreds of times), and a
// job that must recover from its newest checkpoint with exactly-once
// output, or give up and name the record, and must not keep anything of
// its failed attempts.
package restart

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
)

// Ev is one event: a key and an amount.
type Ev struct{ K, N int64 }

// Gen makes 100000 events over 10 keys.
func Gen(seq uint64) (Ev, bool) {
	if seq >= 100000 {
		return Ev{}, false
	}
	return Ev{K: int64(seq % 10), N: 1}, true
}

// Key keys an event by K.
func Key(e Ev) int64 { return e.K }

// Sum adds events up. When key 3 reaches 4000 it panics: always when the
// environment has PANIC=always, otherwise only the first time (a file
// named marker in the working directory remembers). With PANIC=soak it
// panics instead at every SOAK_EVERY-th call, SOAK_PANICS times in all,
// and writes what the process holds at each panic to a file named probe
// (see soak).
func Sum(a, b Ev) Ev {
	a.N += b.N
	if soakEvery > 0 {
		soak()
	}
	if a.K == 3 && a.N == 4000 {
		if os.Getenv("PANIC") == "always" {
			panic("boom")
		}
		if _, err := os.Stat("marker"); err != nil {
			os.WriteFile("marker", nil, 0o644)
			panic("boom")
		}
	}
	return a
}

// The soak's settings, read once: Sum reads them at every call.
var (
	soakEvery, soakPanics = soakSettings()
	soakCalls, soakDone   atomic.Int64
)

func soakSettings() (every, panics int64) {
	if os.Getenv("PANIC") != "soak" {
		return 0, 0
	}
	every, _ = strconv.ParseInt(os.Getenv("SOAK_EVERY"), 10, 64)
	panics, _ = strconv.ParseInt(os.Getenv("SOAK_PANICS"), 10, 64)
	return max(every, 1), panics
}

// soak panics at every soakEvery-th call until it has panicked
// soakPanics times. Before each panic it appends a line to the file probe:
// the panic's number, the process's goroutines, open file descriptors and
// live heap, so that a test can tell whether restarts
// pile up what their failed attempts left.
func soak() {
	if soakCalls.Add(1)%soakEvery != 0 {
		return
	}
	n := soakDone.Add(1)
	if n > soakPanics {
		return
	}
	// The live heap after a collection at every 100th panic only (-1 at
	// the others): the finalizer of an unreachable *os.File closes it, so
	// a collection at each would hide a file a failed attempt left open.
	fds, _ := os.ReadDir("/proc/self/fd")
	heap := int64(-1)
	if n%100 == 0 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		heap = int64(m.HeapAlloc)
	}
	f, err := os.OpenFile("probe", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		fmt.Fprintf(f, "%d %d %d %d\n", n, runtime.NumGoroutine(), len(fds), heap)
		f.Close()
	}
	panic("soak")
}
