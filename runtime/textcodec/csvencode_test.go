package textcodec

import (
	"bytes"
	"encoding/csv"
	"math"
	"strings"
	"testing"
	"time"
)

// TestCSVWriterString: a cell is quoted exactly when encoding/csv's
// Writer quotes it, and written the same.
func TestCSVWriterString(t *testing.T) {
	cells := []string{"", "x", " lead", "\tlead", "\u00a0nbsp", "\u2028ls", "trail ", `"`, `a""b`, "a,b", "a;b", "a\nb", "a\rb", `\.`, "é", "😀", "\xff", "aé,b"}
	for _, delim := range []rune{',', ';', 'é', ' '} {
		w := NewCSVWriter(delim)
		for _, c := range cells {
			var b bytes.Buffer
			cw := csv.NewWriter(&b)
			cw.Comma = delim
			if err := cw.Write([]string{c}); err != nil {
				t.Fatal(err)
			}
			cw.Flush()
			want := strings.TrimSuffix(b.String(), "\n")
			if got := string(w.String([]byte("> "), c)); got != "> "+want {
				t.Errorf("delimiter %q, cell %q: got %q, want %q", delim, c, got, "> "+want)
			}
		}
	}
	if got := string(NewCSVWriter(',').SoleString(nil, "")); got != `""` {
		t.Errorf("SoleString(\"\") = %q", got)
	}
}

// TestCSVWriterNumbers: numbers, times and durations are quoted when the
// delimiter is in them.
func TestCSVWriterNumbers(t *testing.T) {
	for _, c := range []struct {
		delim rune
		got   func(w *CSVWriter) []byte
		want  string
	}{
		{',', func(w *CSVWriter) []byte { return w.Int(nil, -12) }, "-12"},
		{'-', func(w *CSVWriter) []byte { return w.Int(nil, -12) }, `"-12"`},
		{'1', func(w *CSVWriter) []byte { return w.Uint(nil, 10) }, `"10"`},
		{',', func(w *CSVWriter) []byte { return w.Float(nil, math.NaN(), 64) }, "NaN"},
		{',', func(w *CSVWriter) []byte { return w.Float(nil, math.Inf(-1), 32) }, "-Inf"},
		{',', func(w *CSVWriter) []byte { return w.Float(nil, 1e21, 64) }, "1e+21"},
		{'e', func(w *CSVWriter) []byte { return w.Float(nil, 1e21, 64) }, `"1e+21"`},
		{'.', func(w *CSVWriter) []byte { return w.Float(nil, 0.5, 32) }, `"0.5"`},
		{'u', func(w *CSVWriter) []byte { return w.Bool(nil, true) }, `"true"`},
		{'µ', func(w *CSVWriter) []byte { return w.Duration(nil, 3*time.Microsecond) }, `"3µs"`},
		{':', func(w *CSVWriter) []byte {
			b, _ := w.Time(nil, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			return b
		}, `"2026-01-02T03:04:05Z"`},
	} {
		if got := string(c.got(NewCSVWriter(c.delim))); got != c.want {
			t.Errorf("delimiter %q: got %q, want %q", c.delim, got, c.want)
		}
	}
	w := NewCSVWriter(',')
	for _, bad := range []time.Time{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 61))} {
		if b, ok := w.Time([]byte("x"), bad); ok || string(b) != "x" {
			t.Errorf("%v: got %q, %v; want it refused", bad, b, ok)
		}
	}
}
