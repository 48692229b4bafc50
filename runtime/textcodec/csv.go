package textcodec

import (
	"strconv"
	"time"
	"unsafe"
)

// The parsers of CSV cells that generated CSV decoders call: each is
// what the reflective decoder does with the cell (strconv, time.Parse
// with RFC 3339, time.ParseDuration), without copying the cell into a
// string first. ok is false for a cell they refuse; the decoder then
// leaves the line to the reflective path, which words the error.

// view is b as a string, valid while b is: only for the parsers below,
// which keep no part of their input in a result (their errors, which
// may, are dropped).
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// CSVInt parses a decimal integer of bits bits (0: int's) as
// strconv.ParseInt does.
func CSVInt(b []byte, bits int) (int64, bool) {
	if bits == 0 {
		bits = strconv.IntSize
	}
	neg := false
	digits := b
	if len(digits) > 0 && (digits[0] == '-' || digits[0] == '+') {
		neg = digits[0] == '-'
		digits = digits[1:]
	}
	// Up to 18 digits cannot overflow a uint64: read them here; longer
	// numbers, and anything else, strconv reads or refuses.
	if u, ok := shortDecimal(digits); ok {
		max := uint64(1)<<(bits-1) - 1
		if neg && u <= max+1 {
			return -int64(u), true
		}
		if !neg && u <= max {
			return int64(u), true
		}
		return 0, false
	}
	v, err := strconv.ParseInt(view(b), 10, bits)
	return v, err == nil
}

// shortDecimal reads 1 to 18 decimal digits, and nothing else.
func shortDecimal(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		c -= '0'
		if c > 9 {
			return 0, false
		}
		u = u*10 + uint64(c)
	}
	return u, true
}

// CSVUint parses a decimal unsigned integer of bits bits (0: uint's) as
// strconv.ParseUint does.
func CSVUint(b []byte, bits int) (uint64, bool) {
	if bits == 0 {
		bits = strconv.IntSize
	}
	if u, ok := shortDecimal(b); ok {
		return u, bits == 64 || u < 1<<bits
	}
	v, err := strconv.ParseUint(view(b), 10, bits)
	return v, err == nil
}

// CSVFloat parses a float of bits bits as strconv.ParseFloat does.
func CSVFloat(b []byte, bits int) (float64, bool) {
	v, err := strconv.ParseFloat(view(b), bits)
	return v, err == nil
}

// CSVBool parses a bool as strconv.ParseBool does.
func CSVBool(b []byte) (bool, bool) {
	v, err := strconv.ParseBool(view(b))
	return v, err == nil
}

// CSVTime parses an RFC 3339 time as time.Parse(time.RFC3339, ...)
// does.
func CSVTime(b []byte) (time.Time, bool) {
	v, err := time.Parse(time.RFC3339, view(b))
	return v, err == nil
}

// CSVDuration parses a duration as time.ParseDuration does.
func CSVDuration(b []byte) (time.Duration, bool) {
	v, err := time.ParseDuration(view(b))
	return v, err == nil
}

// CSVStrings makes the strings of the string cells of one line with one
// allocation: Reset with their total length, then Cut each cell. The
// strings share one array, which lives as long as any of them.
type CSVStrings struct{ buf []byte }

// Reset makes room for n bytes of cells: a new array, since the strings
// of the previous line still refer to the old one.
func (s *CSVStrings) Reset(n int) { s.buf = make([]byte, 0, n) }

// Cut returns c as a string of the array. The bytes of c must fit in
// what Reset made room for.
func (s *CSVStrings) Cut(c []byte) string {
	start := len(s.buf)
	if len(c) > cap(s.buf)-start {
		return string(c) // beyond what Reset counted: a string of its own
	}
	s.buf = append(s.buf, c...)
	return unsafe.String(unsafe.SliceData(s.buf[start:]), len(c))
}
