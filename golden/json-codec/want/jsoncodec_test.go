// Tests of the generated JSON-lines codec of Rich against encoding/json
// (written by hand; go test ./golden -update leaves *_test.go files in
// want/ alone). Run the fuzzer with
//
//	go test ./golden/json-codec/want -run '^$' -fuzz FuzzDecode -fuzztime 30s
package main

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	jsoncodec "github.com/pipegen/pipegen/golden/json-codec"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// stdEncode is what the sink wrote before generated encoders:
// encoding/json without HTML escaping, without the newline.
func stdEncode(v jsoncodec.Rich) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

var strs = []string{"", "a", "héllo", "<&>", "\x00\x1f\"\\/", "\u2028\u2029", "\xff\xfe bad", "😀", "tab\tnl\nret\r", "\u007f"}

func randString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		return string(b)
	}
	return strs[r.IntN(len(strs))]
}

func randFloat(r *rand.Rand) float64 {
	switch r.IntN(6) {
	case 0:
		return 0
	case 1:
		return math.Copysign(0, -1)
	case 2:
		return math.Float64frombits(r.Uint64())
	case 3:
		return float64(r.IntN(1000)) / 7
	case 4:
		return math.Pow(10, float64(r.IntN(60)-30)) * r.Float64()
	}
	return float64(r.Int64())
}

func randTime(r *rand.Rand) time.Time {
	if r.IntN(4) == 0 {
		return time.Time{}
	}
	t := time.Unix(r.Int64N(400_000_000_000)-62_000_000_000, r.Int64N(1e9))
	switch r.IntN(4) {
	case 0:
		return t.UTC()
	case 1:
		return t.In(time.FixedZone("", (r.IntN(48)-24)*1800))
	case 2:
		return t.In(time.FixedZone("odd", r.IntN(100_000)-50_000))
	}
	return t.Round(time.Second).UTC()
}

func randRich(r *rand.Rand) jsoncodec.Rich {
	v := jsoncodec.Rich{
		ID: r.Int64(), I8: int8(r.Int()), I16: int16(r.Int()), I32: int32(r.Int()), I: r.Int(),
		U8: uint8(r.Int()), U16: uint16(r.Int()), U32: r.Uint32(), U64: r.Uint64(),
		F32: float32(randFloat(r)), F64: randFloat(r), OK: r.IntN(2) == 0,
		Name: randString(r), Untagged: randString(r), Renamed: randString(r), BadTag: randString(r), Dash: randString(r),
		Level: jsoncodec.Level(randString(r)), Score: jsoncodec.Score(r.Int()), When: randTime(r), Took: time.Duration(r.Int64()),
		Grid:      [2][2]int8{{int8(r.Int()), 1}, {2, int8(r.Int())}},
		MaybeName: randString(r), ZeroFloat: []float64{0, math.Copysign(0, -1), 1}[r.IntN(3)], ZeroTime: randTime(r),
	}
	if r.IntN(2) == 0 {
		v.Data = []byte(randString(r))
		v.Tags = jsoncodec.Tags{randString(r), randString(r)}
		v.Ints = []int{}
		v.MaybeList = []int{}
		v.MaybeMap = map[string]int{}
		v.Both = []int{}
		n := r.Int64()
		v.Ptr = &n
		s := randString(r)
		v.MaybePtr = &s
		v.PtrPoint = &jsoncodec.Point{X: randFloat(r), Label: randString(r)}
		v.Points = []jsoncodec.Point{{}, {Y: randFloat(r), Label: randString(r)}}
		v.Attrs = map[string]string{randString(r): randString(r), "b": randString(r)}
		v.Counts = map[jsoncodec.Level]int{jsoncodec.Level(randString(r)): r.Int()}
		v.Inline.A, v.Inline.B = r.Int(), randString(r)
		v.MaybeInt, v.MaybeFloat, v.MaybeBool = r.Int(), randFloat(r), true
		v.ZeroPoint = jsoncodec.Point{Y: []float64{0, math.Copysign(0, -1)}[r.IntN(2)]}
		v.Point = jsoncodec.Point{X: randFloat(r), Y: randFloat(r)}
	}
	return v
}

// TestEncode compares the generated encoder with encoding/json on random
// records: the same bytes, or for a record encoding/json refuses (NaN, a
// time beyond year 9999), the same error.
func TestEncode(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fast := 0
	for i := range 20000 {
		v := randRich(r)
		want, wantErr := stdEncode(v)
		got, err := encodeOutJSON(nil, &v)
		if (err == nil) != (wantErr == nil) || err == nil && !bytes.Equal(got, want) {
			t.Fatalf("record %d %+v:\ngenerated %s (%v)\nencoding/json %s (%v)", i, v, got, err, want, wantErr)
		}
		_, ok := appendRichJSON(nil, &v)
		if ok {
			fast++
		}
		// The generated code gives up only on NaN and the infinities,
		// years beyond 0-9999 and zones with seconds or of a day.
		if !ok && ordinary(v) {
			t.Fatalf("the generated encoder gave up on record %d %+v", i, v)
		}
	}
	t.Logf("the generated encoder wrote %d of 20000 records itself", fast)
}

