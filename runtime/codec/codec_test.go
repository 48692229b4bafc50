package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

func TestRoundTrip(t *testing.T) {
	w := NewWriter(nil)
	now := time.Date(2026, 11, 29, 8, 0, 0, 123456789, time.UTC)
	long := strings.Repeat("x", 300)
	w.Tag(1, Varint)
	w.Uvarint(math.MaxUint64)
	w.Varint(-12345)
	w.Bool(true)
	w.Float64(-1.5)
	w.Float32(2.25)
	w.String("héllo")
	w.ByteSlice([]byte{0, 1, 2})
	w.Time(now)
	m := w.Begin()
	w.String(long) // forces End to move the value
	w.Varint(7)
	w.End(m)
	w.String(long)

	r := NewReader(w.Bytes())
	if id, wt := r.Tag(); id != 1 || wt != Varint {
		t.Fatalf("tag = %d/%d", id, wt)
	}
	if got := r.Uvarint(); got != math.MaxUint64 {
		t.Errorf("Uvarint = %d", got)
	}
	if got := r.Varint(); got != -12345 {
		t.Errorf("Varint = %d", got)
	}
	if !r.Bool() {
		t.Error("Bool = false")
	}
	if got := r.Float64(); got != -1.5 {
		t.Errorf("Float64 = %v", got)
	}
	if got := r.Float32(); got != 2.25 {
		t.Errorf("Float32 = %v", got)
	}
	if got := r.String(); got != "héllo" {
		t.Errorf("String = %q", got)
	}
	if got := r.ByteSlice(); !bytes.Equal(got, []byte{0, 1, 2}) {
		t.Errorf("ByteSlice = %v", got)
	}
	if got := r.Time(); !got.Equal(now) {
		t.Errorf("Time = %v, want %v", got, now)
	}
	sub := r.Nested()
	if got := sub.String(); got != long {
		t.Errorf("nested String has %d bytes", len(got))
	}
	if got := sub.Varint(); got != 7 || sub.More() {
		t.Errorf("nested Varint = %d, more %v", got, sub.More())
	}
	if got := r.String(); got != long {
		t.Errorf("String after nested has %d bytes", len(got))
	}
	if r.More() || r.Err() != nil {
		t.Errorf("more %v, err %v", r.More(), r.Err())
	}
}

func TestSkipEveryWireType(t *testing.T) {
	w := NewWriter(nil)
	w.Tag(1, Varint)
	w.Varint(-1 << 40)
	w.Tag(2, Fixed64)
	w.Float64(3)
	w.Tag(3, Fixed32)
	w.Float32(3)
	w.Tag(4, Bytes)
	m := w.Begin()
	w.String(strings.Repeat("y", 200))
	w.End(m)
	w.Tag(5, Varint)
	w.Uvarint(42)
	r := NewReader(w.Bytes())
	for {
		id, wt := r.Tag()
		if id == 5 {
			if got := r.Uvarint(); got != 42 {
				t.Fatalf("field after skips = %d", got)
			}
			break
		}
		r.Skip(wt)
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
	}
}

func TestCorruptInputFailsWithoutAllocating(t *testing.T) {
	w := NewWriter(nil)
	w.Uvarint(1 << 40) // a count far beyond the input
	r := NewReader(w.Bytes())
	if n := r.Count(); n != 0 || r.Err() == nil {
		t.Fatalf("Count = %d, err %v; want a corrupt error", n, r.Err())
	}
	r = NewReader([]byte{0x80}) // truncated varint
	r.Varint()
	if r.Err() == nil {
		t.Fatal("truncated varint read without error")
	}
	// The first error sticks.
	first := r.Err()
	_ = r.String()
	if r.Err() != first {
		t.Fatal("a later read replaced the first error")
	}
	r = NewReader([]byte{2})
	if b := r.Bool(); b || r.Err() == nil {
		t.Fatal("bool 2 read without error")
	}
}

// FuzzReader reads arbitrary bytes with every primitive: it must fail with
// an error, never panic, and never hand out more than the input holds.
func FuzzReader(f *testing.F) {
	w := NewWriter(nil)
	w.Tag(3, Bytes)
	m := w.Begin()
	w.String("seed")
	w.Time(time.Unix(1, 2))
	w.End(m)
	f.Add(w.Bytes())
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(data)
		for r.More() {
			id, wt := r.Tag()
			switch id % 7 {
			case 0:
				r.Skip(wt)
			case 1:
				if s := r.String(); len(s) > len(data) {
					t.Fatalf("string of %d bytes from %d", len(s), len(data))
				}
			case 2:
				if n := r.Count(); n > len(data) {
					t.Fatalf("count %d from %d bytes", n, len(data))
				}
			case 3:
				r.Time()
			case 4:
				sub := r.Nested()
				for sub.More() {
					sub.Float64()
				}
			case 5:
				r.Bool()
				r.Float32()
			case 6:
				if x := Int[int8](r); x != 0 && r.Err() != nil {
					t.Fatalf("Int read %d with the error %v", x, r.Err())
				}
				Uint[uint16](r)
			}
		}
	})
}

