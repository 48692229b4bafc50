// Package codec is the binary format of checkpointed state, and the small
// set of primitives that generated serializers are made of.
//
// A struct is a sequence of fields, each a tag (field id and wire type)
// followed by its value; a field id is the field's position in the struct
// declaration, counted from 1, and zero-valued fields are left out. Every
// value that is not a number is length-delimited, so a reader can skip a
// field it does not know: a struct that gained a field in a later version
// reads an older snapshot with that field at its zero value, and an older
// version skips fields it has never heard of.
//
// The Reader never panics and never allocates more than its input could
// hold: every length is checked against the bytes that remain, and values
// nest at most MaxNesting deep. Its error is sticky, so generated decoders
// read a whole value and check Err once. An integer is read into a type
// narrower than 64 bits with Int or Uint, which refuse a value the type
// cannot hold rather than truncate it.
//
// The Writer's error is sticky too: the encoder of a type that can hold
// itself calls Enter and Leave around each value, and a value nested deeper
// than MaxDepth (a cycle, such as x.Next = x) fails the writer instead of
// overflowing the stack.
package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"
	"unsafe"
)

// WireType says how a field's value is encoded, so that unknown fields can
// be skipped.
type WireType uint8

// The wire types.
const (
	Varint  WireType = 0 // bool, integers (signed ones zigzag-encoded), durations
	Fixed64 WireType = 1 // float64
	Bytes   WireType = 2 // strings, []byte, structs, slices, maps, arrays, times
	Fixed32 WireType = 5 // float32
)

// Writer appends encoded values to a buffer.
type Writer struct {
	buf []byte
	// depth counts the values of types that can hold themselves being
	// written, one inside the other (see Enter).
	depth int
	err   error
}

// NewWriter returns a writer that appends to buf.
func NewWriter(buf []byte) *Writer { return &Writer{buf: buf} }

// Bytes returns the encoded bytes.
func (w *Writer) Bytes() []byte { return w.buf }

// Len is the number of bytes written.
func (w *Writer) Len() int { return len(w.buf) }

// Reset empties the buffer, keeping its memory, and forgets an error.
func (w *Writer) Reset() { w.buf, w.depth, w.err = w.buf[:0], 0, nil }

// Err is the error that made the writer fail, or nil. The bytes of a
// writer that failed are not a value: they must not be stored.
func (w *Writer) Err() error { return w.err }

// MaxDepth is how deeply the values of types that can hold themselves (a
// list or tree of pointers, type Tree []Tree) may nest in one value that is
// written. A value that is deeper holds itself, as a.Next = a does, or is a
// chain long enough that decoding it could exhaust the stack: either way it
// cannot be checkpointed.
const MaxDepth = 100_000

// ErrTooDeep is wrapped by the error of a writer given a value nested
// deeper than MaxDepth.
var ErrTooDeep = errors.New("state value nested too deep")

// Enter is called by the encoder of a type that can hold itself before it
// writes a value, and Leave after; typ names the type, for the error. Enter
// reports false, and the encoder writes nothing, once the writer has
// failed, which Enter does to a value inside MaxDepth others.
func (w *Writer) Enter(typ string) bool {
	if w.depth >= MaxDepth || w.err != nil {
		w.tooDeep(typ)
		return false
	}
	w.depth++
	return true
}

// Leave ends the value Enter began.
func (w *Writer) Leave() { w.depth-- }

func (w *Writer) tooDeep(typ string) {
	if w.err == nil {
		w.err = fmt.Errorf("%w: a %s %d levels deep: is there a cycle (such as x.Next = x)? break it before a checkpoint; a chain that long belongs in a slice", ErrTooDeep, typ, MaxDepth)
	}
}

// Tag writes a field's tag.
func (w *Writer) Tag(id uint32, wt WireType) {
	w.Uvarint(uint64(id)<<3 | uint64(wt))
}

// Uvarint writes an unsigned integer.
func (w *Writer) Uvarint(x uint64) { w.buf = binary.AppendUvarint(w.buf, x) }

// Varint writes a signed integer, zigzag-encoded so that small negative
// numbers stay short.
func (w *Writer) Varint(x int64) { w.buf = binary.AppendVarint(w.buf, x) }

