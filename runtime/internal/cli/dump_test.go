package cli

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/schema"
)

// TestDumpDecoder decodes a value written the way generated serializers
// write one (fields tagged with their ids, zero fields left out, a set
// pointer field as its value, slices and maps framed with their length)
// by its schema alone, with a field this schema does not know skipped.
func TestDumpDecoder(t *testing.T) {
	const s = "example.com/p.Acc{1 N int64; 2 Name string; 3 Ratio float64; 4 On bool; 5 In *example.com/p.Inner{1 X uint32}; " +
		"6 List []int64; 7 By map[string]int64; 8 At time.Time; 9 Raw []uint8; 10 Zero int64; 11 Again example.com/p.Inner}"
	at := time.Date(2026, 12, 1, 10, 0, 0, 5, time.UTC)
	w := codec.NewWriter(nil)
	m := w.Begin()
	w.Tag(1, codec.Varint)
	w.Varint(-7)
	w.Tag(2, codec.Bytes)
	w.String("abc")
	w.Tag(3, codec.Fixed64)
	w.Float64(0.5)
	w.Tag(4, codec.Varint)
	w.Bool(true)
	w.Tag(5, codec.Bytes) // a set pointer to a struct: the struct
	m2 := w.Begin()
	w.Tag(1, codec.Varint)
	w.Uvarint(9)
	w.End(m2)
	w.Tag(6, codec.Bytes)
	m3 := w.Begin()
	w.Uvarint(2)
	w.Varint(1)
	w.Varint(-2)
	w.End(m3)
	w.Tag(7, codec.Bytes)
	m4 := w.Begin()
	w.Uvarint(1)
	w.String("k")
	w.Varint(3)
	w.End(m4)
	w.Tag(8, codec.Bytes)
	w.Time(at)
	w.Tag(9, codec.Bytes)
	w.ByteSlice([]byte{1, 2})
	w.Tag(12, codec.Varint) // a field of a later version
	w.Varint(99)
	w.Tag(11, codec.Bytes)
	m5 := w.Begin()
	w.Tag(1, codec.Varint)
	w.Uvarint(4)
	w.End(m5)
	w.End(m)

	typ, err := schema.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	r := codec.NewReader(w.Bytes())
	got := (&decoder{}).value(r, typ)
	if err := r.Err(); err != nil || r.More() {
		t.Fatalf("decode: %v, %d bytes left", err, r.Remaining())
	}
	js, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Again":{"X":4},"At":"2026-12-01T10:00:00.000000005Z","By":[["k",3]],"In":{"X":9},"List":[1,-2],"N":-7,"Name":"abc","On":true,"Ratio":0.5,"Raw":"AQI="}`
	if string(js) != want {
		t.Errorf("decoded\n%s\nwant\n%s", js, want)
	}
}
