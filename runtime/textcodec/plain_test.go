package textcodec

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestPlainPrefixEveryPlace puts each kind of byte a JSON string cannot
// hold as it is at every place of strings across two words, and checks
// the word-at-a-time scan against a byte at a time.
func TestPlainPrefixEveryPlace(t *testing.T) {
	for c := range 256 {
		for n := range 20 {
			for at := range n {
				b := []byte(strings.Repeat("a~ !#[]\x7f", 3)[:n])
				b[at] = byte(c)
				want := 0
				for want < len(b) && plain[b[want]] {
					want++
				}
				if got := plainPrefix(b); got != want {
					t.Fatalf("plainPrefix(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
}

// TestStringsAsEncodingJSON writes, reads and skips strings with
// escapes, invalid and multi-byte UTF-8 at every place across two words
// as encoding/json does.
func TestStringsAsEncodingJSON(t *testing.T) {
	for _, odd := range []string{"\"", "\\", "\x00", "\x1f", "\n", "é", "\u2028", "😀", "\xff", "\xe2\x80"} {
		for n := range 20 {
			for at := 0; at <= n; at++ {
				base := strings.Repeat("abcdefgh", 3)[:n]
				sameString(t, base[:at]+odd+base[at:])
			}
		}
	}
}

// FuzzStrings checks AppendString, Scanner.String and Scanner.Skip
// against encoding/json on any string.
func FuzzStrings(f *testing.F) {
	for _, s := range []string{"", "plain ascii text of some length", "a\"b\\c\x00", "é\u2028\xff😀"} {
		f.Add(s)
	}
	f.Fuzz(sameString)
}

func sameString(t *testing.T, v string) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // as the sinks write
	enc.Encode(v)
	want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	got := AppendString(nil, v)
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendString(%q) = %s, encoding/json %s", v, got, want)
	}
	// What AppendString wrote reads back as encoding/json reads it. Any
	// other input (v between quotes) may fail, left to encoding/json then
	// (invalid UTF-8, escapes of lone surrogates), but never reads
	// otherwise than encoding/json.
	for i, in := range [][]byte{want, []byte(`"` + v + `"`)} {
		var w string
		werr := json.Unmarshal(in, &w)
		var s Scanner
		s.Reset(in)
		r := s.String()
		s.End()
		switch {
		case i == 0 && s.Failed():
			t.Fatalf("Scanner.String(%s) failed, encoding/json read %q", in, w)
		case s.Failed():
		case werr != nil:
			t.Fatalf("Scanner.String(%s) = %q, encoding/json failed: %v", in, r, werr)
		case r != w:
			t.Fatalf("Scanner.String(%s) = %q, encoding/json %q", in, r, w)
		}
		// Skipped, as the value of a field the decoder does not know, it
		// is well formed exactly when encoding/json says so (which, for
		// a value it skips, does not look at its UTF-8).
		s.Reset(in)
		s.Skip()
		if ok := s.End(); ok != json.Valid(in) {
			t.Fatalf("Scanner.Skip(%s) took it as well formed: %v; encoding/json: %v", in, ok, !ok)
		}
	}
}

// BenchmarkPlainPrefix scans strings of Nexmark's sizes: a name, an
// email address, a bid's extra field.
func BenchmarkPlainPrefix(b *testing.B) {
	for _, n := range []int{12, 40, 150} {
		s := []byte(strings.Repeat("abcdefghij klmnopqrstuvwxyz", 10)[:n])
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				if plainPrefix(s) != n {
					b.Fatal("stopped early")
				}
			}
		})
	}
}