// Bool writes a bool as a varint.
func (w *Writer) Bool(b bool) {
	if b {
		w.buf = append(w.buf, 1)
	} else {
		w.buf = append(w.buf, 0)
	}
}

// Float64 writes a float64 as 8 little-endian bytes.
func (w *Writer) Float64(f float64) {
	w.buf = binary.LittleEndian.AppendUint64(w.buf, math.Float64bits(f))
}

// Float32 writes a float32 as 4 little-endian bytes.
func (w *Writer) Float32(f float32) {
	w.buf = binary.LittleEndian.AppendUint32(w.buf, math.Float32bits(f))
}

// String writes a length-prefixed string.
func (w *Writer) String(s string) {
	w.Uvarint(uint64(len(s)))
	w.buf = append(w.buf, s...)
}

// Raw appends b as it is, without a length: for a caller that lays out
// bytes around encoded values (a key prefix).
func (w *Writer) Raw(b []byte) { w.buf = append(w.buf, b...) }

// ByteSlice writes a length-prefixed []byte.
func (w *Writer) ByteSlice(b []byte) {
	w.Uvarint(uint64(len(b)))
	w.buf = append(w.buf, b...)
}

// Time writes a time as seconds and nanoseconds since the Unix epoch, in a
// length-delimited value; the location is not kept (times read back are in
// UTC), and neither is the monotonic clock reading.
func (w *Writer) Time(t time.Time) {
	mark := w.Begin()
	w.Varint(t.Unix())
	w.Uvarint(uint64(t.Nanosecond()))
	w.EndShort(mark) // at most 10 + 5 bytes
}

// Begin starts a length-delimited value (a struct, a slice, a map, a
// time). Every length-delimited value, strings included, is a uvarint
// length and then the bytes, so that any of them can be skipped alike.
func (w *Writer) Begin() int {
	if cap(w.buf)-len(w.buf) < beginRoom {
		w.grow()
	}
	// One byte is reserved for the length; End moves the value when its
	// length needs more, which values under 128 bytes never do.
	w.buf = append(w.buf, 0)
	return len(w.buf)
}

// Reserve makes room for n more bytes, doubling the buffer as Begin does:
// a writer that appends many small values without Begin (a packed list)
// calls it now and then, so that the buffer is copied as few times.
func (w *Writer) Reserve(n int) {
	for cap(w.buf)-len(w.buf) < n {
		w.grow()
	}
}

// Room is how many more bytes fit in the buffer before it must grow.
func (w *Writer) Room() int { return cap(w.buf) - len(w.buf) }

// Grow makes room for n more bytes: when the buffer has less, it is copied
// once into one with exactly that room. An encoder that knows about how
// much it will write calls it first, so that the buffer is not doubled
// (and copied) again and again up to a capacity of up to twice that.
func (w *Writer) Grow(n int) {
	if cap(w.buf)-len(w.buf) >= n {
		return
	}
	buf := make([]byte, len(w.buf), len(w.buf)+n)
	copy(buf, w.buf)
	w.buf = buf
}

// beginRoom is the room Begin makes for a value: most values of state fit
// without the appends growing the buffer themselves.
const beginRoom = 128

// grow doubles the buffer's capacity. append grows a large buffer by a
// quarter at a time, so that a state section of n bytes built by appends
// copies about 4n bytes and allocates 5n; doubling copies at most n and
// allocates 2n (BenchmarkWindowStateSnapshot).
func (w *Writer) grow() {
	buf := make([]byte, len(w.buf), max(2*cap(w.buf), 4*beginRoom))
	copy(buf, w.buf)
	w.buf = buf
}

