// Tests of the generated CSV decoder of Rich against the runtime's
// reflective one (written by hand; go test ./golden -update leaves
// *_test.go files in want/ alone). Run the fuzzer with
//
//	go test ./golden/csv-codec/want -run '^$' -fuzz FuzzDecode -fuzztime 30s
package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	csvcodec "github.com/pipegen/pipegen/golden/csv-codec"
	"github.com/pipegen/pipegen/runtime"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// columns are Rich's columns as a header names them, in field order.
var columns = []string{"id", "I8", "I16", "I32", "I", "U8", "U16", "U32", "U64", "U", "P", "F32", "F64", "OK", "name", "other_name", "Level", "Score", "Flag", "Ratio", "When", "Took", "Timeout"}

// fields are the names of the fields of the columns.
var fields = []string{"ID", "I8", "I16", "I32", "I", "U8", "U16", "U32", "U64", "U", "P", "F32", "F64", "OK", "Name", "Renamed", "Level", "Score", "Flag", "Ratio", "When", "Took", "Timeout"}

// formats are the reflective decoder and the generated one (which
// counts the cells it refused), with the same options.
type formats struct {
	refl, gen runtime.Format[csvcodec.Rich]
	refused   *int
}

func newFormats(t testing.TB, delim rune, header, strict bool) formats {
	refused := new(int)
	decode := func(cells [][]byte, cols []int, v *csvcodec.Rich) bool {
		ok := decodeRecordsCSV(cells, cols, v)
		if !ok {
			*refused++
		}
		return ok
	}
	refl, err := runtime.CSVFormat[csvcodec.Rich](delim, header, nil)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := runtime.CSVFormat(delim, header, decode)
	if err != nil {
		t.Fatal(err)
	}
	if strict {
		type strictable interface {
			Strict() runtime.Format[csvcodec.Rich]
		}
		refl, gen = refl.(strictable).Strict(), gen.(strictable).Strict()
	}
	return formats{refl, gen, refused}
}

// result is what a decoder made of one line.
type result struct {
	rec csvcodec.Rich
	ok  bool
	err string
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// decodeAll feeds the lines of one file to both decoders, a header first
// when they need one, and fails on the first line they read otherwise.
func (f formats) decodeAll(t *testing.T, lines [][]byte) {
	t.Helper()
	refl, gen := f.refl.NewDecoder(), f.gen.NewDecoder()
	for i, line := range lines {
		if refl.NeedsHeader() != gen.NeedsHeader() {
			t.Fatalf("line %d %q: the decoders disagree on needing a header", i, line)
		}
		if refl.NeedsHeader() {
			e1, e2 := errString(refl.Header(line)), errString(gen.Header(line))
			if e1 != e2 {
				t.Fatalf("header %q:\ngenerated  %s\nreflective %s", line, e2, e1)
			}
			if e1 != "" {
				return
			}
			continue
		}
		var want, got result
		var err error
		want.rec, want.ok, err = refl.Decode(line)
		want.err = errString(err)
		got.rec, got.ok, err = gen.Decode(line)
		got.err = errString(err)
		if !same(got, want) {
			t.Fatalf("line %d %q:\ngenerated  %+v\nreflective %+v", i, line, got, want)
		}
	}
}

// same compares results, a NaN equal to a NaN of the same bits.
func same(a, b result) bool {
	floats := func(r *result) [3]uint64 {
		f := [3]uint64{uint64(math.Float32bits(r.rec.F32)), math.Float64bits(r.rec.F64), uint64(math.Float32bits(float32(r.rec.Ratio)))}
		r.rec.F32, r.rec.F64, r.rec.Ratio = 0, 0, 0
		return f
	}
	return floats(&a) == floats(&b) && reflect.DeepEqual(a, b)
}

var strs = []string{"", "a", "héllo", "comma, here", `say "hi"`, `"`, `""`, " spaced ", ";|\t", "😀", "\xff\xfe bad", "\r"}

func randString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		b := make([]byte, r.IntN(10))
		for i := range b {
			b[i] = byte(r.IntN(256))
			if b[i] == '\n' {
				b[i] = 'n' // a record is one line
			}
		}
		return string(b)
	}
	return strs[r.IntN(len(strs))]
}

func randFloat(r *rand.Rand, bits int) string {
	var f float64
	switch r.IntN(6) {
	case 0:
		return ""
	case 1:
		f = math.Copysign(0, -1)
	case 2:
		f = math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return []string{"NaN", "+Inf", "-inf", "infinity"}[r.IntN(4)]
		}
	case 3:
		f = float64(r.IntN(1000)) / 7
	case 4:
		f = math.Pow(10, float64(r.IntN(60)-30)) * r.Float64()
	default:
		f = float64(r.Int64())
	}
	if bits == 32 {
		f = float64(float32(f))
	}
	return strconv.FormatFloat(f, []byte("gef")[r.IntN(3)], -1, bits)
}

