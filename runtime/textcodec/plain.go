package textcodec

import (
	"math/bits"
	"unsafe"
)

// Eight bytes at a time: lsb has the low bit of every byte, msb the high.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainPrefix returns how many bytes at the start of b a JSON string
// holds as they are: ASCII from 0x20 up but for the quote and the
// backslash. It looks at eight bytes at a time, because most strings are
// such bytes from end to end and a byte at a time was a fifth of the CPU
// of Nexmark q0 (its bids' extra field, written as JSON lines).
func plainPrefix(b []byte) int {
	n := len(b)
	p := unsafe.Pointer(unsafe.SliceData(b))
	i := 0
	for ; i+16 <= n; i += 16 {
		x := word(p, i)
		y := word(p, i+8)
		if special(x)|special(y) != 0 {
			if m := special(x); m != 0 {
				return i + bits.TrailingZeros64(m)>>3
			}
			return i + 8 + bits.TrailingZeros64(special(y))>>3
		}
	}
	if i+8 <= n {
		if m := special(word(p, i)); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for ; i < n && plain[b[i]]; i++ {
	}
	return i
}

// special has the high bit of each byte of x that is not plain, and may
// have it of bytes above the lowest such byte too (a borrow runs up from
// it), so only the lowest set bit is to be trusted.
//
// Below 0x80, x-0x20 sets a byte's high bit when the byte is under 0x20,
// and q-1 (b-1) when it is the quote (backslash), whose xor made it zero:
// no borrow comes up from a plain byte, so the lowest byte flagged is the
// first that is not plain. From 0x80 up the byte's own high bit flags it.
func special(x uint64) uint64 {
	q := x ^ (lsb * '"')
	b := x ^ (lsb * '\\')
	low := (x - lsb*0x20) | (q - lsb) | (b - lsb)
	return (low&^x | x) & msb
}

// plainPrefixString is plainPrefix of a string's bytes, read in place.
func plainPrefixString(s string) int {
	return plainPrefix(unsafe.Slice(unsafe.StringData(s), len(s)))
}
