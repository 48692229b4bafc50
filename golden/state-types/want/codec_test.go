// Tests of the generated serializers of the state of "accs" (a Key and an
// Acc per key: every kind of type the serializers handle) and "sensors" (a
// Label and a Reading, which refers to itself). Written by hand: go test
// ./golden -update leaves *_test.go files in want/ alone.
//
// Decoding preserves values, with these normalizations (sameState checks
// values modulo them, TestNormalizations pins each one):
//   - a time comes back as the same instant in UTC, without its location
//     and monotonic clock reading;
//   - an empty slice, map or []byte held directly in a struct field is left
//     out, so it comes back nil; a nil one inside a slice, map or array
//     comes back empty (non-nil), and a nil []byte anywhere stays nil;
//   - floats keep their bits: NaN payloads and -0 survive.
//
// Run the fuzzers with
//
//	go test ./golden/state-types/want -run '^$' -fuzz FuzzDecodeAccsEntry -fuzztime 10s
//	go test ./golden/state-types/want -run '^$' -fuzz FuzzDecodeSensorsEntry -fuzztime 10s
package main

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"reflect"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/pipegen/pipegen/golden/state-types"
	"github.com/pipegen/pipegen/runtime/codec"
	"github.com/pipegen/pipegen/runtime/state"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

type (
	acc     = statetypes.Acc
	reading = statetypes.Reading
	inner   = statetypes.Inner
	trie    = statetypes.Trie
	node    = statetypes.Node
	note    = struct {
		N int
		S *string
	}
)

func ptr[T any](v T) *T { return &v }

var (
	plus0530 = time.FixedZone("IST", 5*3600+1800)
	minus7   = time.FixedZone("", -7*3600)
	// nan is a NaN with a payload, which the encoding keeps.
	nan   = math.Float64frombits(0x7ff8_0000_0000_0123)
	nan32 = math.Float32frombits(0x7fc0_0123)
	neg0  = math.Copysign(0, -1)
	now   = time.Now()
)

// fullAcc sets every field, most of them to extreme values.
func fullAcc() acc {
	var a acc
	a.Count = math.MaxUint32
	a.Small = math.MaxUint8
	a.Delta = math.MinInt16
	a.Big = math.MaxUint64
	a.Neg = math.MinInt64
	a.Tiny = math.MinInt8
	a.Wide = math.MaxUint16
	a.Total = nan
	a.Max = statetypes.Celsius(math.Inf(-1))
	a.Label = "étiquette"
	a.Seen = true
	a.Span = statetypes.Span{
		First: time.Date(2024, 2, 29, 23, 59, 59, 999_999_999, plus0530),
		Last:  time.Date(1969, 12, 31, 23, 59, 59, 1, minus7), // before the epoch, with nanoseconds
		Width: math.MinInt64,
	}
	a.Meta.Sensors = math.MaxInt
	a.Meta.Last = "z"
	a.Meta.Hot = &inner{Name: "hot", Count: math.MinInt32, Ratio: nan32}
	a.Hottest = &inner{} // a pointer to a zero value is not nil
	a.Best = ptr(0)
	a.Items = []inner{{}, {Name: "a", Count: 1, Ratio: float32(neg0)}, {Name: "b", Count: math.MaxInt32, Ratio: float32(math.Inf(1))}}
	a.Blob = []byte{0, 1, 0xff}
	a.ByTag = map[string][]int{"": nil, "x": {math.MinInt, 0, math.MaxInt}}
	a.ByID = map[int64]*inner{math.MinInt64: nil, 0: {}, math.MaxInt64: {Name: "max"}}
	a.Top = [3]float32{nan32, float32(neg0), float32(math.Inf(1))}
	a.Grid = [2][2]int8{{math.MinInt8, math.MaxInt8}, {0, -1}}
	a.Labels = []statetypes.Label{"", "ß"}
	a.Pauses = []*int{nil, ptr(0), ptr(-5)}
	a.Stamps = map[statetypes.Label]time.Time{
		"zero":  {},
		"now":   now, // local, with a monotonic clock reading
		"far":   time.Date(9999, 12, 31, 23, 59, 59, 999_999_999, plus0530),
		"first": time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
	}
	a.Temps = []statetypes.Celsius{statetypes.Celsius(neg0), statetypes.Celsius(nan), 1e300}
	a.Depth = ptr(ptr(-7))
	a.Notes = []note{{}, {N: 1, S: ptr("")}, {N: -1, S: ptr("s")}}
	a.TagLists = [][]string{nil, {}, {""}, {"a", "b"}}
	a.Gaps = []time.Duration{math.MinInt64, 0, math.MaxInt64}
	a.Extra = &[]uint32{0, math.MaxUint32}
	a.Words = trie{'a': {'$': {}}, 'b': {}, -1: nil}
	a.Tags = statetypes.Tags{"x"}
	a.Tree = node{Name: "root", Kids: []node{{Name: "a"}, {Name: "b", Kids: []node{{Name: "c"}}}}}
	return a
}

