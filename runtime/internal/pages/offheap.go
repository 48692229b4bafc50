package pages

import (
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Memory that the runtime keeps from one checkpoint for the next (the
// buffers of a state's sections, a window capture's copies of its
// accumulators) lives outside Go's heap, in Blocks. Kept in the heap, it
// counted in the live heap from which the collector sets its goal, and
// with the default GOGC of 100 the heap grew by twice its size for as
// long as it was kept: the 13 MB that Nexmark q5 keeps after its first
// checkpoint raised its peak from 87 to 113 MiB (GODEBUG=gctrace=1),
// every page of it faulted in by the kernel. Outside the heap it costs
// its own size.
//
// A Block's memory is unmapped when the Block is collected (or by Free),
// so whoever uses the memory must hold the Block meanwhile: a slice of
// the memory does not keep it. Blocks hold no pointers into Go's heap
// (the collector does not look into them).

// Block is memory mapped outside Go's heap, unmapped when the Block is
// collected or freed.
type Block struct {
	mem     []byte
	cleanup runtime.Cleanup
}

// mapped is the bytes of the Blocks not unmapped yet.
var mapped atomic.Int64

// Mapped reports the bytes of the Blocks not unmapped yet.
func Mapped() int64 { return mapped.Load() }

// NewBlock maps n bytes (rounded up to whole pages), zeroed and not yet
// touched, or returns nil when the system gives none or n is not
// positive: callers then use the heap.
func NewBlock(n int) *Block {
	if n <= 0 {
		return nil
	}
	n = (n + Size - 1) &^ (Size - 1)
	mem := mapAnon(n)
	if mem == nil {
		return nil
	}
	mapped.Add(int64(len(mem)))
	k := &Block{mem: mem}
	k.cleanup = runtime.AddCleanup(k, unmap, mem)
	return k
}

// unmap gives mem back to the system.
func unmap(mem []byte) {
	if unmapAnon(mem) {
		mapped.Add(-int64(len(mem)))
	}
}

// Bytes is the block's memory, empty, with its size for capacity.
func (k *Block) Bytes() []byte { return k.mem[:0] }

// Len is the block's size in bytes.
func (k *Block) Len() int { return len(k.mem) }

// Free unmaps the block now: nothing may use it, or its memory, after.
func (k *Block) Free() {
	if k == nil {
		return
	}
	k.cleanup.Stop()
	unmap(k.mem)
	k.mem = nil
}

// Array is the block's memory as an empty array of T, which must hold no
// pointers, with room for as many elements as fit.
func Array[T any](k *Block) []T {
	size := int(unsafe.Sizeof(*new(T)))
	if size == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(k.mem))), len(k.mem)/size)[:0]
}

// BlockFor returns a block with room for n elements of T, or nil (see
// NewBlock).
func BlockFor[T any](n int) *Block {
	return NewBlock(n * int(unsafe.Sizeof(*new(T))))
}
