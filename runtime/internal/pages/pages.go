// Package pages maps fresh memory in before it is read, and copies
// large arrays in pieces that the garbage collector can wait for.
//
// Memory fresh from the operating system is not mapped until it is
// touched. When the first touch of a page is a read, Linux maps the
// shared zero page read-only, and the first write after it is a second
// fault that must also flush the page's old mapping from the TLB of every
// core that runs the process (an interprocessor interrupt, which the
// writing core waits for). Reads come first where code looks a slot up
// before it fills it (a hash table, a key index), where the collector
// scans an array of pointers up to its capacity, and in the collector's
// write barrier, which reads every pointer slot of the destination before
// a copy writes it. A write as the first touch is one ordinary fault.
package pages

import "unsafe"

// Size is the smallest page the operating system maps memory in.
const Size = 4096

// Touch writes a zero byte into every page of the memory of s from its
// length to its capacity, which must be zero (unused room of a slice
// just made or grown), so that no page of it is first touched by a read.
//
// The writes are bytes, not elements: a store of an element that holds
// pointers runs the collector's write barrier while it marks, and the
// barrier reads the slot first. A zero byte over zero memory changes no
// value, pointer or not.
func Touch[T any](s []T) {
	size := unsafe.Sizeof(*new(T))
	room := uintptr(cap(s)-len(s)) * size
	if room == 0 {
		return
	}
	base := unsafe.Pointer(unsafe.SliceData(s[len(s):cap(s)]))
	// The first page may be shared with the elements before the room: a
	// write into it at base is a write into the room all the same.
	for off := uintptr(0); off < room; off += Size - (uintptr(base)+off)%Size {
		*(*byte)(unsafe.Add(base, off)) = 0
	}
}

// copyPiece is how many bytes Copy copies at a time: tens of
// microseconds at most.
const copyPiece = 64 << 10

// Copy is copy for large arrays, for a dst that does not overlap src,
// best with its pages touched first (Touch) when its elements hold
// pointers. Go copies an array inside the runtime (memmove, or
// typedslicecopy for elements with pointers), where a goroutine cannot be
// stopped: a collector that wants to scan its stack meanwhile spins and
// signals it until the copy ends, on another core. A copy of tens of
// megabytes (a window's accumulators doubling, a timer service's heap)
// held the collector so for milliseconds at a time; in pieces, the
// goroutine can stop between two of them.
func Copy[T any](dst, src []T) int {
	n := min(len(dst), len(src))
	step := max(1, copyPiece/max(1, int(unsafe.Sizeof(*new(T)))))
	for i := 0; i < n; i += step {
		copy(dst[i:n], src[i:min(i+step, n)])
	}
	return n
}
