package eventtime

import (
	"testing"
	"unsafe"
)

// TestWatermarksPadded checks that a Watermarks has a cache line of
// padding on each side of its fields: the generators of a source's
// subtasks are allocated side by side, and Observe writes some of the
// fields at every record, on the cores of two goroutines.
func TestWatermarksPadded(t *testing.T) {
	var g Watermarks
	first := unsafe.Offsetof(g.bound)
	end := unsafe.Offsetof(g.set) + unsafe.Sizeof(g.set)
	if first < 64 {
		t.Errorf("a Watermarks' first field is at offset %d, want at least 64 (a pad before it)", first)
	}
	if after := unsafe.Sizeof(g) - end; after < 64 {
		t.Errorf("a Watermarks has %d bytes after its last field, want at least 64 (a pad after it)", after)
	}
}
