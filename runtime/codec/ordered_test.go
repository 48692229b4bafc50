package codec

import (
	"bytes"
	"math"
	"slices"
	"testing"
)

func TestOrderedStrings(t *testing.T) {
	vals := []string{"", "\x00", "\x00\x00", "\x00\x01", "\x00\xff", "a", "a\x00", "a\x00b", "ab", "b", "\xff"}
	var encs [][]byte
	for _, s := range vals {
		w := NewWriter(nil)
		w.OrderedString(s)
		w.Uvarint(7) // what follows is not read into the string
		r := NewReader(w.Bytes())
		if got := r.OrderedString(); got != s || r.Uvarint() != 7 || r.Err() != nil {
			t.Fatalf("%q: read back %q (%v)", s, got, r.Err())
		}
		w.Reset()
		w.OrderedString(s)
		encs = append(encs, slices.Clone(w.Bytes()))
	}
	for i := 1; i < len(encs); i++ {
		if bytes.Compare(encs[i-1], encs[i]) >= 0 {
			t.Errorf("%q encodes at or after %q", vals[i-1], vals[i])
		}
		if bytes.HasPrefix(encs[i], encs[i-1]) {
			t.Errorf("%q encodes as a prefix of %q", vals[i-1], vals[i])
		}
	}
	if r := NewReader([]byte("ab")); r.OrderedString() != "" || r.Err() == nil {
		t.Error("an unterminated string read without error")
	}
}

func TestOrderedInts(t *testing.T) {
	vals := []int64{math.MinInt64, -1 << 40, -2, -1, 0, 1, 255, 256, 1 << 40, math.MaxInt64}
	var prev []byte
	for _, x := range vals {
		w := NewWriter(nil)
		w.OrderedInt(x)
		if prev != nil && bytes.Compare(prev, w.Bytes()) >= 0 {
			t.Errorf("%d encodes at or before the value before it", x)
		}
		prev = slices.Clone(w.Bytes())
		if got := NewReader(w.Bytes()).OrderedInt(); got != x {
			t.Errorf("%d read back as %d", x, got)
		}
	}
}