// emptyAcc has empty rather than nil slices and maps, and pointers to
// empty values.
func emptyAcc() acc {
	return acc{
		Items:    []inner{},
		Blob:     []byte{},
		ByTag:    map[string][]int{},
		ByID:     map[int64]*inner{},
		Labels:   []statetypes.Label{},
		Pauses:   []*int{},
		Stamps:   map[statetypes.Label]time.Time{},
		Depth:    new(*int),
		Notes:    []note{},
		TagLists: [][]string{},
		Extra:    &[]uint32{},
		Words:    trie{},
		Tags:     statetypes.Tags{},
		Tree:     node{Kids: []node{}},
	}
}

type accsEntry struct {
	k statetypes.Key
	v acc
}

func accsEntries() []accsEntry {
	return []accsEntry{
		{statetypes.Key{}, acc{}},
		{statetypes.Key{Region: "région", Shard: math.MinInt}, fullAcc()},
		{statetypes.Key{Region: strings.Repeat("k", 300), Shard: math.MaxInt}, emptyAcc()},
		{statetypes.Key{Region: "north", Shard: 1}, acc{Count: 1, Total: neg0, Hottest: &inner{}, Best: ptr(0)}},
	}
}

type sensorsEntry struct {
	k statetypes.Label
	v reading
}

func sensorsEntries() []sensorsEntry {
	return []sensorsEntry{
		{"", reading{}},
		{"s1", reading{
			Sensor: "s1", Temp: statetypes.Celsius(nan), Max: statetypes.Celsius(neg0), Count: math.MinInt,
			At: time.Date(2024, 3, 1, 10, 0, 0, 123_456_789, minus7), Every: math.MaxInt64,
			Flags: [2]bool{true, false}, Notes: map[string]string{"": "", "k": "v"},
			Prev: &reading{Sensor: "s1", Count: 2, Prev: &reading{Count: 1}},
		}},
		{"ü", reading{Prev: &reading{}}},
	}
}

// The entry functions write and read one entry of a state as a checkpoint
// holds it: the key, then the value, with the generated codec.
func encodeAccsEntry(w *codec.Writer, k statetypes.Key, v *acc) {
	accsCodec.EncodeKey(w, k)
	accsCodec.EncodeValue(w, v)
}

func decodeAccsEntry(r *codec.Reader) (statetypes.Key, *acc) {
	return accsCodec.DecodeKey(r), accsCodec.DecodeValue(r)
}

func encodeSensorsEntry(w *codec.Writer, k statetypes.Label, v *reading) {
	sensorsCodec.EncodeKey(w, k)
	sensorsCodec.EncodeValue(w, v)
}

func decodeSensorsEntry(r *codec.Reader) (statetypes.Label, *reading) {
	return sensorsCodec.DecodeKey(r), sensorsCodec.DecodeValue(r)
}

func encodeAccs(k statetypes.Key, v acc) []byte {
	w := codec.NewWriter(nil)
	encodeAccsEntry(w, k, &v)
	return w.Bytes()
}

func encodeSensors(k statetypes.Label, v reading) []byte {
	w := codec.NewWriter(nil)
	encodeSensorsEntry(w, k, &v)
	return w.Bytes()
}

func decodeAccs(data []byte) (statetypes.Key, *acc, error) {
	r := codec.NewReader(data)
	k, v := decodeAccsEntry(r)
	return k, v, r.Err()
}

func decodeSensors(data []byte) (statetypes.Label, *reading, error) {
	r := codec.NewReader(data)
	k, v := decodeSensorsEntry(r)
	return k, v, r.Err()
}

// sameState lists how got differs from want, modulo the normalizations of
// decoding (see the package comment).
func sameState(want, got any) []string {
	var out []string
	diffValue(&out, func() string { return "" }, reflect.ValueOf(want), reflect.ValueOf(got))
	return out
}

var timeType = reflect.TypeFor[time.Time]()

