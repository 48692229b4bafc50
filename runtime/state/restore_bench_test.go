package state

import (
	"fmt"
	"testing"

	"github.com/pipegen/pipegen/runtime/codec"
)

// benchValue is the state benchmark's value (examples/statebench's Acc),
// and benchCodec is what pipegen generates for it.
type benchValue struct {
	Count, Sum, Min, Max int64
	Label                string
}

var benchCodec = &Codec[uint64, benchValue]{
	Hash:      func(k uint64) uint64 { return k * 0x9e3779b97f4a7c15 },
	EncodeKey: func(w *codec.Writer, k uint64) { w.Uvarint(k) },
	DecodeKey: func(r *codec.Reader) uint64 { return r.Uvarint() },
	EncodeValue: func(w *codec.Writer, v *benchValue) {
		m := w.Begin()
		w.Tag(1, codec.Varint)
		w.Varint(v.Count)
		w.Tag(2, codec.Varint)
		w.Varint(v.Sum)
		w.Tag(3, codec.Varint)
		w.Varint(v.Min)
		w.Tag(4, codec.Varint)
		w.Varint(v.Max)
		w.Tag(5, codec.Bytes)
		w.String(v.Label)
		w.End(m)
	},
	DecodeValue: func(in *codec.Reader) *benchValue {
		v := new(benchValue)
		decodeBenchValue(in, v)
		return v
	},
	DecodeValueTo: decodeBenchValue,
}

// decodeBenchValue is what pipegen generates to decode a benchValue.
func decodeBenchValue(in *codec.Reader, v *benchValue) {
	var fields codec.Reader
	in.NestedTo(&fields)
	r := &fields
	for r.More() {
		id, wt := r.Tag()
		switch id {
		case 1:
			if r.Want(id, wt, codec.Varint) {
				v.Count = r.Varint()
			}
		case 2:
			if r.Want(id, wt, codec.Varint) {
				v.Sum = r.Varint()
			}
		case 3:
			if r.Want(id, wt, codec.Varint) {
				v.Min = r.Varint()
			}
		case 4:
			if r.Want(id, wt, codec.Varint) {
				v.Max = r.Varint()
			}
		case 5:
			if r.Want(id, wt, codec.Bytes) {
				v.Label = r.String()
			}
		default:
			r.Skip(wt)
		}
	}
}

// benchSections encodes keys keys into the sections of groups key groups,
// as a full capture writes them.
func benchSections(keys, groups int) [][]byte {
	s := NewMemory[uint64, benchValue]()
	s.Bind(func(k uint64) int { return int(benchCodec.Hash(k) % uint64(groups)) }, 0, groups)
	for k := range uint64(keys) {
		s.Put(k, &benchValue{Count: 1, Sum: int64(k), Min: int64(k), Max: int64(k), Label: "a label of about forty bytes, per key...."})
	}
	c := s.Capture(true, 0, s.Epoch(), benchCodec)
	var out [][]byte
	c.Write(func(parts ...[]byte) error {
		var sec []byte
		for _, p := range parts {
			sec = append(sec, p...)
		}
		out = append(out, sec)
		return nil
	})
	return out
}

// BenchmarkRestore restores one subtask's state of 1M keys of the state
// benchmark's type from the sections of 64 key groups.
func BenchmarkRestore(b *testing.B) {
	for _, keys := range []int{1_000_000} {
		const groups = 64
		secs := benchSections(keys, groups)
		size := 0
		for _, s := range secs {
			size += len(s)
		}
		for _, reserve := range []bool{false, true} {
			b.Run(fmt.Sprint("keys=", keys, "/reserve=", reserve), func(b *testing.B) {
				b.SetBytes(int64(size))
				for b.Loop() {
					s := NewMemory[uint64, benchValue]()
					s.Bind(func(k uint64) int { return int(benchCodec.Hash(k) % groups) }, 0, groups)
					if reserve {
						s.Reserve(keys)
					}
					for kg, sec := range secs {
						if err := s.RestoreSection(kg, sec, false, benchCodec); err != nil {
							b.Fatal(err)
						}
					}
					s.Restored()
					if s.Len() != keys {
						b.Fatalf("%d keys restored, want %d", s.Len(), keys)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N)/(float64(size)/1e9), "s/GB")
			})
		}
	}
}

// TestRestoreAllocs: a restore that knows how many keys it restores
// allocates next to nothing per key: the entries and their values come
// from slabs, the strings from chunks, the decoders' readers live on the
// stack or are reused, and the index does not grow. It restores every
// key, each to a value of its own that points into nothing it was read
// from.
func TestRestoreAllocs(t *testing.T) {
	const keys, groups = 20_000, 16
	secs := benchSections(keys, groups)
	var s *Memory[uint64, benchValue]
	allocs := testing.AllocsPerRun(5, func() {
		s = NewMemory[uint64, benchValue]()
		s.Bind(func(k uint64) int { return int(benchCodec.Hash(k) % groups) }, 0, groups)
		s.Reserve(keys)
		for kg, sec := range secs {
			if err := s.RestoreSection(kg, sec, false, benchCodec); err != nil {
				t.Fatal(err)
			}
		}
		s.Restored()
	})
	for _, sec := range secs {
		clear(sec)
	}
	if s.Len() != keys {
		t.Fatalf("%d keys restored, want %d", s.Len(), keys)
	}
	for k := range uint64(keys) {
		if v := s.Get(k); v == nil || v.Sum != int64(k) || v.Label != "a label of about forty bytes, per key...." {
			t.Fatalf("key %d restored as %+v", k, v)
		}
	}
	s.Get(1).Sum = -1
	if v := s.Get(0); v.Sum != 0 {
		t.Fatalf("changing key 1 changed key 0 to %+v", v)
	}
	if perKey := allocs / keys; perKey > 0.05 {
		t.Errorf("%.3f allocations per key restored, want about 1/200 (slabs of 256 values, chunks of 16 KiB of strings)", perKey)
	}
}

// TestCaptureEntries: a capture counts the entries it wrote, those the
// subtask encoded before changing them included, and the keys the
// state held at its barrier.
func TestCaptureEntries(t *testing.T) {
	s := newTestState()
	for k := range 1000 {
		s.Put(k, &testValue{N: int64(k)})
	}
	s.Delete(7)
	c := s.Capture(true, 0, s.Epoch(), testCodec)
	s.Get(3).N++ // encoded by the subtask, before the writer gets to it
	writeCapture(t, c)
	if got := c.Entries(); got != 999 {
		t.Errorf("a full capture of 999 keys says it wrote %d entries", got)
	}
	if c.Keys != 999 {
		t.Errorf("a full capture of 999 keys says the state held %d", c.Keys)
	}
	s.Get(5).N++
	s.Delete(9)
	s.Put(2000, &testValue{})
	d := s.Capture(false, c.Epoch, c.Epoch, testCodec)
	writeCapture(t, d)
	if got := d.Entries(); got != 4 {
		t.Errorf("a delta of 3 changes and a deletion says it wrote %d entries", got)
	}
	if d.Keys != 999 {
		t.Errorf("a delta that added a key and deleted one says the state held %d keys, want 999", d.Keys)
	}
}
