//go:build amd64 || arm64

package textcodec

import "unsafe"

// word reads the eight bytes at p+i, the first the lowest: one load on
// machines that are little-endian and read unaligned words.
func word(p unsafe.Pointer, i int) uint64 { return *(*uint64)(unsafe.Add(p, i)) }
