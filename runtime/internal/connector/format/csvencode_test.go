package format

import (
	"bytes"
	"encoding/csv"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// words is a record of strings only: its line must be encoding/csv's.
type words struct {
	A string `csv:"a"`
	B string
	C string `csv:"-"`
	c string
}

var cellStrs = []string{"", "x", " lead", "\tlead", "\u00a0nbsp", "\u0085nel", "trail ", `"`, `a""b`, "a,b", "a;b", "a\nb", "a\rb", "a\r\nb", `\.`, `\..`, "é", "😀", "\xff"}

func randCell(r *rand.Rand) string {
	if r.IntN(2) == 0 {
		return cellStrs[r.IntN(len(cellStrs))]
	}
	b := make([]byte, r.IntN(6))
	for i := range b {
		b[i] = " ,;é\"\r\nab\\."[r.IntN(12)]
	}
	return string(b)
}

// TestCSVEncoderQuotesAsEncodingCSV: a record of strings is written as
// encoding/csv's Writer writes its cells (but for a record of one empty
// cell, see TestCSVEncoderSoleEmptyCell), with every delimiter, and
// the CSV decoder reads it back.
func TestCSVEncoderQuotesAsEncodingCSV(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, delim := range []rune{',', ';', '\t', ' ', 'a', 'é', '.', '\\'} {
		e, err := NewCSVEncoder[words](delim, nil)
		if err != nil {
			t.Fatal(err)
		}
		f, err := CSVFormat[words](delim, false)
		if err != nil {
			t.Fatal(err)
		}
		d := f.NewDecoder()
		for range 2000 {
			v := words{A: randCell(r), B: randCell(r), C: "left out", c: "hidden"}
			got, err := e.Encode([]byte("> "), v)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			w := csv.NewWriter(&b)
			w.Comma = delim
			if err := w.Write([]string{v.A, v.B}); err != nil {
				t.Fatal(err)
			}
			w.Flush()
			if want := "> " + strings.TrimSuffix(b.String(), "\n"); string(got) != want {
				t.Fatalf("delimiter %q, %q: got %q, want encoding/csv's %q", delim, []string{v.A, v.B}, got, want)
			}
			back, ok, err := d.Decode(got[2:])
			if err != nil || !ok || back != (words{A: v.A, B: v.B}) {
				t.Fatalf("delimiter %q: %q decodes to %+v, %v, %v", delim, got[2:], back, ok, err)
			}
		}
		if h := e.Header(); string(h) != "a"+string(delim)+"B" && delim != 'a' {
			t.Errorf("delimiter %q: header %q", delim, h)
		}
	}
}

// TestCSVEncoderSoleEmptyCell: a record of one column whose cell is
// empty is written "", not as an empty line, which holds no record.
func TestCSVEncoderSoleEmptyCell(t *testing.T) {
	type one struct{ S string }
	e, err := NewCSVEncoder[one](',', nil)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := CSVFormat[one](',', false)
	for _, s := range []string{"", "x", `"`} {
		line, err := e.Encode(nil, one{s})
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := f.NewDecoder().Decode(line)
		if err != nil || !ok || got.S != s {
			t.Errorf("%q: line %q decodes to %q, %v, %v", s, line, got.S, ok, err)
		}
	}
}

// TestCSVEncoderCells pins the cells of the other kinds of field, and
// the errors of what they cannot write.
func TestCSVEncoderCells(t *testing.T) {
	type Secs time.Duration
	type kinds struct {
		I   int8
		U   uint16
		F   float32
		B   bool
		T   time.Time
		D   time.Duration
		S   Secs
		Ptr uintptr
	}
	e, err := NewCSVEncoder[kinds](':', nil)
	if err != nil {
		t.Fatal(err)
	}
	v := kinds{I: -8, U: 65535, F: 0.1, B: true, T: time.Date(2026, 12, 2, 3, 4, 5, 600, time.UTC), D: -90 * time.Second, S: 7, Ptr: 9}
	got, err := e.Encode(nil, v)
	// ':' is the delimiter: the time and the duration are quoted.
	if want := `-8:65535:0.1:true:"2026-12-02T03:04:05.0000006Z":-1m30s:7:9`; err != nil || string(got) != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
	f, _ := CSVFormat[kinds](':', false)
	if back, _, err := f.NewDecoder().Decode(got); err != nil || back != v {
		t.Errorf("%q decodes to %+v, %v", got, back, err)
	}
	v.T = time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)
	if _, err := e.Encode(nil, v); err == nil || !strings.Contains(err.Error(), "field kinds.T: ") || !strings.Contains(err.Error(), "outside 0-9999") {
		t.Errorf("year 12000: %v", err)
	}
	for _, bad := range []rune{'"', '\n', '\r', 0xfffd} {
		if _, err := NewCSVEncoder[kinds](bad, nil); err == nil {
			t.Errorf("delimiter %q accepted", bad)
		}
	}
	if _, err := NewCSVEncoder[struct{ C chan int }](',', nil); err == nil {
		t.Error("a chan field accepted")
	}
}