func TestNestedErrorFailsTheRoot(t *testing.T) {
	w := NewWriter(nil)
	m := w.Begin()
	w.Uvarint(1 << 30) // a count beyond the nested value
	w.End(m)
	r := NewReader(w.Bytes())
	sub := r.Nested()
	sub.Count()
	if r.Err() == nil || sub.Err() == nil {
		t.Fatalf("root err %v, nested err %v; want both set", r.Err(), sub.Err())
	}
}

// TestIntRange: Int and Uint read a value into a narrower type only when
// it fits; one that does not is an error naming the type, never a
// truncated value.
func TestIntRange(t *testing.T) {
	type level int8 // a named type is named in the error
	signed := func(x int64) *Reader {
		w := NewWriter(nil)
		w.Varint(x)
		return NewReader(w.Bytes())
	}
	unsigned := func(x uint64) *Reader {
		w := NewWriter(nil)
		w.Uvarint(x)
		return NewReader(w.Bytes())
	}
	for _, c := range []struct {
		name string
		read func() (any, *Reader)
		want any    // the value, when it fits
		err  string // else the error
	}{
		{"int8 max", func() (any, *Reader) { r := signed(math.MaxInt8); return Int[int8](r), r }, int8(math.MaxInt8), ""},
		{"int8 min", func() (any, *Reader) { r := signed(math.MinInt8); return Int[int8](r), r }, int8(math.MinInt8), ""},
		{"int8 max+1", func() (any, *Reader) { r := signed(128); return Int[int8](r), r }, nil, "128 is out of the range of int8"},
		{"int8 min-1", func() (any, *Reader) { r := signed(-129); return Int[int8](r), r }, nil, "-129 is out of the range of int8"},
		{"named int8", func() (any, *Reader) { r := signed(300); return Int[level](r), r }, nil, "300 is out of the range of codec.level"},
		{"int16", func() (any, *Reader) { r := signed(1 << 15); return Int[int16](r), r }, nil, "32768 is out of the range of int16"},
		{"int32 min", func() (any, *Reader) { r := signed(math.MinInt32); return Int[int32](r), r }, int32(math.MinInt32), ""},
		{"int32", func() (any, *Reader) { r := signed(math.MinInt32 - 1); return Int[int32](r), r }, nil, "-2147483649 is out of the range of int32"},
		{"int64", func() (any, *Reader) { r := signed(math.MinInt64); return Int[int64](r), r }, int64(math.MinInt64), ""},
		{"uint8 max", func() (any, *Reader) { r := unsigned(math.MaxUint8); return Uint[uint8](r), r }, uint8(math.MaxUint8), ""},
		{"uint8", func() (any, *Reader) { r := unsigned(256); return Uint[uint8](r), r }, nil, "256 is out of the range of uint8"},
		{"uint16", func() (any, *Reader) { r := unsigned(1 << 16); return Uint[uint16](r), r }, nil, "65536 is out of the range of uint16"},
		{"uint32", func() (any, *Reader) { r := unsigned(math.MaxUint64); return Uint[uint32](r), r }, nil, "18446744073709551615 is out of the range of uint32"},
		{"uint64", func() (any, *Reader) { r := unsigned(math.MaxUint64); return Uint[uint64](r), r }, uint64(math.MaxUint64), ""},
	} {
		got, r := c.read()
		switch {
		case c.err == "" && (r.Err() != nil || got != c.want):
			t.Errorf("%s: %v (%T), err %v; want %v", c.name, got, got, r.Err(), c.want)
		case c.err != "" && (r.Err() == nil || !strings.Contains(r.Err().Error(), c.err) || !errors.Is(r.Err(), ErrCorrupt)):
			t.Errorf("%s: %v, err %v; want an error with %q", c.name, got, r.Err(), c.err)
		case c.err != "" && !reflect.ValueOf(got).IsZero():
			t.Errorf("%s: %v with the error, want zero", c.name, got)
		}
	}
}