// End finishes the value Begin started.
func (w *Writer) End(mark int) {
	n := len(w.buf) - mark
	if n < 0x80 {
		w.buf[mark-1] = byte(n)
		return
	}
	if w.err != nil {
		return // the bytes are not a value: moving them would be wasted
	}
	var tmp [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(tmp[:], uint64(n))
	w.buf = append(w.buf, tmp[:k-1]...)
	copy(w.buf[mark-1+k:], w.buf[mark:mark+n])
	copy(w.buf[mark-1:], tmp[:k])
}

// MaxShort is the longest value EndShort can finish: its length is one
// byte.
const MaxShort = 0x7f

// EndShort is End for a value its encoder knows to be at most MaxShort
// bytes long: a struct of a few numbers, whose generated encoder adds up
// the most each field can take. Unlike End it is inlined: such an
// encoder of one int64 takes 4.6-5.2 ns against 5.5-5.9 with End (go
// test ./runtime/codec -run X -bench EncodeSmallStruct), and a
// checkpoint runs one per window or entry. A longer value is a bug in the encoder: EndShort panics rather
// than write a wrong length.
func (w *Writer) EndShort(mark int) {
	n := len(w.buf) - mark
	if n > MaxShort {
		panic("codec: EndShort given a value longer than MaxShort bytes; its encoder must call End")
	}
	w.buf[mark-1] = byte(n)
}

// Reader decodes values from a buffer. Its first error sticks: later reads
// return zero values, and Err reports it.
type Reader struct {
	buf []byte
	off int
	err error
	// root is the reader a nested reader came from: an error anywhere
	// fails the whole value.
	root *Reader
	// depth counts the readers this one is nested in (see MaxNesting).
	depth int
	// strs, set on a root reader (UseStrings), is where the strings
	// that it and the readers nested in it read are copied to.
	strs *Strings
}

// MaxNesting is how deeply length-delimited values may nest in what a
// Reader decodes. A value the Writer accepts nests at most a few levels per
// level of MaxDepth (a struct in a slice in a struct); anything deeper is
// a crafted or corrupt file that would otherwise take a decoder's stack
// as deep as its length allows.
const MaxNesting = 4 * MaxDepth

// NewReader returns a reader of buf.
func NewReader(buf []byte) *Reader { return &Reader{buf: buf} }

// Err is the first error met, or nil.
func (r *Reader) Err() error {
	if r.root != nil && r.root.err != nil {
		return r.root.err
	}
	return r.err
}

// More reports whether bytes remain and no error occurred.
func (r *Reader) More() bool { return r.Err() == nil && r.off < len(r.buf) }

// Remaining is the number of unread bytes.
func (r *Reader) Remaining() int { return len(r.buf) - r.off }

// ErrCorrupt is wrapped by every decoding error.
var ErrCorrupt = errors.New("corrupt state")

// Fail records an error (the first one sticks), in this reader and in the
// one it is nested in.
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: at byte %d: %s", ErrCorrupt, r.off, fmt.Sprintf(format, args...))
		r.off = len(r.buf)
	}
	if r.root != nil && r.root.err == nil {
		r.root.err = r.err
	}
}

// Tag reads a field's tag.
func (r *Reader) Tag() (id uint32, wt WireType) {
	x := r.Uvarint()
	if x>>3 > math.MaxUint32 {
		r.Fail("field id %d out of range", x>>3)
		return 0, 0
	}
	return uint32(x >> 3), WireType(x & 7)
}

// Uvarint reads an unsigned integer.
func (r *Reader) Uvarint() uint64 {
	// Tags and the lengths of small values take one byte: most of
	// what a decoder reads besides the values themselves.
	if r.off < len(r.buf) && r.err == nil {
		if x := r.buf[r.off]; x < 0x80 {
			r.off++
			return uint64(x)
		}
	}
	return r.uvarint()
}

// uvarint is Uvarint of a varint longer than a byte, or at the end of
// the buffer, or after an error.
func (r *Reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	buf := r.buf[r.off:]
	if len(buf) >= 8 {
		// A varint of up to 8 bytes (56 bits: the values of most int64
		// fields) from one load, without a branch per byte, which the
		// processor mispredicts as the lengths vary from value to
		// value: the first byte whose top bit is clear ends it, and the
		// 7-bit groups of its bytes are packed together in three steps.
		w := binary.LittleEndian.Uint64(buf)
		if stops := ^w & 0x8080808080808080; stops != 0 {
			end := bits.TrailingZeros64(stops) // the top bit of the last byte
			w &= ^uint64(0) >> (63 - end)
			w = w&0x007f007f007f007f | w&0x7f007f007f007f00>>1
			w = w&0x00003fff00003fff | w&0x3fff00003fff0000>>2
			w = w&0x000000000fffffff | w&0x0fffffff00000000>>4
			r.off += end/8 + 1
			return w
		}
	}
	// binary.Uvarint's loop, here so that Varint takes one call of a
	// function that is not inlined rather than three (Varint, Uvarint
	// and encoding/binary's Varint and Uvarint).
	var x uint64
	var s uint
	for i, b := range buf {
		if i == binary.MaxVarintLen64 {
			break
		}
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				break // overflows 64 bits
			}
			r.off += i + 1
			return x | uint64(b)<<s
		}
		x |= uint64(b&0x7f) << s
		s += 7
	}
	r.Fail("bad varint")
	return 0
}

