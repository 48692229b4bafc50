// Tests of the generated CSV encoder of Rich (sinks csvout, printed) against the
// runtime's reflective one, and of what both write against the CSV
// source's decoders and encoding/csv (written by hand; go test ./golden
// -update leaves *_test.go files in want/ alone). Run the fuzzer with
//
//	go test ./golden/csv-codec/want -run '^$' -fuzz FuzzEncode -fuzztime 30s
package main

import (
	"bytes"
	"encoding/csv"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	csvcodec "github.com/pipegen/pipegen/golden/csv-codec"
	"github.com/pipegen/pipegen/runtime"
	"github.com/pipegen/pipegen/runtime/textcodec"
)

// encDelims are the delimiters the encoder tests use: those of the
// decoder tests, and some that can appear in a number, a time or a
// duration (whose cells must then be quoted too).
var encDelims = append(append([]rune(nil), delims...), ' ', 'e', '1', ':', '-', '.', 'µ', 'N', 't')

// encoders are the reflective encoder and the generated one (which
// counts the records it refused), with one delimiter.
type encoders struct {
	enc interface {
		EncodeReflect([]byte, csvcodec.Rich) ([]byte, error)
	}
	gen     func([]byte, csvcodec.Rich) ([]byte, error)
	header  []byte
	refused *int
}

func newEncoders(t testing.TB, delim rune) encoders {
	refused := new(int)
	fast := func(b []byte, v csvcodec.Rich, w *textcodec.CSVWriter) ([]byte, bool) {
		b, ok := appendRichCSV(b, v, w)
		if !ok {
			*refused++
		}
		return b, ok
	}
	e, err := runtime.NewCSVEncoder[csvcodec.Rich](delim, fast)
	if err != nil {
		t.Fatal(err)
	}
	return encoders{enc: e, gen: e.Encode, header: e.Header(), refused: refused}
}

