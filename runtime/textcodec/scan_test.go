package textcodec

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestScannerValues reads values as encoding/json does, and fails on what
// it refuses or what the scanner leaves to it.
func TestScannerValues(t *testing.T) {
	ints := []struct {
		in   string
		bits int
		ok   bool
	}{
		{"0", 64, true}, {"-0", 64, true}, {"127", 8, true}, {"128", 8, false}, {"-128", 8, true}, {"-129", 8, false},
		{"9223372036854775807", 64, true}, {"9223372036854775808", 64, false}, {"-9223372036854775808", 64, true},
		{"1.0", 64, false}, {"1e3", 64, false}, {"01", 64, true /* the 1 is left over: End fails */}, {"-", 64, false}, {"", 64, false},
		{"99999999999999999999", 64, false},
	}
	for _, c := range ints {
		var s Scanner
		s.Reset([]byte(c.in))
		got := s.Int(c.bits)
		ok := !s.Failed()
		if ok != c.ok {
			t.Errorf("Int(%q, %d): ok %v, want %v", c.in, c.bits, ok, c.ok)
			continue
		}
		if ok && s.End() {
			var want int64
			if err := json.Unmarshal([]byte(c.in), &want); err != nil || want != got {
				t.Errorf("Int(%q) = %d, encoding/json %d (%v)", c.in, got, want, err)
			}
		}
	}
	for _, in := range []string{`"plain"`, `"tab\tnot allowed"`, `"é"`, `"\u00e9\n\"\\\/"`, `"\ud83d\ude00"`, `"\ud800"`, "\"\xff\"", `"open`} {
		var s Scanner
		s.Reset([]byte(in))
		got := s.String()
		var want string
		err := json.Unmarshal([]byte(in), &want)
		if !s.Failed() && s.End() && (err != nil || got != want) {
			t.Errorf("String(%s) = %q, encoding/json %q (%v)", in, got, want, err)
		}
	}
	var s Scanner
	s.Reset([]byte(` {"a" : [1, {"b": null}, "x\u0041", true, false, -1.5e-3], "c": {}} `))
	s.Skip()
	if !s.End() {
		t.Error("Skip did not pass over a well-formed object")
	}
	s.Reset([]byte(`{"a":[1,}`))
	s.Skip()
	if !s.Failed() {
		t.Error("Skip passed over a malformed object")
	}
	s.Reset([]byte(`1e400`))
	if s.Float(64); !s.Failed() {
		t.Error("Float took a number out of range")
	}
	s.Reset([]byte(`3.4028235e38`))
	if f := s.Float(32); s.Failed() || float32(f) != math.MaxFloat32 {
		t.Errorf("Float(32) = %v", f)
	}
}

// TestAppend writes what encoding/json writes.
func TestAppend(t *testing.T) {
	for _, v := range []string{"", "a\"b\\c", "\x00\x1f\x7f", "<&>", "\u2028\u2029", "bad \xff byte", "😀", "\b\f\n\r\t"} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // as the sinks write
		enc.Encode(v)
		want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := AppendString(nil, v); !bytes.Equal(got, want) {
			t.Errorf("AppendString(%q) = %s, encoding/json %s", v, got, want)
		}
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, 1e21, 1e20, 1e-6, 1e-7, 123.456, -2.5e-9} {
		want, _ := json.Marshal(f)
		if got, ok := AppendFloat(nil, f, 64); !ok || string(got) != string(want) {
			t.Errorf("AppendFloat(%v) = %s, encoding/json %s", f, got, want)
		}
	}
	if _, ok := AppendFloat(nil, math.NaN(), 64); ok {
		t.Error("AppendFloat wrote NaN")
	}
}

// BenchmarkScanStrings reads lines of JSON whose strings a decoder skips
// (fields it does not know: a Nexmark bid's extra field, 150 letters)
// or unescapes (text with a line break every 50 bytes).
func BenchmarkScanStrings(b *testing.B) {
	text := strings.Repeat("abcdefghij klmnopqrstuvwxyz", 6)[:150]
	skip := []byte(`{"auction":1001,"extra":"` + text + `","channel":"` + text[:40] + `"}`)
	escaped := []byte(`"` + strings.ReplaceAll(strings.Repeat(text[:50]+"|", 3), "|", `\n`) + `"`)
	b.Run("skip", func(b *testing.B) {
		b.SetBytes(int64(len(skip)))
		var s Scanner
		for b.Loop() {
			s.Reset(skip)
			s.Skip()
			if !s.End() {
				b.Fatal("failed")
			}
		}
	})
	b.Run("unescape", func(b *testing.B) {
		b.SetBytes(int64(len(escaped)))
		var s Scanner
		for b.Loop() {
			s.Reset(escaped)
			if len(s.String()) != 153 || !s.End() {
				b.Fatal("failed")
			}
		}
	})
}
