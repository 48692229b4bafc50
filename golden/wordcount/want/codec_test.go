// Tests of the generated serializers of the word count's state (written by
// hand; go test ./golden -update leaves *_test.go files in want/ alone).
//
// The state of "counts" is one wc.Count per word: entries encode as the key
// (a string) followed by the value (a struct of tagged fields). Run the
// fuzzer with
//
//	go test ./golden/wordcount/want -run '^$' -fuzz FuzzDecodeCountsEntry -fuzztime 10s
package main

import (
	"errors"
	"math"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/pipegen/pipegen/golden/wordcount"
	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/state"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

type countsEntry struct {
	k string
	v wc.Count
}

// countsEntries are the values the round trip covers: empty and non-ASCII
// keys, a key long enough that its length takes two bytes, and the extreme
// counts.
var countsEntries = []countsEntry{
	{"", wc.Count{}},
	{"the", wc.Count{N: 1}},
	{"héllo, 世界", wc.Count{N: -1}},
	{strings.Repeat("long", 100), wc.Count{N: math.MaxInt64}},
	{"\x00\xff", wc.Count{N: math.MinInt64}},
	{"sixty-three", wc.Count{N: 63}},
	{"sixty-four", wc.Count{N: 64}},
}

// encodeCountsEntry and decodeCountsEntry write and read one entry of the
// state as a checkpoint holds it: the key, then the value, with the
// generated codec.
func encodeCountsEntry(w *codec.Writer, k string, v *wc.Count) {
	countsCodec.EncodeKey(w, k)
	countsCodec.EncodeValue(w, v)
}

func decodeCountsEntry(r *codec.Reader) (string, *wc.Count) {
	return countsCodec.DecodeKey(r), countsCodec.DecodeValue(r)
}

func encodeCounts(k string, v wc.Count) []byte {
	w := codec.NewWriter(nil)
	encodeCountsEntry(w, k, &v)
	return w.Bytes()
}

func TestCountsRoundTrip(t *testing.T) {
	for _, e := range countsEntries {
		data := encodeCounts(e.k, e.v)
		r := codec.NewReader(data)
		k, v := decodeCountsEntry(r)
		if err := r.Err(); err != nil {
			t.Fatalf("decode %q %+v: %v", e.k, e.v, err)
		}
		if k != e.k || *v != e.v {
			t.Errorf("round trip of %q %+v gave %q %+v", e.k, e.v, k, *v)
		}
		if r.Remaining() != 0 {
			t.Errorf("round trip of %q %+v left %d bytes unread", e.k, e.v, r.Remaining())
		}
	}
}

// TestCountsZeroIsEmpty: a zero field is left out, so a zero count is an
// empty struct.
func TestCountsZeroIsEmpty(t *testing.T) {
	if got := encodeCounts("", wc.Count{}); string(got) != "\x00\x00" {
		t.Errorf("the zero entry encodes as %x, want 0000 (an empty key and an empty struct)", got)
	}
}

// TestCountsTruncated: every strict prefix of an entry is an error, never
// a shorter value.
func TestCountsTruncated(t *testing.T) {
	for _, e := range countsEntries {
		data := encodeCounts(e.k, e.v)
		for n := range len(data) {
			r := codec.NewReader(data[:n])
			decodeCountsEntry(r)
			if !errors.Is(r.Err(), codec.ErrCorrupt) {
				t.Errorf("%d of the %d bytes of %q %+v: err %v, want codec.ErrCorrupt", n, len(data), e.k, e.v, r.Err())
			}
		}
	}
}

// TestCountsSnapshotRestore goes through the memory state's snapshot and
// restore, as a checkpoint does: every key lands in its key group's
// section and comes back.
func TestCountsSnapshotRestore(t *testing.T) {
	const maxP = 8
	st := state.NewMemory[string, wc.Count]()
	for _, e := range countsEntries {
		st.Put(e.k, &wc.Count{N: e.v.N})
	}
	sec := state.NewSections(0, maxP)
	keyGroup := func(k string) int { return int(hashKeyCounts(k) % maxP) }
	if err := st.Snapshot(sec, keyGroup, encodeCountsEntry); err != nil {
		t.Fatal(err)
	}
	back := state.NewMemory[string, wc.Count]()
	for i := range sec.W {
		if err := back.Restore(sec.W[i].Bytes(), decodeCountsEntry); err != nil {
			t.Fatalf("restore key group %d: %v", i, err)
		}
	}
	if back.Len() != st.Len() {
		t.Fatalf("restored %d keys, want %d", back.Len(), st.Len())
	}
	for _, e := range countsEntries {
		if v := back.Get(e.k); v == nil || *v != e.v {
			t.Errorf("key %q restored as %v, want %+v", e.k, v, e.v)
		}
	}
}

// TestCountsUnknownFields: a Count written by a later version, with fields
// this one does not know (id 99, of every wire type, before and after N),
// reads as its N; one written by an earlier version, without N, reads as
// zero.
func TestCountsUnknownFields(t *testing.T) {
	w := codec.NewWriter(nil)
	w.String("word")
	m := w.Begin()
	unknown := func() {
		w.Tag(99, codec.Varint)
		w.Uvarint(1 << 40)
		w.Tag(99, codec.Fixed64)
		w.Float64(math.Pi)
		w.Tag(99, codec.Bytes)
		w.String("a field from the future")
		w.Tag(99, codec.Fixed32)
		w.Float32(-1)
		w.Tag(100, codec.Bytes)
		n := w.Begin()
		w.Tag(1, codec.Varint) // a nested struct: its fields are not N
		w.Varint(-5)
		w.End(n)
	}
	unknown()
	w.Tag(1, codec.Varint)
	w.Varint(42)
	unknown()
	w.End(m)
	r := codec.NewReader(w.Bytes())
	k, v := decodeCountsEntry(r)
	if r.Err() != nil || k != "word" || v.N != 42 {
		t.Errorf("with unknown fields: got %q %+v, err %v; want \"word\" {N:42}", k, *v, r.Err())
	}

	w = codec.NewWriter(nil)
	w.String("old")
	m = w.Begin()
	unknown()
	w.End(m)
	r = codec.NewReader(w.Bytes())
	k, v = decodeCountsEntry(r)
	if r.Err() != nil || k != "old" || v.N != 0 {
		t.Errorf("without N: got %q %+v, err %v; want \"old\" {N:0}", k, *v, r.Err())
	}
}

// TestCountsWrongWireType: a known field whose type changed cannot be
// read: the decoder reports it, and does not panic.
func TestCountsWrongWireType(t *testing.T) {
	for _, wt := range []codec.WireType{codec.Fixed64, codec.Bytes, codec.Fixed32} {
		w := codec.NewWriter(nil)
		w.String("word")
		m := w.Begin()
		w.Tag(1, wt)
		switch wt {
		case codec.Fixed64:
			w.Float64(1)
		case codec.Bytes:
			w.String("42")
		case codec.Fixed32:
			w.Float32(1)
		}
		w.End(m)
		r := codec.NewReader(w.Bytes())
		decodeCountsEntry(r)
		if !errors.Is(r.Err(), codec.ErrCorrupt) || !strings.Contains(r.Err().Error(), "field 1 has wire type") {
			t.Errorf("N as wire type %d: err %v, want a wire type error", wt, r.Err())
		}
	}
	// An unknown field of a wire type that does not exist cannot be
	// skipped.
	r := codec.NewReader([]byte{0x00, 0x02, 2<<3 | 3, 0x00})
	decodeCountsEntry(r)
	if !errors.Is(r.Err(), codec.ErrCorrupt) {
		t.Errorf("wire type 3: err %v, want codec.ErrCorrupt", r.Err())
	}
}

// TestCountsHugeCount: lengths beyond the input are errors, found without
// allocating what they claim.
func TestCountsHugeCount(t *testing.T) {
	for _, data := range [][]byte{
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, // key length 2^64-1
		{0x00, 0xff, 0xff, 0xff, 0xff, 0x0f},                         // value length 2^32-1
		{0x00, 0x04, 0x9a, 0x06, 0xff, 0x7f},                         // field 99 of 16383 bytes
	} {
		r := codec.NewReader(data)
		alloc := allocated(func() { decodeCountsEntry(r) })
		if !errors.Is(r.Err(), codec.ErrCorrupt) {
			t.Errorf("%x: err %v, want codec.ErrCorrupt", data, r.Err())
		}
		if alloc > 1<<20 {
			t.Errorf("%x: decoding allocated %d bytes", data, alloc)
		}
	}
}

// allocated returns about the bytes f allocates: runtime/metrics counts
// small objects a span (8 KiB or more) at a time, and counts what other
// goroutines allocate meanwhile. Unlike runtime.ReadMemStats it does not
// stop the world: fast enough to run on every input of a fuzzer.
func allocated(f func()) uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	before := s[0].Value.Uint64()
	f()
	metrics.Read(s)
	return s[0].Value.Uint64() - before
}