// diffValue appends to out how got differs from want. path names the
// value; it is called only for a difference, so that a deep value (a Tree
// 10000 levels deep) is compared in linear time: names built on every
// level took quadratic time, seconds for a large input of the fuzzer, which
// gives up on an input after 10 s ("fuzzing process hung or terminated
// unexpectedly", with a crasher that passes when run alone).
func diffValue(out *[]string, path func() string, want, got reflect.Value) {
	bad := func(format string, args ...any) {
		*out = append(*out, path()+": "+fmt.Sprintf(format, args...))
	}
	if want.Type() == timeType {
		w, g := want.Interface().(time.Time), got.Interface().(time.Time)
		if !w.Equal(g) {
			bad("time %v, want %v", g, w)
		}
		if g.Location() != time.UTC || g != g.Round(0) {
			bad("time %v is not plain UTC", g)
		}
		return
	}
	switch want.Kind() {
	case reflect.Float32, reflect.Float64:
		if math.Float64bits(want.Float()) != math.Float64bits(got.Float()) {
			bad("%v (bits %x), want %v (bits %x)", got.Float(), math.Float64bits(got.Float()), want.Float(), math.Float64bits(want.Float()))
		}
	case reflect.Pointer:
		if want.IsNil() || got.IsNil() {
			if want.IsNil() != got.IsNil() {
				bad("nil is %t, want %t", got.IsNil(), want.IsNil())
			}
			return
		}
		diffValue(out, func() string { return "(*" + path() + ")" }, want.Elem(), got.Elem())
	case reflect.Struct:
		for i := range want.NumField() {
			diffValue(out, func() string { return path() + "." + want.Type().Field(i).Name }, want.Field(i), got.Field(i))
		}
	case reflect.Slice, reflect.Array:
		if want.Len() != got.Len() {
			bad("length %d, want %d", got.Len(), want.Len())
			return
		}
		for i := range want.Len() {
			diffValue(out, func() string { return fmt.Sprintf("%s[%d]", path(), i) }, want.Index(i), got.Index(i))
		}
	case reflect.Map:
		if want.Len() != got.Len() {
			bad("%d entries, want %d", got.Len(), want.Len())
			return
		}
		for it := want.MapRange(); it.Next(); {
			g := got.MapIndex(it.Key())
			if !g.IsValid() {
				bad("no key %#v", it.Key())
				continue
			}
			k := it.Key()
			diffValue(out, func() string { return fmt.Sprintf("%s[%#v]", path(), k) }, it.Value(), g)
		}
	default:
		if !want.Equal(got) {
			bad("%#v, want %#v", got, want)
		}
	}
}

func TestAccsRoundTrip(t *testing.T) {
	for i, e := range accsEntries() {
		data := encodeAccs(e.k, e.v)
		k, v, err := decodeAccs(data)
		if err != nil {
			t.Fatalf("entry %d: decode: %v", i, err)
		}
		for _, d := range append(sameState(e.k, k), sameState(e.v, *v)...) {
			t.Errorf("entry %d: %s", i, d)
		}
	}
}

func TestSensorsRoundTrip(t *testing.T) {
	for i, e := range sensorsEntries() {
		data := encodeSensors(e.k, e.v)
		k, v, err := decodeSensors(data)
		if err != nil {
			t.Fatalf("entry %d: decode: %v", i, err)
		}
		for _, d := range append(sameState(e.k, k), sameState(e.v, *v)...) {
			t.Errorf("entry %d: %s", i, d)
		}
	}
}

// TestNormalizations pins what decoding changes, and what it must not.
func TestNormalizations(t *testing.T) {
	in := emptyAcc()
	in.TagLists = [][]string{nil}
	in.ByTag = map[string][]int{"k": nil}
	in.Words = trie{'a': nil}
	in.Total = neg0
	in.Max = statetypes.Celsius(nan)
	in.Span.First = time.Now().In(plus0530)
	_, got, err := decodeAccs(encodeAccs(statetypes.Key{}, in))
	if err != nil {
		t.Fatal(err)
	}
	// Empty in a field: nil.
	if got.Items != nil || got.Blob != nil || got.ByID != nil || got.Stamps != nil || got.Labels != nil || got.Tags != nil || got.Tree.Kids != nil {
		t.Errorf("empty slices and maps in fields should come back nil: %+v", got)
	}
	// Nil inside a slice or map: empty.
	if len(got.TagLists) != 1 || got.TagLists[0] == nil || len(got.TagLists[0]) != 0 {
		t.Errorf("TagLists = %#v, want [][]string{{}}", got.TagLists)
	}
	if s, ok := got.ByTag["k"]; !ok || s == nil || len(s) != 0 {
		t.Errorf("ByTag = %#v, want {\"k\": {}}", got.ByTag)
	}
	if m, ok := got.Words['a']; !ok || m == nil || len(m) != 0 {
		t.Errorf("Words = %#v, want {'a': {}}", got.Words)
	}
	// Pointers to empty values stay set.
	if got.Depth == nil || *got.Depth != nil {
		t.Errorf("Depth = %v, want a pointer to a nil *int", got.Depth)
	}
	if got.Extra == nil || *got.Extra == nil || len(*got.Extra) != 0 {
		t.Errorf("Extra = %v, want a pointer to an empty slice", got.Extra)
	}
	// Floats keep their bits.
	if !math.Signbit(got.Total) || got.Total != 0 {
		t.Errorf("Total = %v, want -0", got.Total)
	}
	if math.Float64bits(float64(got.Max)) != math.Float64bits(nan) {
		t.Errorf("Max has bits %x, want the NaN %x", math.Float64bits(float64(got.Max)), math.Float64bits(nan))
	}
	// Times: the instant, in UTC.
	if !got.Span.First.Equal(in.Span.First) || got.Span.First.Location() != time.UTC || got.Span.First != got.Span.First.Round(0) {
		t.Errorf("Span.First = %v, want %v in UTC without a monotonic reading", got.Span.First, in.Span.First)
	}
}

