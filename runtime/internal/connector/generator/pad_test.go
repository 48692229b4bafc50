package generator

import (
	"testing"
	"unsafe"
)

// TestSourcePadded checks that a source's fields have a cache line of
// padding on each side: the sources of a stage's subtasks are allocated
// side by side, and At and TookRun write some of the fields at every record,
// which another subtask's fields, read at every record on another core,
// must not share a cache line with.
func TestSourcePadded(t *testing.T) {
	var s Source[int]
	first := unsafe.Offsetof(s.name)
	end := unsafe.Offsetof(s.chain) + unsafe.Sizeof(s.chain)
	if first < 64 {
		t.Errorf("a Source's first field is at offset %d, want at least 64 (a pad before it)", first)
	}
	if after := unsafe.Sizeof(s) - end; after < 64 {
		t.Errorf("a Source has %d bytes after its last field, want at least 64 (a pad after it)", after)
	}
}