// FuzzDecodeCountsEntry feeds arbitrary bytes to the decoder: it returns,
// with an error or with an entry that encodes and decodes to itself, and
// allocates no more than the input could fill.
func FuzzDecodeCountsEntry(f *testing.F) {
	for _, e := range countsEntries {
		f.Add(encodeCounts(e.k, e.v))
	}
	f.Add([]byte{})
	f.Add([]byte{0x00, 0x05, 0x08, 0x54, 0x9a, 0x06, 0x00}) // N 42, field 99 empty
	f.Fuzz(func(t *testing.T, data []byte) {
		var r *codec.Reader
		var k string
		var v *wc.Count
		decode := func() { r = codec.NewReader(data); k, v = decodeCountsEntry(r) }
		// Linear in the input (a reader per nested value, and what the
		// bytes spell out), give or take the spans the allocator counts
		// at once. The least of two runs leaves out what the fuzzer's
		// goroutines allocate meanwhile.
		if alloc := min(allocated(decode), allocated(decode)); alloc > 1<<20+128*uint64(len(data)) {
			t.Errorf("decoding %d bytes allocated %d", len(data), alloc)
		}
		if r.Err() != nil {
			if !errors.Is(r.Err(), codec.ErrCorrupt) {
				t.Errorf("error %v does not wrap codec.ErrCorrupt", r.Err())
			}
			return
		}
		r2 := codec.NewReader(encodeCounts(k, *v))
		k2, v2 := decodeCountsEntry(r2)
		if r2.Err() != nil || k2 != k || *v2 != *v {
			t.Errorf("decoded %q %+v, which encodes and decodes to %q %+v (err %v)", k, *v, k2, *v2, r2.Err())
		}
	})
}
