package textcodec

import (
	"math"
	"strconv"
	"testing"

	_ "github.com/pipegen/pipegen/internal/goldenfile"
)

// TestCSVInt compares the integer parsers with strconv on the edges of
// each size, with signs and malformed cells.
func TestCSVInt(t *testing.T) {
	cells := []string{"", "0", "-0", "+0", "+", "-", "1", "-1", "127", "128", "-128", "-129", "255", "256",
		"32767", "32768", "-32769", "65535", "65536", "2147483647", "2147483648", "-2147483649", "4294967295", "4294967296",
		"999999999999999999", "-999999999999999999", "1000000000000000000", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
		"1_000", "0x10", " 1", "1 ", "1.0", "1e3", "--1", "+-1", "٣", "00000000000000000000001"}
	for _, c := range cells {
		for _, bits := range []int{0, 8, 16, 32, 64} {
			want, err := strconv.ParseInt(c, 10, bits)
			got, ok := CSVInt([]byte(c), bits)
			if ok != (err == nil) || ok && got != want {
				t.Errorf("CSVInt(%q, %d) = %d, %v; strconv %d, %v", c, bits, got, ok, want, err)
			}
			uwant, err := strconv.ParseUint(c, 10, bits)
			ugot, ok := CSVUint([]byte(c), bits)
			if ok != (err == nil) || ok && ugot != uwant {
				t.Errorf("CSVUint(%q, %d) = %d, %v; strconv %d, %v", c, bits, ugot, ok, uwant, err)
			}
		}
	}
	if v, ok := CSVInt([]byte("-9223372036854775808"), 64); !ok || v != math.MinInt64 {
		t.Errorf("min int64: %d %v", v, ok)
	}
}

// TestCSVStrings: strings cut from one array keep their bytes when the
// cells change, and a cell beyond the room made gets a string of its own.
func TestCSVStrings(t *testing.T) {
	line := []byte("abcdef")
	var s CSVStrings
	s.Reset(4)
	a, b, c := s.Cut(line[0:2]), s.Cut(line[2:4]), s.Cut(line[4:6])
	copy(line, "XXXXXX")
	if a != "ab" || b != "cd" || c != "ef" {
		t.Errorf("got %q %q %q", a, b, c)
	}
	s.Reset(0)
	if d := s.Cut(nil); d != "" {
		t.Errorf("got %q", d)
	}
}