// TestDecodeCopies: decoded values do not share the input's memory, which
// the caller may reuse.
func TestDecodeCopies(t *testing.T) {
	data := encodeAccs(statetypes.Key{Region: "r"}, fullAcc())
	k, v, err := decodeAccs(data)
	if err != nil {
		t.Fatal(err)
	}
	clear(data)
	if k.Region != "r" || string(v.Blob) != "\x00\x01\xff" || v.Label != "étiquette" {
		t.Errorf("after the input was cleared: key %+v, Blob %x, Label %q", k, v.Blob, v.Label)
	}
}

// TestTruncated: every strict prefix of an entry is an error, never a
// shorter value.
func TestTruncated(t *testing.T) {
	check := func(name string, data []byte, decode func([]byte) error) {
		for n := range len(data) {
			if err := decode(data[:n]); !errors.Is(err, codec.ErrCorrupt) {
				t.Errorf("%s: %d of %d bytes: err %v, want codec.ErrCorrupt", name, n, len(data), err)
				return
			}
		}
	}
	for i, e := range accsEntries() {
		check(fmt.Sprintf("accs entry %d", i), encodeAccs(e.k, e.v), func(b []byte) error { _, _, err := decodeAccs(b); return err })
	}
	for i, e := range sensorsEntries() {
		check(fmt.Sprintf("sensors entry %d", i), encodeSensors(e.k, e.v), func(b []byte) error { _, _, err := decodeSensors(b); return err })
	}
}

// TestSnapshotRestore goes through the memory state's snapshot and
// restore, as a checkpoint does.
func TestSnapshotRestore(t *testing.T) {
	const maxP = 16
	accs := state.NewMemory[statetypes.Key, acc]()
	for _, e := range accsEntries() {
		accs.Put(e.k, ptr(e.v))
	}
	sec := state.NewSections(0, maxP)
	if err := accs.Snapshot(sec, func(k statetypes.Key) int { return int(hashKeyAccs(k) % maxP) }, encodeAccsEntry); err != nil {
		t.Fatal(err)
	}
	back := state.NewMemory[statetypes.Key, acc]()
	for i := range sec.W {
		if err := back.Restore(sec.W[i].Bytes(), decodeAccsEntry); err != nil {
			t.Fatalf("restore key group %d: %v", i, err)
		}
	}
	if back.Len() != accs.Len() {
		t.Fatalf("restored %d keys, want %d", back.Len(), accs.Len())
	}
	for _, e := range accsEntries() {
		got := back.Get(e.k)
		if got == nil {
			t.Errorf("key %+v was not restored", e.k)
			continue
		}
		for _, d := range sameState(e.v, *got) {
			t.Errorf("key %+v: %s", e.k, d)
		}
	}

	sensors := state.NewMemory[statetypes.Label, reading]()
	for _, e := range sensorsEntries() {
		sensors.Put(e.k, ptr(e.v))
	}
	sec = state.NewSections(0, maxP)
	if err := sensors.Snapshot(sec, func(k statetypes.Label) int { return int(hashKeySensors(k) % maxP) }, encodeSensorsEntry); err != nil {
		t.Fatal(err)
	}
	backS := state.NewMemory[statetypes.Label, reading]()
	for i := range sec.W {
		if err := backS.Restore(sec.W[i].Bytes(), decodeSensorsEntry); err != nil {
			t.Fatalf("restore key group %d: %v", i, err)
		}
	}
	for _, e := range sensorsEntries() {
		got := backS.Get(e.k)
		if got == nil {
			t.Errorf("key %q was not restored", e.k)
			continue
		}
		for _, d := range sameState(e.v, *got) {
			t.Errorf("key %q: %s", e.k, d)
		}
	}
}

// unknownFields writes fields that no version of the types here has:
// id 99 of every wire type, a nested struct and a huge id.
func unknownFields(w *codec.Writer) {
	w.Tag(99, codec.Varint)
	w.Uvarint(math.MaxUint64)
	w.Tag(99, codec.Fixed64)
	w.Float64(math.Pi)
	w.Tag(99, codec.Bytes)
	w.String("a field from the future")
	w.Tag(99, codec.Fixed32)
	w.Float32(-1)
	w.Tag(100, codec.Bytes)
	m := w.Begin()
	w.Tag(1, codec.Varint) // field 1 of some other struct, not Count
	w.Varint(-5)
	w.Tag(12, codec.Fixed32) // nor Span
	w.Float32(1)
	w.End(m)
	w.Tag(math.MaxUint32, codec.Bytes)
	w.ByteSlice([]byte{0xff, 0xff, 0xff}) // not valid as anything: skipped whole
}