// TestWriterTooDeep: values that nest deeper than MaxDepth (a cycle) fail
// the writer with an error naming the type; nothing more is entered after
// that, and Reset forgets the error.
func TestWriterTooDeep(t *testing.T) {
	w := NewWriter(nil)
	for range MaxDepth {
		if !w.Enter("list.Node") {
			t.Fatalf("Enter failed at depth %d: %v", w.depth, w.Err())
		}
	}
	if w.Err() != nil {
		t.Fatal(w.Err())
	}
	if w.Enter("list.Node") {
		t.Fatalf("Enter at depth %d succeeded", MaxDepth+1)
	}
	err := w.Err()
	if !errors.Is(err, ErrTooDeep) || !strings.Contains(err.Error(), "list.Node") || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("err %v, want ErrTooDeep naming list.Node and a cycle", err)
	}
	for range MaxDepth {
		w.Leave()
	}
	if w.Enter("list.Node") || w.Err() != err {
		t.Errorf("Enter after the failure: err %v", w.Err())
	}
	w.Reset()
	if !w.Enter("list.Node") || w.Err() != nil {
		t.Errorf("Enter after Reset: err %v", w.Err())
	}
}

// TestReaderTooDeep: a value nested deeper than MaxNesting (which only a
// crafted or corrupt file holds) fails the reader instead of taking the
// decoder's stack as deep as the input is long; one level less reads.
func TestReaderTooDeep(t *testing.T) {
	// Each level is a length-delimited value holding the next: the
	// innermost is empty, and every length is a uvarint.
	nest := func(levels int) []byte {
		// Built back to front, then reversed: prepending would copy
		// the whole value at every level.
		rev := []byte{0}
		for range levels - 1 {
			v := binary.AppendUvarint(nil, uint64(len(rev)))
			slices.Reverse(v)
			rev = append(rev, v...)
		}
		slices.Reverse(rev)
		return rev
	}
	descend := func(buf []byte) (int, error) {
		r := NewReader(buf)
		n := 0
		for r.More() {
			r = r.Nested()
			n++
		}
		return n, r.Err()
	}
	if n, err := descend(nest(MaxNesting)); err != nil || n != MaxNesting {
		t.Fatalf("%d levels: read %d, err %v", MaxNesting, n, err)
	}
	_, err := descend(nest(MaxNesting + 1))
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "nested more than") {
		t.Fatalf("%d levels: err %v, want ErrCorrupt naming the nesting", MaxNesting+1, err)
	}
}