func randInt(r *rand.Rand, bits int, unsigned bool) string {
	if r.IntN(8) == 0 {
		return ""
	}
	if unsigned {
		v := r.Uint64()
		if bits < 64 {
			v &= 1<<bits - 1
		}
		if r.IntN(3) == 0 {
			v = uint64(r.IntN(100))
		}
		return strconv.FormatUint(v, 10)
	}
	v := r.Int64() >> (64 - bits)
	if r.IntN(3) == 0 {
		v = int64(r.IntN(200) - 100)
	}
	s := strconv.FormatInt(v, 10)
	if v >= 0 && r.IntN(4) == 0 {
		s = "+" + s
	}
	return s
}

func randBool(r *rand.Rand) string {
	return []string{"", "true", "false", "1", "0", "t", "F", "TRUE", "False"}[r.IntN(9)]
}

func randTime(r *rand.Rand) string {
	if r.IntN(5) == 0 {
		return ""
	}
	t := time.Unix(r.Int64N(300_000_000_000)-62_000_000_000, r.Int64N(1e9))
	switch r.IntN(3) {
	case 0:
		t = t.UTC()
	case 1:
		t = t.In(time.FixedZone("", (r.IntN(48)-24)*1800))
	default:
		t = t.Round(time.Second).UTC()
	}
	return t.Format(time.RFC3339Nano)
}

func randDuration(r *rand.Rand) string {
	if r.IntN(5) == 0 {
		return ""
	}
	return time.Duration(r.Int64() >> r.IntN(64)).String()
}

// randCells is a well-formed record's cells, in field order.
func randCells(r *rand.Rand) []string {
	return []string{
		randInt(r, 64, false), randInt(r, 8, false), randInt(r, 16, false), randInt(r, 32, false), randInt(r, 64, false),
		randInt(r, 8, true), randInt(r, 16, true), randInt(r, 32, true), randInt(r, 64, true), randInt(r, 64, true), randInt(r, 64, true),
		randFloat(r, 32), randFloat(r, 64), randBool(r), randString(r), randString(r),
		randString(r), randInt(r, 16, false), randBool(r), randFloat(r, 32), randTime(r), randDuration(r), randInt(r, 64, false),
	}
}

// line joins cells with delim, quoting those that need it and some that
// do not.
func line(r *rand.Rand, cells []string, delim rune) []byte {
	var b []byte
	for i, c := range cells {
		if i > 0 {
			b = utf8.AppendRune(b, delim)
		}
		if strings.ContainsRune(c, delim) || strings.Contains(c, `"`) || r.IntN(6) == 0 {
			b = append(b, '"')
			b = append(b, strings.ReplaceAll(c, `"`, `""`)...)
			b = append(b, '"')
			continue
		}
		b = append(b, c...)
	}
	return b
}

var delims = []rune{',', ';', '\t', '|', 'é'}

// TestDecode decodes random well-formed records, with and without a
// header (its columns in a random order, some left out, in random case),
// strict and not, with every delimiter: the generated decoder reads every
// line itself, into what the reflective one reads.
func TestDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	total := 0
	for file := range 400 {
		delim := delims[r.IntN(len(delims))]
		header := file%4 != 0
		strict := file%3 == 0
		f := newFormats(t, delim, header, strict)
		order := r.Perm(len(columns))
		if !strict {
			order = order[:1+r.IntN(len(order))]
		}
		if !header {
			order = r.Perm(len(columns))[:0]
			for i := range columns {
				order = append(order, i)
			}
		}
		var lines [][]byte
		if header {
			names := make([]string, len(order))
			for i, c := range order {
				names[i] = columns[c]
				if r.IntN(3) == 0 {
					names[i] = strings.ToUpper(names[i])
				}
			}
			lines = append(lines, line(r, names, delim))
		}
		for range 50 {
			cells := randCells(r)
			picked := make([]string, len(order))
			for i, c := range order {
				picked[i] = cells[c]
			}
			lines = append(lines, line(r, picked, delim))
			total++
		}
		f.decodeAll(t, lines)
		if *f.refused > 0 {
			// Cells that are not well-formed for their field are
			// refused on purpose (NaN and infinities are, as floats, but
			// not for strconv's range: those are well-formed).
			t.Logf("file %d: %d lines refused", file, *f.refused)
		}
	}
	t.Logf("%d lines", total)
}

// TestDecodeReadsItself: the generated decoder reads every well-formed
// line itself, not only the same record as the reflective one.
func TestDecodeReadsItself(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	f := newFormats(t, ',', false, false)
	d := f.gen.NewDecoder()
	for range 20000 {
		l := line(r, randCells(r), ',')
		if _, _, err := d.Decode(l); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
	}
	if *f.refused > 0 {
		t.Fatalf("the generated decoder left %d well-formed lines to the reflective one", *f.refused)
	}
}

