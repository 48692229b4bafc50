// The race detector's shadow memory takes page faults of its own on
// every first access, which this test would count as the table's.

//go:build !race

package state

import (
	"syscall"
	"testing"
)

// TestTablePrefault: a large table's fresh slots take their page faults
// when it is made, each page once, so that filling it (a read of each
// slot, then a write) faults no more: a page first read is the system's
// shared page of zeros, and the write after it faults again and flushes
// the TLBs of the other processors.
func TestTablePrefault(t *testing.T) {
	faults := func() int64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return ru.Minflt
	}
	const size = 1 << 21 // 32 MiB of slots, 8192 pages
	pages := int64(size * 16 / 4096)
	var tab table[uint64, int]
	tab.alloc(size)
	before := faults()
	e := &entry[uint64, int]{}
	for i := range tab.slots {
		if tab.slots[i].e == nil { // the read a probe makes
			tab.slots[i] = slot[uint64, int]{h: uint64(i), e: e}
		}
	}
	if n := faults() - before; n > pages/8 {
		t.Errorf("filling a table of %d pages took %d page faults, want next to none: its pages were not faulted in when it was made", pages, n)
	}
}
