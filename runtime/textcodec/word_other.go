//go:build !amd64 && !arm64

package textcodec

import (
	"encoding/binary"
	"unsafe"
)

// word reads the eight bytes at p+i, the first the lowest.
func word(p unsafe.Pointer, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice((*byte)(unsafe.Add(p, i)), 8))
}