// Varint reads a signed integer.
func (r *Reader) Varint() int64 {
	ux := r.Uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

// Signed is the signed integer types, which Int reads.
type Signed interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64
}

// Unsigned is the unsigned integer types, which Uint reads.
type Unsigned interface {
	~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// Int reads a signed integer into a T. A value T cannot hold (written from
// a wider type, or from an int on a 64-bit platform and read on a 32-bit
// one) is an error, not a truncated value. It decodes the varint as Varint
// does rather than call it: generated decoders call Int for most integers,
// and the call would cost about as much as the range check.
func Int[T Signed](r *Reader) T {
	if r.err != nil {
		return 0
	}
	x, n := binary.Varint(r.buf[r.off:])
	if n <= 0 {
		r.Fail("bad varint")
		return 0
	}
	r.off += n
	if int64(T(x)) != x {
		r.outOfRange(x, T(0))
		return 0
	}
	return T(x)
}

// Uint is Int for unsigned integers.
func Uint[T Unsigned](r *Reader) T {
	if r.err != nil {
		return 0
	}
	x, n := binary.Uvarint(r.buf[r.off:])
	if n <= 0 {
		r.Fail("bad varint")
		return 0
	}
	r.off += n
	if uint64(T(x)) != x {
		r.outOfRange(x, T(0))
		return 0
	}
	return T(x)
}

// outOfRange fails the reader: x does not fit in the type of zero.
func (r *Reader) outOfRange(x, zero any) {
	r.Fail("%d is out of the range of %T", x, zero)
}

// Bool reads a bool.
func (r *Reader) Bool() bool {
	switch r.Uvarint() {
	case 0:
		return false
	case 1:
		return true
	}
	r.Fail("bad bool")
	return false
}

func (r *Reader) fixed(n int) []byte {
	if r.err != nil {
		return nil
	}
	if r.Remaining() < n {
		r.Fail("want %d bytes, %d remain", n, r.Remaining())
		return nil
	}
	b := r.buf[r.off : r.off+n]
	r.off += n
	return b
}

// Float64 reads a float64.
func (r *Reader) Float64() float64 {
	b := r.fixed(8)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// Float32 reads a float32.
func (r *Reader) Float32() float32 {
	b := r.fixed(4)
	if b == nil {
		return 0
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b))
}

// length reads a length prefix and checks it against what remains.
func (r *Reader) length() int {
	n := r.Uvarint()
	if r.err == nil && n > uint64(r.Remaining()) {
		r.Fail("length %d exceeds the %d bytes that remain", n, r.Remaining())
		return 0
	}
	return int(n)
}

// String reads a string: a copy of its bytes (the reader's buffer may
// be reused), into the reader's Strings if it has one.
func (r *Reader) String() string {
	n := r.length()
	if r.err != nil {
		return ""
	}
	b := r.buf[r.off : r.off+n]
	r.off += n
	root := r
	if r.root != nil {
		root = r.root
	}
	if root.strs != nil && n > 0 {
		return root.strs.copy(b, root)
	}
	return string(b)
}

// UseStrings makes the strings that r and the readers nested in it read
// copies in a (nil: each string allocated by itself). r must be a root
// reader (NewReader's), not a nested one.
func (r *Reader) UseStrings(a *Strings) { r.strs = a }

// Strings is memory that many decoded strings are copied into, a chunk
// at a time, instead of one allocation each: a restore of millions of
// strings then allocates thousands of chunks, which the garbage collector
// marks (and never scans: they hold no pointers) one each. A chunk stays
// on the heap as long as one of its strings is referenced, so chunks are
// small (StringsChunk), and a string longer than a quarter of one is
// allocated by itself. Its zero value is ready; it is not safe for
// concurrent use.
type Strings struct {
	buf []byte
}

// StringsChunk is the most bytes a Strings allocates at once.
const StringsChunk = 16 << 10

// copy returns a string of b's bytes. b is a part of root's buffer, and
// no more strings remain to be read than root's bytes after b: a chunk
// is never larger than that, so that the last chunk of a small buffer
// is small too.
func (a *Strings) copy(b []byte, root *Reader) string {
	n := len(b)
	if n > StringsChunk/4 {
		return string(b)
	}
	if len(a.buf)+n > cap(a.buf) {
		// b shares root.buf's array: cap(b) reaches its end, past which
		// root.buf leaves cap(root.buf)-len(root.buf) bytes.
		after := cap(b) - n - (cap(root.buf) - len(root.buf))
		a.buf = make([]byte, 0, min(StringsChunk, n+max(after, 0)))
	}
	off := len(a.buf)
	a.buf = append(a.buf, b...)
	return unsafe.String(&a.buf[off], n)
}

// ByteSlice reads a []byte (a copy: the reader's buffer may be reused).
func (r *Reader) ByteSlice() []byte {
	n := r.length()
	if r.err != nil {
		return nil
	}
	b := append([]byte(nil), r.buf[r.off:r.off+n]...)
	r.off += n
	return b
}

// Time reads a time written by Writer.Time, in UTC.
func (r *Reader) Time() time.Time {
	sub := r.Nested()
	sec := sub.Varint()
	nsec := sub.Uvarint()
	if sub.Err() == nil && nsec >= 1e9 {
		sub.Fail("nanoseconds %d out of range", nsec)
	}
	if sub.Err() != nil {
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// Nested returns a reader of the length-delimited value at the current
// position and moves past it.
func (r *Reader) Nested() *Reader {
	sub := new(Reader)
	r.NestedTo(sub)
	return sub
}

// NestedTo is Nested into a reader the caller keeps (one for every value
// of a section, say): it makes sub a reader of the length-delimited value
// at the current position and moves past it.
func (r *Reader) NestedTo(sub *Reader) {
	n := r.length()
	root := r
	if r.root != nil {
		root = r.root
	}
	if r.err == nil && r.depth >= MaxNesting {
		r.Fail("values nested more than %d deep", MaxNesting)
	}
	if r.err != nil {
		*sub = Reader{err: r.err, root: root, depth: r.depth + 1}
		return
	}
	// Field by field, not *sub = Reader{...}: the compiler builds such a
	// literal on the stack and copies it in 16-byte moves that read what
	// it had just stored in 8-byte ones, which stalls the processor (a
	// store it cannot forward): a sixth of a restore's decoding time.
	sub.buf = r.buf[r.off : r.off+n]
	sub.off = 0
	sub.err = nil
	sub.root = root
	sub.depth = r.depth + 1
	sub.strs = nil
	r.off += n
}

// Count reads the number of elements of a slice or map, each of which takes
// at least one byte: a count larger than what remains is corrupt, so that
// a decoder never allocates more than its input could fill.
func (r *Reader) Count() int {
	n := r.Uvarint()
	if r.err == nil && n > uint64(r.Remaining()) {
		r.Fail("count %d exceeds the %d bytes that remain", n, r.Remaining())
		return 0
	}
	return int(n)
}

// Skip moves past a field's value of wire type wt: the field is unknown to
// this version of the type.
func (r *Reader) Skip(wt WireType) {
	switch wt {
	case Varint:
		r.Uvarint()
	case Fixed64:
		r.fixed(8)
	case Fixed32:
		r.fixed(4)
	case Bytes:
		// Not through Nested: a reader that skips a field does not
		// escape to the heap for it.
		if n := r.length(); r.err == nil {
			r.off += n
		}
	default:
		r.Fail("unknown wire type %d", wt)
	}
}

// Want checks that a known field has the wire type its Go type needs; a
// field whose type changed between versions cannot be read.
func (r *Reader) Want(id uint32, got, want WireType) bool {
	if got == want {
		return true
	}
	r.Fail("field %d has wire type %d, want %d: its type changed", id, got, want)
	return false
}
