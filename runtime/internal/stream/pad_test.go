package stream

import (
	"testing"
	"unsafe"
)

// TestPaddedOwnsItsCacheLines checks that the slices padded makes, made one
// after the other as the Outs of a stage's subtasks make their arrays of
// batch headers, are at least a cache line apart: no cache line holds
// elements of two of them, whatever the allocator does.
func TestPaddedOwnsItsCacheLines(t *testing.T) {
	for _, n := range []int{1, 2, 3, 8} {
		var all [][][]int32
		for range 20 {
			s := padded[[]int32](n)
			if len(s) != n || cap(s) != n {
				t.Fatalf("padded(%d) has len %d and cap %d, want both %d", n, len(s), cap(s), n)
			}
			all = append(all, s)
		}
		for i := 1; i < len(all); i++ {
			a, b := span(all[i-1]), span(all[i])
			if a[0] > b[0] {
				a, b = b, a
			}
			if gap := b[0] - a[1]; gap < 64 {
				t.Fatalf("two arrays of %d batch headers made one after the other are %d bytes apart, want at least 64", n, gap)
			}
		}
	}
}

// span is the addresses of s's elements, from the first's to the end of the
// last.
func span(s [][]int32) [2]uintptr {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	return [2]uintptr{start, start + uintptr(len(s))*unsafe.Sizeof(s[0])}
}