var encStrs = []string{
	"", "a", "héllo", "comma, here", `say "hi"`, `"`, `""`, " spaced", "spaced ", "\tlead", "\u00a0nbsp", "\u2003em",
	"line\nbreak", "cr\rhere", "crlf\r\n", `\.`, `\`, "1e5", "a;b|c\td", "😀", "µs", "\xff\xfe bad", "-", ":", ".", "NaN", "true",
}

func encString(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		b := make([]byte, r.IntN(12))
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(4) == 0 {
				const special = ",;|\t\"\r\n e1:-. "
				b[i] = special[r.IntN(len(special))]
			}
		}
		return string(b)
	}
	return encStrs[r.IntN(len(encStrs))]
}

func encFloat(r *rand.Rand) float64 {
	switch r.IntN(8) {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1 - 2*r.IntN(2))
	case 2:
		return math.Copysign(0, -1)
	case 3:
		return math.Float64frombits(r.Uint64())
	case 4:
		return math.Pow(10, float64(r.IntN(60)-30)) * (r.Float64() - 0.5)
	case 5:
		return float64(r.IntN(2000)-1000) / 8
	default:
		return float64(r.Int64()) * (r.Float64() - 0.5)
	}
}

// encTime is a time RFC 3339 can write, or with bad a 1 in 8 chance of
// one it cannot: a year outside 0-9999, a zone offset in seconds.
func encTime(r *rand.Rand, bad bool) time.Time {
	t := time.Unix(r.Int64N(300_000_000_000)-62_000_000_000, r.Int64N(1e9))
	switch r.IntN(4) {
	case 0:
		t = t.UTC()
	case 1:
		t = t.In(time.FixedZone("", (r.IntN(48)-24)*1800))
	case 2:
		t = t.Round(time.Second).UTC()
	default:
		t = time.Time{}
	}
	if bad && r.IntN(8) == 0 {
		switch r.IntN(3) {
		case 0:
			t = time.Date(10000+r.IntN(100), 1, 1, 0, 0, 0, 0, time.UTC)
		case 1:
			t = time.Date(-1-r.IntN(100), 1, 1, 0, 0, 0, 0, time.UTC)
		default:
			t = t.In(time.FixedZone("LMT", 3600+r.IntN(59)+1))
		}
	}
	return t
}

// randRich is a random record; the times are ones RFC 3339 can write
// unless bad.
func randRich(r *rand.Rand, bad bool) csvcodec.Rich {
	i64 := func() int64 { return r.Int64() >> r.IntN(64) * int64(1-2*r.IntN(2)) }
	return csvcodec.Rich{
		ID: i64(), I8: int8(i64()), I16: int16(i64()), I32: int32(i64()), I: int(i64()),
		U8: uint8(r.Uint64()), U16: uint16(r.Uint64()), U32: uint32(r.Uint64()), U64: r.Uint64() >> r.IntN(64), U: uint(r.Uint64()), P: uintptr(r.Uint64()),
		F32: float32(encFloat(r)), F64: encFloat(r), OK: r.IntN(2) == 0,
		Name: encString(r), Renamed: encString(r), Skipped: encString(r),
		Level: csvcodec.Level(encString(r)), Score: csvcodec.Score(i64()), Flag: csvcodec.Flag(r.IntN(2) == 0), Ratio: csvcodec.Ratio(encFloat(r)),
		When: encTime(r, bad), Took: time.Duration(i64()), Timeout: csvcodec.Timeout(i64()),
	}
}

// compareEncoders encodes v with both encoders, after prefix (an
// encoder appends), and fails unless they wrote the same bytes or the
// same error.
func compareEncoders(t *testing.T, e encoders, prefix []byte, v csvcodec.Rich) []byte {
	t.Helper()
	want, werr := e.enc.EncodeReflect(bytes.Clone(prefix), v)
	got, gerr := e.gen(bytes.Clone(prefix), v)
	if errString(werr) != errString(gerr) {
		t.Fatalf("%+v:\ngenerated  error %v\nreflective error %v", v, gerr, werr)
	}
	if werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("%+v:\ngenerated  %q\nreflective %q", v, got, want)
	}
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("the generated encoder overwrote the buffer's %q: %q", prefix, got)
	}
	if werr != nil {
		return nil
	}
	return got[len(prefix):]
}

// sameRecord compares what was encoded with what was decoded: floats by
// their bits (a NaN is any NaN), times as instants, and Skipped, which
// no column holds, not at all.
func sameRecord(a, b csvcodec.Rich) bool {
	f32 := func(x float32) uint64 {
		if x != x {
			return 1 << 63
		}
		return uint64(math.Float32bits(x))
	}
	f64 := func(x float64) uint64 {
		if x != x {
			return 1 << 63
		}
		return math.Float64bits(x)
	}
	if f32(a.F32) != f32(b.F32) || f64(a.F64) != f64(b.F64) || f32(float32(a.Ratio)) != f32(float32(b.Ratio)) || !a.When.Equal(b.When) {
		return false
	}
	a.F32, a.F64, a.Ratio, a.When, a.Skipped = 0, 0, 0, time.Time{}, ""
	b.F32, b.F64, b.Ratio, b.When, b.Skipped = 0, 0, 0, time.Time{}, ""
	return reflect.DeepEqual(a, b)
}

// TestEncode encodes random records with every delimiter: the generated
// encoder writes the reflective one's bytes, refusing only the times
// RFC 3339 cannot write; the CSV source's decoders, reflective and
// generated, read the record back; encoding/csv reads the line into
// cells that it writes back as the same line, and the string cells into
// the fields' strings.
func TestEncode(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	total, failed := 0, 0
	for _, delim := range encDelims {
		e := newEncoders(t, delim)
		f := newFormats(t, delim, false, true)
		refl, gen := f.refl.NewDecoder(), f.gen.NewDecoder()
		checkHeader(t, delim, e.header)
		for range 3000 {
			v := randRich(r, true)
			line := compareEncoders(t, e, []byte("prefix"), v)
			total++
			if line == nil {
				failed++
				continue
			}
			for _, d := range []interface {
				Decode([]byte) (csvcodec.Rich, bool, error)
			}{refl, gen} {
				got, ok, err := d.Decode(line)
				if err != nil || !ok || !sameRecord(got, v) {
					t.Fatalf("delimiter %q: %q decodes to\n%+v, %v, %v\nwant %+v", delim, line, got, ok, err, v)
				}
			}
			checkEncodingCSV(t, delim, line, v)
		}
		if *e.refused > 0 && *e.refused != failed {
			t.Fatalf("delimiter %q: the generated encoder refused %d records, and %d failed", delim, *e.refused, failed)
		}
		*e.refused, failed = 0, 0
	}
	t.Logf("%d records", total)
}

// checkHeader reads the header line with encoding/csv, which must find
// the column names, and with a CSV source's decoder, which must take it.
func checkHeader(t *testing.T, delim rune, header []byte) {
	t.Helper()
	rd := csv.NewReader(bytes.NewReader(header))
	rd.Comma = delim
	names, err := rd.Read()
	if err != nil || !reflect.DeepEqual(names, columns) {
		t.Fatalf("delimiter %q: header %q reads as %q, %v", delim, header, names, err)
	}
	if err := newFormats(t, delim, true, true).refl.NewDecoder().Header(header); err != nil {
		t.Fatalf("delimiter %q: header %q: %v", delim, header, err)
	}
}

// checkEncodingCSV reads line with encoding/csv: one record whose cells
// encoding/csv writes as line again (so the quoting is its Writer's),
// the string fields' cells their strings (but for \r\n, which its Reader
// reads as \n).
func checkEncodingCSV(t *testing.T, delim rune, line []byte, v csvcodec.Rich) {
	t.Helper()
	rd := csv.NewReader(bytes.NewReader(line))
	rd.Comma = delim
	recs, err := rd.ReadAll()
	if err != nil || len(recs) != 1 || len(recs[0]) != len(columns) {
		t.Fatalf("delimiter %q: encoding/csv reads %q as %q, %v", delim, line, recs, err)
	}
	cells := recs[0]
	crlf := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
	for i, want := range map[int]string{14: v.Name, 15: v.Renamed, 16: string(v.Level)} {
		if cells[i] != crlf(want) {
			t.Fatalf("delimiter %q: encoding/csv reads column %s of %q as %q, want %q", delim, columns[i], line, cells[i], want)
		}
	}
	if strings.Contains(string(line), "\r\n") {
		return // encoding/csv's Reader changed the cell: its Writer cannot give line back
	}
	var out bytes.Buffer
	w := csv.NewWriter(&out)
	w.Comma = delim
	if err := w.Write(cells); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if got := strings.TrimSuffix(out.String(), "\n"); got != string(line) {
		t.Fatalf("delimiter %q: encoding/csv writes the cells of\n%q as\n%q", delim, line, got)
	}
}

// TestEncodeSpecial pins what the cells of NaN, the infinities, negative
// zero and the times RFC 3339 cannot write become.
func TestEncodeSpecial(t *testing.T) {
	e := newEncoders(t, ',')
	cell := func(v csvcodec.Rich, col int) string {
		b, err := e.gen(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		rd := csv.NewReader(bytes.NewReader(b))
		rec, err := rd.Read()
		if err != nil {
			t.Fatal(err)
		}
		return rec[col]
	}
	for _, c := range []struct {
		f    float64
		want string
	}{{math.NaN(), "NaN"}, {math.Inf(1), "+Inf"}, {math.Inf(-1), "-Inf"}, {math.Copysign(0, -1), "-0"}, {1e21, "1e+21"}, {1e20, "100000000000000000000"}, {1e-7, "1e-7"}, {-0.5, "-0.5"}} {
		if got := cell(csvcodec.Rich{F64: c.f}, 12); got != c.want {
			t.Errorf("F64 %v: cell %q, want %q", c.f, got, c.want)
		}
		if got := cell(csvcodec.Rich{F32: float32(c.f)}, 11); got != c.want && c.f != 1e20 && c.f != 1e-7 {
			t.Errorf("F32 %v: cell %q, want %q", float32(c.f), got, c.want)
		}
	}
	when := time.Date(2026, 12, 2, 3, 4, 5, 6, time.FixedZone("", -(3*3600+30*60)))
	if got := cell(csvcodec.Rich{When: when, Took: -90 * time.Minute}, 20); got != "2026-12-02T03:04:05.000000006-03:30" {
		t.Errorf("When: cell %q", got)
	}
	for _, bad := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("LMT", 3600+17)),
	} {
		*e.refused = 0
		_, err := e.gen(nil, csvcodec.Rich{When: bad})
		if err == nil || !strings.Contains(err.Error(), "field Rich.When: ") {
			t.Errorf("time %v: error %v, want one naming the field", bad, err)
		}
		if *e.refused != 1 {
			t.Errorf("time %v: the generated encoder did not refuse it", bad)
		}
	}
}

func FuzzEncode(f *testing.F) {
	f.Add("a", `b"c`, "d\ne", 1.5, int64(-3), uint8(0))
	f.Add("", " x", `\.`, math.NaN(), int64(0), uint8(3))
	f.Fuzz(func(t *testing.T, name, renamed, level string, f64 float64, id int64, d uint8) {
		delim := encDelims[int(d)%len(encDelims)]
		e := newEncoders(t, delim)
		v := csvcodec.Rich{ID: id, Name: name, Renamed: renamed, Level: csvcodec.Level(level), F64: f64, F32: float32(f64), Took: time.Duration(id)}
		line := compareEncoders(t, e, nil, v)
		fm := newFormats(t, delim, false, true)
		for _, format := range []runtime.Format[csvcodec.Rich]{fm.refl, fm.gen} {
			got, ok, err := format.NewDecoder().Decode(line)
			if err != nil || !ok || !sameRecord(got, v) {
				t.Fatalf("delimiter %q: %q decodes to\n%+v, %v, %v\nwant %+v", delim, line, got, ok, err, v)
			}
		}
	})
}

// BenchmarkEncode encodes the same records with the reflective encoder
// and the generated one (paired in one run: go test -bench Encode).
func BenchmarkEncode(b *testing.B) {
	r := rand.New(rand.NewPCG(13, 14))
	recs := make([]csvcodec.Rich, 1000)
	for i := range recs {
		recs[i] = randRich(r, false)
		recs[i].Name, recs[i].Renamed, recs[i].Level = "Ann", "say \"hi\", she said", "gold"
	}
	for _, name := range []string{"reflective", "generated"} {
		b.Run(name, func(b *testing.B) {
			e := newEncoders(b, ',')
			enc := e.enc.EncodeReflect
			if name == "generated" {
				enc = e.gen
			}
			buf := make([]byte, 0, 4096)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				var err error
				if buf, err = enc(buf[:0], recs[i%len(recs)]); err != nil {
					b.Fatal(err)
				}
			}
			if *e.refused > 0 {
				b.Fatalf("%d records refused", *e.refused)
			}
		})
	}
}