// TestUnknownAndMissingFields: an entry written by another version of the
// types, which has fields this one does not know and lacks some it does:
// the unknown ones are skipped, the missing ones read as zero.
func TestUnknownAndMissingFields(t *testing.T) {
	first := time.Date(2024, 3, 1, 10, 0, 0, 5, plus0530)
	w := codec.NewWriter(nil)
	// The key: Region, no Shard.
	m := w.Begin()
	unknownFields(w)
	w.Tag(1, codec.Bytes)
	w.String("north")
	unknownFields(w)
	w.End(m)
	// The value: Count, Span with only First, ByID with an Inner of a
	// later version, and nothing else.
	m = w.Begin()
	unknownFields(w)
	w.Tag(1, codec.Varint)
	w.Uvarint(7)
	w.Tag(12, codec.Bytes)
	span := w.Begin()
	unknownFields(w)
	w.Tag(1, codec.Bytes)
	w.Time(first)
	w.End(span)
	w.Tag(40, codec.Bytes) // a struct field added after Tree
	fut := w.Begin()
	unknownFields(w)
	w.End(fut)
	w.Tag(20, codec.Bytes)
	byID := w.Begin()
	w.Uvarint(1)
	w.Varint(5)
	w.Bool(true)
	in := w.Begin()
	w.Tag(1, codec.Bytes)
	w.String("x")
	w.Tag(4, codec.Fixed32) // Inner has three fields
	w.Float32(1)
	w.End(in)
	w.End(byID)
	unknownFields(w)
	w.End(m)

	k, v, err := decodeAccs(w.Bytes())
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	want := acc{Count: 7, Span: statetypes.Span{First: first}, ByID: map[int64]*inner{5: {Name: "x"}}}
	for _, d := range append(sameState(statetypes.Key{Region: "north"}, k), sameState(want, *v)...) {
		t.Error(d)
	}

	// A Reading of another version: Sensor, unknown fields, and a Prev
	// that holds only Count.
	w = codec.NewWriter(nil)
	w.String("s1")
	m = w.Begin()
	w.Tag(1, codec.Bytes)
	w.String("s1")
	unknownFields(w)
	w.Tag(9, codec.Bytes)
	prev := w.Begin()
	w.Tag(4, codec.Varint)
	w.Varint(3)
	w.End(prev)
	w.End(m)
	sk, sv, err := decodeSensors(w.Bytes())
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	for _, d := range append(sameState(statetypes.Label("s1"), sk), sameState(reading{Sensor: "s1", Prev: &reading{Count: 3}}, *sv)...) {
		t.Error(d)
	}
}

// corruptAcc writes an entry whose value holds only what field writes.
func corruptAcc(field func(w *codec.Writer)) []byte {
	w := codec.NewWriter(nil)
	encodeKey(w, &statetypes.Key{Region: "r"})
	m := w.Begin()
	w.Tag(1, codec.Varint)
	w.Uvarint(1)
	field(w)
	w.End(m)
	return w.Bytes()
}

