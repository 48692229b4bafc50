package pages

import (
	"syscall"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// TestTouchFaultsIn: once Touch has touched fresh room, reading and then
// writing each of its elements, as a lookup before a fill or the
// collector's write barrier before a copy does, takes next to no page
// faults; untouched, each page would take two.
func TestTouchFaultsIn(t *testing.T) {
	faults := func() int64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return ru.Minflt
	}
	const n = 700_000 // 32 MiB of records, 8203 pages
	pages := int64(n * 48 / Size)
	s := make([]rec, 0, n)
	Touch(s)
	s = s[:n]
	x := 1
	before := faults()
	for i := range s {
		if s[i].p == nil {
			s[i].p = &x
		}
	}
	if got := faults() - before; got > pages/8 {
		t.Errorf("reading then writing %d touched pages took %d page faults, want next to none: Touch did not fault them in", pages, got)
	}
}
