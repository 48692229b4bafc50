package pages

import (
	"runtime"
	"testing"
)

type rec struct {
	p *int
	a [5]int64
} // 48 bytes: records straddle pages

// TestTouchKeepsValues: Touch changes no element, within the length or in
// the room after it.
func TestTouchKeepsValues(t *testing.T) {
	x := 7
	s := make([]rec, 1000, 200000)
	for i := range s {
		s[i] = rec{p: &x, a: [5]int64{int64(i)}}
	}
	Touch(s)
	for i, r := range s {
		if r.p != &x || r.a[0] != int64(i) {
			t.Fatalf("record %d within the length changed: %+v", i, r)
		}
	}
	for i, r := range s[:cap(s)][len(s):] {
		if r != (rec{}) {
			t.Fatalf("record %d of the room is not zero: %+v", len(s)+i, r)
		}
	}
	Touch(s[:cap(s)]) // no room: nothing to do
	Touch([]struct{}{})
}

// TestCopy copies arrays shorter than, as long as and longer than
// a piece, into shorter and longer destinations, and checks every
// pointer after a collection.
func TestCopy(t *testing.T) {
	step := copyPiece / 48
	for _, n := range []int{0, 1, step - 1, step, step + 1, 3*step + 7} {
		src := make([]rec, n)
		for i := range src {
			v := i
			src[i] = rec{p: &v, a: [5]int64{int64(i), -int64(i)}}
		}
		for _, m := range []int{n, n / 2, n + 5} {
			dst := make([]rec, 0, m)
			Touch(dst)
			dst = dst[:m]
			if got, want := Copy(dst, src), min(m, n); got != want {
				t.Fatalf("n=%d m=%d: copied %d, want %d", n, m, got, want)
			}
			runtime.GC()
			for i := range dst {
				switch {
				case i < n && (dst[i].p == nil || *dst[i].p != i || dst[i].a[0] != int64(i) || dst[i].a[1] != -int64(i)):
					t.Fatalf("n=%d m=%d: element %d is %+v", n, m, i, dst[i])
				case i >= n && dst[i] != (rec{}):
					t.Fatalf("n=%d m=%d: element %d past the source is %+v", n, m, i, dst[i])
				}
			}
		}
	}
}