// TestCorrupt: a known field of another wire type (its type changed), and
// values no encoder writes, are errors; decoding does not panic.
func TestCorrupt(t *testing.T) {
	for _, c := range []struct {
		name, err string
		field     func(w *codec.Writer)
	}{
		{"Count as bytes", "field 1 has wire type 2, want 0", func(w *codec.Writer) { w.Tag(1, codec.Bytes); w.String("1") }},
		{"Total as varint", "field 8 has wire type 0, want 1", func(w *codec.Writer) { w.Tag(8, codec.Varint); w.Uvarint(1) }},
		{"Max as float32", "field 9 has wire type 5, want 1", func(w *codec.Writer) { w.Tag(9, codec.Fixed32); w.Float32(1) }},
		{"Span as varint", "field 12 has wire type 0, want 2", func(w *codec.Writer) { w.Tag(12, codec.Varint); w.Uvarint(1) }},
		{"Span.Width as float64", "field 3 has wire type 1, want 0", func(w *codec.Writer) {
			w.Tag(12, codec.Bytes)
			m := w.Begin()
			w.Tag(3, codec.Fixed64)
			w.Float64(1)
			w.End(m)
		}},
		{"Hottest as varint", "field 14 has wire type 0, want 2", func(w *codec.Writer) { w.Tag(14, codec.Varint); w.Uvarint(1) }},
		{"Best as bytes", "field 15 has wire type 2, want 0", func(w *codec.Writer) { w.Tag(15, codec.Bytes); w.String("") }},
		{"ByID's Inner.Ratio as float64", "field 3 has wire type 1, want 5", func(w *codec.Writer) {
			w.Tag(20, codec.Bytes)
			m := w.Begin()
			w.Uvarint(1)
			w.Varint(1)
			w.Bool(true)
			in := w.Begin()
			w.Tag(3, codec.Fixed64)
			w.Float64(1)
			w.End(in)
			w.End(m)
		}},
		{"Depth as varint", "field 27 has wire type 0, want 2", func(w *codec.Writer) { w.Tag(27, codec.Varint); w.Uvarint(1) }},
		{"Seen of 2", "bad bool", func(w *codec.Writer) { w.Tag(11, codec.Varint); w.Uvarint(2) }},
		{"Pauses with a presence flag of 7", "bad bool", func(w *codec.Writer) {
			w.Tag(24, codec.Bytes)
			m := w.Begin()
			w.Uvarint(1)
			w.Uvarint(7)
			w.End(m)
		}},
		{"a time with 10^9 nanoseconds", "nanoseconds 1000000000 out of range", func(w *codec.Writer) {
			w.Tag(12, codec.Bytes)
			m := w.Begin()
			w.Tag(1, codec.Bytes)
			tm := w.Begin()
			w.Varint(0)
			w.Uvarint(1e9)
			w.End(tm)
			w.End(m)
		}},
		{"a field id beyond uint32", "field id", func(w *codec.Writer) { w.Uvarint(1<<35 | uint64(codec.Varint)); w.Uvarint(1) }},
		{"an unknown field of wire type 3", "unknown wire type 3", func(w *codec.Writer) { w.Tag(99, 3) }},
		{"an unknown field of wire type 7", "unknown wire type 7", func(w *codec.Writer) { w.Tag(99, 7) }},
		{"a slice count beyond the bytes", "count", func(w *codec.Writer) {
			w.Tag(17, codec.Bytes)
			m := w.Begin()
			w.Uvarint(1 << 62)
			w.End(m)
		}},
		{"an array count beyond the bytes", "count", func(w *codec.Writer) {
			w.Tag(21, codec.Bytes)
			m := w.Begin()
			w.Uvarint(5)
			w.Float32(1)
			w.End(m)
		}},
		{"a slice shorter than its count", "want 8 bytes", func(w *codec.Writer) {
			w.Tag(26, codec.Bytes)
			m := w.Begin()
			w.Uvarint(2)
			w.Float64(1)
			w.End(m)
		}},
		// Integers out of the range of their field's type (written from a
		// wider type, or an int from a 64-bit platform read on a 32-bit
		// one) are not truncated.
		{"Count (uint32) of 2^32", "4294967296 is out of the range of uint32", func(w *codec.Writer) { w.Tag(1, codec.Varint); w.Uvarint(1 << 32) }},
		{"Small (uint8) of 256", "256 is out of the range of uint8", func(w *codec.Writer) { w.Tag(2, codec.Varint); w.Uvarint(256) }},
		{"Delta (int16) of -32769", "-32769 is out of the range of int16", func(w *codec.Writer) { w.Tag(3, codec.Varint); w.Varint(-32769) }},
		{"Tiny (int8) of 300", "300 is out of the range of int8", func(w *codec.Writer) { w.Tag(6, codec.Varint); w.Varint(300) }},
		{"Wide (uint16) of 2^64-1", "18446744073709551615 is out of the range of uint16", func(w *codec.Writer) { w.Tag(7, codec.Varint); w.Uvarint(math.MaxUint64) }},
		{"Hottest's Inner.Count (int32) of 2^31", "2147483648 is out of the range of int32", func(w *codec.Writer) {
			w.Tag(14, codec.Bytes)
			m := w.Begin()
			w.Tag(2, codec.Varint)
			w.Varint(1 << 31)
			w.End(m)
		}},
		{"a Grid element (int8) of 128", "128 is out of the range of int8", func(w *codec.Writer) {
			w.Tag(22, codec.Bytes)
			m := w.Begin()
			w.Uvarint(1)
			row := w.Begin()
			w.Uvarint(2)
			w.Varint(0)
			w.Varint(128)
			w.End(row)
			w.End(m)
		}},
		{"a Words key (rune) of 2^40", "1099511627776 is out of the range of int32", func(w *codec.Writer) {
			w.Tag(32, codec.Bytes)
			m := w.Begin()
			w.Uvarint(1)
			w.Varint(1 << 40)
			w.ByteSlice([]byte{0}) // an empty Trie
			w.End(m)
		}},
		{"Extra's uint32 of 2^33", "8589934592 is out of the range of uint32", func(w *codec.Writer) {
			w.Tag(31, codec.Bytes)
			m := w.Begin()
			w.Uvarint(1)
			w.Uvarint(1 << 33)
			w.End(m)
		}},
	} {
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: panic: %v", c.name, p)
				}
			}()
			_, _, err = decodeAccs(corruptAcc(c.field))
		}()
		if !errors.Is(err, codec.ErrCorrupt) || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: err %v, want codec.ErrCorrupt with %q", c.name, err, c.err)
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

// allocBound is what decoding len bytes may allocate: linear in the input,
// give or take the spans the allocator counts at once. The most a byte
// spells out is an empty Node among a Tree's Kids: a reader of its own (64
// bytes) and a 40-byte element of a slice that grows by append, which
// allocates about five times its final size (Go grows large slices by a
// quarter): about 330 bytes, see wideTree.
func allocBound(n int) uint64 { return 1<<20 + 512*uint64(n) }

// deepTrie encodes an entry whose Words nest depth levels deep, each
// level's count claiming every byte that follows it.
func deepTrie(depth int) []byte {
	level := []byte{0x00} // an empty map: count 0
	for range depth {
		body := codec.NewWriter(nil)
		body.Varint('a')
		body.ByteSlice(level) // the nested map, length-delimited
		w := codec.NewWriter(nil)
		w.Uvarint(uint64(body.Len())) // the count: as large as it can be
		level = append(w.Bytes(), body.Bytes()...)
	}
	return corruptAcc(func(w *codec.Writer) {
		w.Tag(32, codec.Bytes)
		w.ByteSlice(level)
	})
}

