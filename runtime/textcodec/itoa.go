package textcodec

import (
	"encoding/binary"
	"math/bits"
)

// Integers in decimal, eight digits at a time.
//
// strconv.AppendInt cuts a number in chunks of nine digits and writes a
// chunk two digits at a time from a table, dividing by 100 for each two,
// each division waiting for the one before (four for a chunk of nine),
// into a buffer of its own, which it then copies. Here a number is cut
// into chunks of eight digits (one division by 10^8 per chunk), and the
// eight digits of a chunk come out together, as the bytes of one 64-bit
// word stored where they go: the chunk split in halves of four digits,
// each half in pairs, each pair in digits, every step one multiply over
// all the lanes of the word at once (SWAR). Nexmark's bids' numbers (ids
// of 4-7 digits, prices, timestamps) take about 0.6 of strconv's time:
// go test ./runtime/textcodec -run X -bench AppendInt.

// digits8 returns the eight decimal digits of x < 10^8 as ASCII, the
// first digit in the lowest byte (so that a little-endian store writes
// them in order).
func digits8(x uint32) uint64 {
	hi := x / 10000
	v := uint64(hi) | uint64(x-hi*10000)<<32 // two lanes of 32 bits, each < 10^4
	// v / 100 per lane: 10486 / 2^20 is 1/100 closely enough below 10^4.
	q := (v * 10486 >> 20) & 0x0000007f_0000007f
	v = q | (v-q*100)<<16 // four lanes of 16 bits, each < 100
	// v / 10 per lane: 103 / 2^10 is 1/10 closely enough below 100.
	q = (v * 103 >> 10) & 0x000f_000f_000f_000f
	v = q | (v-q*10)<<8 // eight lanes of 8 bits, each a digit
	return v | 0x30303030_30303030
}

var pow10u32 = [...]uint32{1, 10, 100, 1000, 1e4, 1e5, 1e6, 1e7, 1e8}

// decimalLen returns the number of decimal digits of x, 0 < x < 10^8.
func decimalLen(x uint32) int {
	// 1233 / 4096 is log10(2) from below: t is the length or one less.
	t := bits.Len32(x) * 1233 >> 12
	return t + int((uint64(pow10u32[t])-1-uint64(x))>>63)
}

// AppendUint appends u in decimal, as strconv.AppendUint(b, u, 10) does.
func AppendUint(b []byte, u uint64) []byte {
	if u < 10 {
		return append(b, byte('0'+u))
	}
	n := len(b)
	// Every chunk of digits is one 8-byte store: the leading chunk's
	// bytes past its k digits are overwritten by the next chunk or cut
	// off at the end.
	if u < 1e8 {
		k := decimalLen(uint32(u))
		b = room(b, 8)
		binary.LittleEndian.PutUint64(b[n:n+8], digits8(uint32(u))>>(64-8*k))
		return b[:n+k]
	}
	if u < 1e16 {
		head, low := uint32(u/1e8), uint32(u%1e8)
		k := decimalLen(head)
		b = room(b, k+16)
		binary.LittleEndian.PutUint64(b[n:n+8], digits8(head)>>(64-8*k))
		binary.LittleEndian.PutUint64(b[n+k:n+k+8], digits8(low))
		return b[:n+k+8]
	}
	h := u / 1e16
	r := u - h*1e16
	head, mid, low := uint32(h), uint32(r/1e8), uint32(r%1e8)
	k := decimalLen(head)
	b = room(b, k+24)
	binary.LittleEndian.PutUint64(b[n:n+8], digits8(head)>>(64-8*k))
	binary.LittleEndian.PutUint64(b[n+k:n+k+8], digits8(mid))
	binary.LittleEndian.PutUint64(b[n+k+8:n+k+16], digits8(low))
	return b[:n+k+16]
}

// AppendInt appends i in decimal, as strconv.AppendInt(b, i, 10) does.
// It is small enough to be inlined into generated encoders
// (TestGeneratedCodeInlines), so that a number costs one call.
func AppendInt(b []byte, i int64) []byte {
	if i < 0 {
		b = append(b, '-')
		i = -i // MinInt64 stays itself, whose magnitude is 1<<63 as a uint64
	}
	return AppendUint(b, uint64(i))
}

// room returns b lengthened by n bytes, which hold anything: the caller
// writes them and cuts b back to what it wrote.
func room(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		b = append(b, make([]byte, n)...)[:len(b)]
	}
	return b[:len(b)+n]
}
