package eventtime

import (
	"testing"
	"unsafe"
)

// TestPrefault checks that prefault writes the zero value into every page
// of the unused capacity, and nothing else: the records within the length
// and the rest of the capacity stay as they were.
func TestPrefault(t *testing.T) {
	type rec struct {
		p *int
		a [5]int64
	} // 48 bytes: records straddle pages
	x := 7
	all := make([]rec, 1000, 200000)
	full := all[:cap(all)]
	for i := range full {
		full[i] = rec{p: &x, a: [5]int64{int64(i)}}
	}
	prefault(all)
	for i := range all {
		if full[i].p != &x || full[i].a[0] != int64(i) {
			t.Fatalf("record %d within the length changed: %+v", i, full[i])
		}
	}
	page := func(i int) uintptr { return uintptr(unsafe.Pointer(&full[i])) / osPage }
	size := int(unsafe.Sizeof(rec{}))
	written := map[uintptr]bool{} // pages holding a byte of a zeroed record
	for i := len(all); i < cap(all); i++ {
		switch r := full[i]; {
		case r == rec{}:
			written[page(i)] = true
			written[(uintptr(unsafe.Pointer(&full[i]))+uintptr(size)-1)/osPage] = true
		case r.p != &x || r.a[0] != int64(i):
			t.Fatalf("record %d of the tail is neither zeroed nor left as it was: %+v", i, r)
		}
	}
	first, last := page(len(all)), (uintptr(unsafe.Pointer(&full[cap(all)-1]))+uintptr(size)-1)/osPage
	for pg := first; pg <= last; pg++ {
		if !written[pg] {
			t.Fatalf("page %d of %d..%d of the tail was not written", pg, first, last)
		}
	}
}