// TestDecodeRefuses: malformed cells go through the reflective decoder,
// which names the column in its error; malformed lines and headers fail
// as before.
func TestDecodeRefuses(t *testing.T) {
	good := strings.Split("1,-128,32767,-5,42,255,65535,7,18446744073709551615,9,10,1.5,-2.25e-10,true,Ann,x,gold,-3,1,0.5,2026-12-02T00:00:00Z,1m30s,1500", ",")
	for col, bad := range map[int][]string{
		0:  {"x", "1.5", "9223372036854775808", "1_000", " 1"},
		1:  {"128", "-129"},
		5:  {"256", "-1"},
		8:  {"18446744073709551616"},
		11: {"1e39", "x"},
		12: {"1e400", "1.2.3"},
		13: {"yes", "2"},
		18: {"nope"},
		20: {"2026-13-01T00:00:00Z", "2026-12-02", "yesterday"},
		21: {"90", "1x"},
		22: {"1s"},
	} {
		for _, b := range bad {
			cells := append([]string(nil), good...)
			cells[col] = b
			f := newFormats(t, ',', false, false)
			l := []byte(strings.Join(cells, ","))
			f.decodeAll(t, [][]byte{l})
			if *f.refused != 1 {
				t.Errorf("%s %q: the generated decoder did not refuse it", columns[col], b)
			}
			// Without a header a column is named by its field.
			if _, _, err := f.gen.NewDecoder().Decode(l); err == nil || !strings.Contains(err.Error(), "column "+fields[col]+": ") {
				t.Errorf("%s %q: error %v does not name the column", columns[col], b, err)
			}
		}
	}
	f := newFormats(t, ',', true, true)
	for _, lines := range [][]string{
		{"id,name", "1,a"},                // strict: columns missing
		{"id,nope", "1,a"},                // unknown column
		{"id,ID", "1,2"},                  // a field twice
		{`id,"name`, "1,a"},               // a header not closed
		{strings.Join(columns, ","), "1"}, // too few fields
		{strings.Join(columns, ","), `1,"a"b` + strings.Repeat(",", 21)},
		{strings.Join(columns, ","), `1,a"b` + strings.Repeat(",", 21)},
		{strings.Join(columns, ","), `"1` + strings.Repeat(",", 22)},
		{strings.Join(columns, ","), ""},
	} {
		var ls [][]byte
		for _, l := range lines {
			ls = append(ls, []byte(l))
		}
		f.decodeAll(t, ls)
	}
}

// TestInput: the golden input reads the same with both decoders.
func TestInput(t *testing.T) {
	input, err := os.ReadFile("../input/records.csv")
	if err != nil {
		t.Fatal(err)
	}
	f := newFormats(t, ',', true, true)
	f.decodeAll(t, bytes.Split(bytes.TrimSpace(input), []byte("\n")))
	if *f.refused > 0 {
		t.Errorf("the generated decoder refused %d lines of the input", *f.refused)
	}
}

func FuzzDecode(f *testing.F) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 30 {
		f.Add(line(r, randCells(r), ','), true)
	}
	f.Add([]byte(`1,2,3`), false)
	f.Fuzz(func(t *testing.T, l []byte, header bool) {
		lines := [][]byte{l}
		if header {
			lines = [][]byte{[]byte(strings.Join(columns, ",")), l}
		}
		newFormats(t, ',', header, false).decodeAll(t, lines)
	})
}

// BenchmarkDecode decodes the same lines with the reflective decoder and
// the generated one (paired in one run: go test -bench Decode).
func BenchmarkDecode(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	var lines [][]byte
	for range 1000 {
		cells := randCells(r)
		for i, c := range cells {
			switch {
			case i == 11 || i == 12 || i == 19:
				cells[i] = "1.25" // no NaN: ordinary records
			case c == "":
				cells[i] = "1" // no empty cells
			}
		}
		cells[13], cells[18] = "true", "false"
		cells[20], cells[21] = "2026-12-02T00:00:00Z", "1m30s"
		lines = append(lines, line(r, cells, ','))
	}
	for _, name := range []string{"reflective", "generated"} {
		b.Run(name, func(b *testing.B) {
			f := newFormats(b, ',', false, false)
			format := f.refl
			if name == "generated" {
				format = f.gen
			}
			d := format.NewDecoder()
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, _, err := d.Decode(lines[i%len(lines)]); err != nil {
					b.Fatal(err)
				}
			}
			if *f.refused > 0 {
				b.Fatalf("%d lines refused", *f.refused)
			}
		})
	}
}