// deepTree is deepTrie for Tree, whose Kids nest.
func deepTree(depth int) []byte {
	var fields []byte // the fields of a Node: none, at the bottom
	for range depth {
		kid := codec.NewWriter(nil)
		kid.ByteSlice(fields) // the Node, length-delimited
		kids := codec.NewWriter(nil)
		kids.Uvarint(uint64(kid.Len())) // the count: as large as it can be
		w := codec.NewWriter(nil)
		w.Tag(2, codec.Bytes)
		w.ByteSlice(append(kids.Bytes(), kid.Bytes()...))
		fields = w.Bytes()
	}
	return corruptAcc(func(w *codec.Writer) {
		w.Tag(34, codec.Bytes)
		w.ByteSlice(fields)
	})
}

// wideTree encodes an entry whose Tree has n Kids, each an empty Node of
// one byte.
func wideTree(n int) []byte {
	return corruptAcc(func(w *codec.Writer) {
		w.Tag(34, codec.Bytes)
		m := w.Begin()
		w.Tag(2, codec.Bytes)
		kids := w.Begin()
		w.Uvarint(uint64(n))
		for range n {
			w.Uvarint(0) // an empty Node: its length
		}
		w.End(kids)
		w.End(m)
	})
}

// TestHugeCounts: counts and lengths that claim more than the input holds
// are errors, and a type that nests without bound (a Trie, a Node) does
// not let every level claim the rest of the input: memory stays linear.
func TestHugeCounts(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"key length 2^64-1", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, false},
		{"Items count 2^62", corruptAcc(func(w *codec.Writer) {
			w.Tag(17, codec.Bytes)
			m := w.Begin()
			w.Uvarint(1 << 62)
			w.End(m)
		}), false},
		{"ByTag count 2^40", corruptAcc(func(w *codec.Writer) {
			w.Tag(19, codec.Bytes)
			m := w.Begin()
			w.Uvarint(1 << 40)
			w.String("k")
			w.End(m)
		}), false},
		{"Trie 400 deep", deepTrie(400), true},
		{"Tree 400 deep", deepTree(400), true},
		{"Tree with 20000 Kids", wideTree(20000), true},
	} {
		var err error
		alloc := allocated(func() { _, _, err = decodeAccs(c.data) })
		if c.ok && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if !c.ok && !errors.Is(err, codec.ErrCorrupt) {
			t.Errorf("%s: err %v, want codec.ErrCorrupt", c.name, err)
		}
		if alloc > allocBound(len(c.data)) {
			t.Errorf("%s: decoding %d bytes allocated %d", c.name, len(c.data), alloc)
		}
	}
	// A chain of 1000 readings is a value like any other.
	var r reading
	for i := range 1000 {
		r = reading{Count: i, Prev: ptr(r)}
	}
	data := encodeSensors("deep", r)
	_, got, err := decodeSensors(data)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for p := got; p != nil; p = p.Prev {
		n++
	}
	if n != 1001 || got.Count != 999 {
		t.Errorf("a chain of 1001 readings came back as %d, the first with Count %d", n, got.Count)
	}
}

// FuzzDecodeAccsEntry feeds arbitrary bytes to the decoder of "accs": it
// returns, with an error or with an entry that encodes and decodes to
// itself, and allocates no more than the input could fill.
func FuzzDecodeAccsEntry(f *testing.F) {
	for _, e := range accsEntries() {
		f.Add(encodeAccs(e.k, e.v))
	}
	f.Add([]byte{})
	f.Add(deepTrie(5))
	f.Add(deepTree(5))
	f.Fuzz(func(t *testing.T, data []byte) {
		var k statetypes.Key
		var v *acc
		var err error
		decode := func() { k, v, err = decodeAccs(data) }
		// The least of two runs leaves out what the fuzzer's goroutines
		// allocate meanwhile.
		if alloc := min(allocated(decode), allocated(decode)); alloc > allocBound(len(data)) {
			t.Errorf("decoding %d bytes allocated %d", len(data), alloc)
		}
		if err != nil {
			if !errors.Is(err, codec.ErrCorrupt) {
				t.Errorf("error %v does not wrap codec.ErrCorrupt", err)
			}
			return
		}
		k2, v2, err := decodeAccs(encodeAccs(k, *v))
		if err != nil {
			t.Fatalf("decoded %+v %+v, which does not decode once encoded: %v", k, *v, err)
		}
		for _, d := range append(sameState(k, k2), sameState(*v, *v2)...) {
			t.Errorf("decoded, encoded and decoded again: %s", d)
		}
	})
}