func ordinary(v jsoncodec.Rich) bool {
	for _, f := range []float64{float64(v.F32), v.F64, v.Point.X, v.Point.Y, v.MaybeFloat, v.ZeroFloat} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	if v.PtrPoint != nil && (math.IsNaN(v.PtrPoint.X) || math.IsInf(v.PtrPoint.X, 0)) {
		return false
	}
	for _, p := range v.Points {
		if math.IsNaN(p.Y) || math.IsInf(p.Y, 0) {
			return false
		}
	}
	for _, tm := range []time.Time{v.When, v.ZeroTime} {
		_, off := tm.Zone()
		if tm.Year() < 0 || tm.Year() > 9999 || off%60 != 0 {
			return false
		}
	}
	return true
}

// decodeBoth decodes a line with the generated decoder and encoding/json.
func decodeBoth(line []byte, strict bool) (got, want jsoncodec.Rich, ok bool, wantErr error) {
	ok = decodeRecordsJSONL(line, &got, strict)
	wantErr = json.Unmarshal(line, &want)
	return
}

// check fails when the generated decoder accepted a line that
// encoding/json reads otherwise.
func check(t *testing.T, line []byte) bool {
	for _, strict := range []bool{false, true} {
		got, want, ok, err := decodeBoth(line, strict)
		if !ok {
			continue
		}
		if err != nil {
			t.Fatalf("generated decoder (strict %v) accepted %q, which encoding/json refuses: %v", strict, line, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("line %q (strict %v):\ngenerated     %+v\nencoding/json %+v", line, strict, got, want)
		}
	}
	_, _, ok, _ := decodeBoth(line, false)
	return ok
}

// TestDecode decodes what encoding/json wrote of random records and the
// golden input: the generated decoder must read every line itself, as
// encoding/json does.
func TestDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		line, err := stdEncode(randRich(r))
		if err != nil {
			continue
		}
		if !check(t, line) {
			t.Fatalf("the generated decoder gave up on %s", line)
		}
	}
	input, err := os.ReadFile("../input/records.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(input), []byte("\n")) {
		if !check(t, line) {
			t.Errorf("the generated decoder gave up on %s", line)
		}
	}
}

// TestDecodeGivesUp: lines the generated decoder must leave to
// encoding/json.
func TestDecodeGivesUp(t *testing.T) {
	for _, line := range []string{
		`{"id":1,"id":2}`,     // a key twice
		`{"id":1.5}`,          // not an integer
		`{"i8":128}`,          // out of range
		`{"name":"\ud800"}`,   // a lone surrogate
		"{\"name\":\"\xff\"}", // invalid UTF-8
		`{"id":1} x`,          // more after the value
		`{"id":01}`,           // not JSON
		`null`,                // not an object
		`{"f64":1e400}`,       // out of range
		`{"when":"2026-13-01T00:00:00Z"}`,
		`{"ints":[1,}`,
		`{"name":"a` + strings.Repeat("[", 3),
	} {
		var v jsoncodec.Rich
		if decodeRecordsJSONL([]byte(line), &v, false) {
			t.Errorf("the generated decoder accepted %q", line)
		}
		check(t, []byte(line))
	}
}

// TestStrict: the strict decoder accepts only lines with every field and
// no other key.
func TestStrict(t *testing.T) {
	full, err := stdEncode(jsoncodec.Rich{MaybeName: "x", MaybeInt: 1, MaybeFloat: 1, MaybeBool: true, MaybePtr: new(string), MaybeList: []int{1}, MaybeMap: map[string]int{"a": 1}, ZeroFloat: 1, ZeroTime: time.Unix(1, 0).UTC(), ZeroPoint: jsoncodec.Point{X: 1}, Both: []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	var v jsoncodec.Rich
	if !decodeRecordsJSONL(full, &v, true) {
		t.Fatalf("strict refused a line with every field: %s", full)
	}
	less := bytes.Replace(full, []byte(`"id":0,`), nil, 1)
	more := append(bytes.TrimSuffix(full, []byte("}")), `,"extra":1}`...)
	for _, line := range [][]byte{less, more} {
		if decodeRecordsJSONL(line, &v, true) {
			t.Errorf("strict accepted %s", line)
		}
		if !decodeRecordsJSONL(line, &v, false) {
			t.Errorf("not strict refused %s", line)
		}
	}
}

func FuzzDecode(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 50 {
		if line, err := stdEncode(randRich(r)); err == nil {
			f.Add(line)
		}
	}
	input, _ := os.ReadFile("../input/records.jsonl")
	for _, line := range bytes.Split(bytes.TrimSpace(input), []byte("\n")) {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		check(t, line)
	})
}