// TestStrings: strings read through a Strings are the strings written,
// copies that outlive their input; short ones share chunks no larger than
// StringsChunk and what remains to be read, long ones are allocated
// apart.
func TestStrings(t *testing.T) {
	long := strings.Repeat("x", StringsChunk/4+1)
	var want []string
	w := NewWriter(nil)
	for i := range 3000 {
		s := fmt.Sprint("value ", i)
		switch i % 500 {
		case 7:
			s = long
		case 8:
			s = ""
		}
		want = append(want, s)
		m := w.Begin() // nested, as a value is in a section
		w.Uvarint(uint64(i))
		w.String(s)
		w.End(m)
	}
	in := append([]byte(nil), w.Bytes()...)
	var got []string
	var strs Strings
	read := func() {
		got = got[:0]
		strs = Strings{}
		r := NewReader(in)
		r.UseStrings(&strs)
		var sub Reader
		for r.More() {
			r.NestedTo(&sub)
			sub.Uvarint()
			got = append(got, sub.String())
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
	}
	got = make([]string, 0, len(want))
	allocs := testing.AllocsPerRun(3, read)
	clear(in) // the strings must not point into the input
	if !slices.Equal(got, want) {
		t.Fatalf("strings read through a Strings differ from those written")
	}
	// 6 long strings, and 3000 short ones of about 9 bytes in 16 KiB
	// chunks.
	if allocs > 6+3 {
		t.Errorf("%v allocations to read 3000 strings, want 6 long ones and 2 or 3 chunks", allocs)
	}
	if cap(strs.buf) > StringsChunk {
		t.Errorf("a chunk of %d bytes, more than StringsChunk", cap(strs.buf))
	}
	// The last chunk is no larger than what remains to be read: a small
	// input gets a small chunk.
	var small Strings
	sr := NewReader([]byte{3, 'a', 'b', 'c', 0xff})
	sr.UseStrings(&small)
	if s := sr.String(); s != "abc" || cap(small.buf) != 4 {
		t.Errorf("a string of 3 bytes, 1 byte before the end of its input, read as %q into a chunk of %d bytes, want 4", s, cap(small.buf))
	}
}

// TestVarints: the reader's varints agree with encoding/binary's on
// values of every length, signed and unsigned, and a varint that is
// truncated or overflows 64 bits is an error, not a value.
func TestVarints(t *testing.T) {
	var values []uint64
	for s := range 64 {
		values = append(values, 1<<s-1, 1<<s, 1<<s+1)
	}
	values = append(values, math.MaxUint64)
	for _, x := range values {
		w := NewWriter(nil)
		w.Uvarint(x)
		w.Varint(int64(x))
		w.Varint(-int64(x))
		w.Uvarint(7) // what follows must be read where it starts
		r := NewReader(w.Bytes())
		if got := r.Uvarint(); got != x {
			t.Errorf("Uvarint %d read as %d", x, got)
		}
		if got := r.Varint(); got != int64(x) {
			t.Errorf("Varint %d read as %d", int64(x), got)
		}
		if got := r.Varint(); got != -int64(x) {
			t.Errorf("Varint %d read as %d", -int64(x), got)
		}
		if got := r.Uvarint(); got != 7 || r.Err() != nil || r.More() {
			t.Errorf("after %d: %d, err %v, %d bytes left; want 7 and the end", x, got, r.Err(), r.Remaining())
		}
		// Followed by bytes with their top bits set, and alone at the
		// end of the buffer: the bytes after a varint are not its.
		for _, after := range [][]byte{bytes.Repeat([]byte{0xff}, 9), nil} {
			w := NewWriter(nil)
			w.Uvarint(x)
			r := NewReader(append(w.Bytes(), after...))
			if got := r.Uvarint(); got != x || r.Remaining() != len(after) {
				t.Errorf("Uvarint %d before % x read as %d with %d bytes left", x, after, got, r.Remaining())
			}
		}
	}
	for _, bad := range [][]byte{
		{0x80},             // truncated
		{0xff, 0xff, 0xff}, // truncated
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02},       // 65 bits
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x80, 0x01}, // 11 bytes
	} {
		for _, read := range []func(*Reader) any{
			func(r *Reader) any { return r.Uvarint() },
			func(r *Reader) any { return r.Varint() },
		} {
			r := NewReader(bad)
			if got := read(r); r.Err() == nil || !errors.Is(r.Err(), ErrCorrupt) || !reflect.ValueOf(got).IsZero() {
				t.Errorf("% x read as %v, err %v; want an error", bad, got, r.Err())
			}
		}
	}
}

func TestEndShort(t *testing.T) {
	for n := 0; n <= MaxShort; n++ {
		long, short := NewWriter(nil), NewWriter(nil)
		m := long.Begin()
		long.Raw(bytes.Repeat([]byte{7}, n))
		long.End(m)
		m = short.Begin()
		short.Raw(bytes.Repeat([]byte{7}, n))
		short.EndShort(m)
		if !bytes.Equal(long.Bytes(), short.Bytes()) {
			t.Fatalf("%d bytes: EndShort wrote %x, End %x", n, short.Bytes(), long.Bytes())
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("EndShort of a value of MaxShort+1 bytes did not panic")
		}
	}()
	w := NewWriter(nil)
	m := w.Begin()
	w.Raw(make([]byte, MaxShort+1))
	w.EndShort(m)
}

// BenchmarkEncodeSmallStruct is a generated encoder of a struct of one
// int64 (a count, as a window of Nexmark's q5 holds), called through a
// function value as a checkpoint calls it, finished by End and by
// EndShort.
func BenchmarkEncodeSmallStruct(b *testing.B) {
	type count struct{ N int64 }
	encoders := []struct {
		name   string
		encode func(w *Writer, v *count)
	}{
		{"End", func(w *Writer, v *count) {
			m := w.Begin()
			if v.N != 0 {
				w.Tag(1, Varint)
				w.Varint(v.N)
			}
			w.End(m)
		}},
		{"EndShort", func(w *Writer, v *count) {
			m := w.Begin()
			if v.N != 0 {
				w.Tag(1, Varint)
				w.Varint(v.N)
			}
			w.EndShort(m)
		}},
	}
	const n = 1 << 16 // a power of two: the loop takes i mod n by a mask
	counts := make([]count, n)
	for i := range counts {
		counts[i].N = int64(i%97 + 1)
	}
	for _, e := range encoders {
		b.Run(e.name, func(b *testing.B) {
			w := NewWriter(make([]byte, 0, 4<<20))
			for i := 0; i < b.N; i++ {
				if i&(n-1) == 0 {
					w.Reset()
				}
				e.encode(w, &counts[i&(n-1)])
			}
		})
	}
}