// FuzzDecodeSensorsEntry is FuzzDecodeAccsEntry for "sensors".
func FuzzDecodeSensorsEntry(f *testing.F) {
	for _, e := range sensorsEntries() {
		f.Add(encodeSensors(e.k, e.v))
	}
	f.Add([]byte{})
	chain := reading{Count: 1}
	for range 3 {
		chain = reading{Sensor: "s", Prev: ptr(chain)}
	}
	f.Add(encodeSensors("chain", chain))
	f.Fuzz(func(t *testing.T, data []byte) {
		var k statetypes.Label
		var v *reading
		var err error
		decode := func() { k, v, err = decodeSensors(data) }
		if alloc := min(allocated(decode), allocated(decode)); alloc > allocBound(len(data)) {
			t.Errorf("decoding %d bytes allocated %d", len(data), alloc)
		}
		if err != nil {
			if !errors.Is(err, codec.ErrCorrupt) {
				t.Errorf("error %v does not wrap codec.ErrCorrupt", err)
			}
			return
		}
		k2, v2, err := decodeSensors(encodeSensors(k, *v))
		if err != nil {
			t.Fatalf("decoded %q %+v, which does not decode once encoded: %v", k, *v, err)
		}
		for _, d := range append(sameState(k, k2), sameState(*v, *v2)...) {
			t.Errorf("decoded, encoded and decoded again: %s", d)
		}
	})
}

// TestCycles: state that holds itself, through a pointer, a map or a
// slice, fails the snapshot with an error naming the type, instead of
// overflowing the stack; the other entries and a long chain still encode.
func TestCycles(t *testing.T) {
	loop := &reading{Sensor: "loop"}
	loop.Prev = loop
	ring := &reading{Sensor: "ring", Prev: &reading{Prev: &reading{}}}
	ring.Prev.Prev.Prev = ring
	words := trie{'a': {}}
	words['b'] = words
	tree := node{Name: "root", Kids: make([]node, 2)}
	tree.Kids[1] = tree // its Kids share their array with tree's
	for _, c := range []struct {
		name, typ string
		snapshot  func(sec *state.Sections) error
	}{
		{"a reading that is its own Prev", "statetypes.Reading", func(sec *state.Sections) error {
			return snapshotSensors(sec, map[statetypes.Label]*reading{"loop": loop, "ok": {Sensor: "ok"}})
		}},
		{"a ring of three readings", "statetypes.Reading", func(sec *state.Sections) error {
			return snapshotSensors(sec, map[statetypes.Label]*reading{"ring": ring})
		}},
		{"a trie that holds itself", "statetypes.Trie", func(sec *state.Sections) error {
			return snapshotAccs(sec, acc{Words: words})
		}},
		{"a tree that is its own kid", "statetypes.Node", func(sec *state.Sections) error {
			return snapshotAccs(sec, acc{Tree: tree})
		}},
	} {
		sec := state.NewSections(0, 4)
		if err := c.snapshot(sec); err != nil {
			t.Fatal(err)
		}
		var err error
		for i := range sec.W {
			err = cmp.Or(err, sec.W[i].Err())
		}
		if !errors.Is(err, codec.ErrTooDeep) || !strings.Contains(err.Error(), "a "+c.typ+" ") {
			t.Errorf("%s: err %v, want codec.ErrTooDeep naming %s", c.name, err, c.typ)
		}
	}

	// A long chain is a value like any other.
	var r reading
	for i := range 20_000 {
		r = reading{Count: i, Prev: ptr(r)}
	}
	sec := state.NewSections(0, 1)
	if err := snapshotSensors(sec, map[statetypes.Label]*reading{"deep": &r}); err != nil || sec.W[0].Err() != nil {
		t.Fatalf("a chain of 20001 readings: %v, %v", err, sec.W[0].Err())
	}
}

func snapshotSensors(sec *state.Sections, m map[statetypes.Label]*reading) error {
	st := state.NewMemory[statetypes.Label, reading]()
	for k, v := range m {
		st.Put(k, v)
	}
	return st.Snapshot(sec, func(k statetypes.Label) int { return int(hashKeySensors(k) % uint64(len(sec.W))) }, encodeSensorsEntry)
}

func snapshotAccs(sec *state.Sections, v acc) error {
	st := state.NewMemory[statetypes.Key, acc]()
	st.Put(statetypes.Key{Region: "r"}, &v)
	st.Put(statetypes.Key{Region: "ok"}, ptr(fullAcc()))
	return st.Snapshot(sec, func(k statetypes.Key) int { return int(hashKeyAccs(k) % uint64(len(sec.W))) }, encodeAccsEntry)
}

// BenchmarkDecode decodes entries of "accs": one with every field set, and
// one of mostly narrow integers (int, int32, uint32), whose range checks
// are on the hot path of decoding.
func BenchmarkDecode(b *testing.B) {
	ints := acc{ByTag: map[string][]int{"k": make([]int, 4096)}, Extra: ptr(make([]uint32, 4096)), Items: make([]inner, 1024)}
	for i := range 4096 {
		ints.ByTag["k"][i] = i * 1000
		(*ints.Extra)[i] = uint32(i) << 20
	}
	for i := range ints.Items {
		ints.Items[i] = inner{Count: int32(i * 1000)}
	}
	for _, c := range []struct {
		name string
		v    acc
	}{{"full", fullAcc()}, {"ints", ints}} {
		data := encodeAccs(statetypes.Key{Region: "r", Shard: 1}, c.v)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, _, err := decodeAccs(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
