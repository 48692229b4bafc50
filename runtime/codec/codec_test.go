package codec

import (
	"bytes"
	"math"
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
			switch id % 6 {
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
